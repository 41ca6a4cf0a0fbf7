package session

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/streambench/streambench/sse"
)

// A tape is what a stream received, bounded (its first tapeHead bytes and a ring of its last
// tapeTail), so a session that breaks a rule leaves its own frames as the sample. Frames are
// written as "event: T\ndata: D" with a blank line between two, so the ring's text can be cut
// back into frames (SSE data never holds a blank line). Tapes are pooled.
type tape struct {
	buf   [tapeHead + tapeTail]byte // the head, then the ring
	head  int                       // bytes of the head written
	ring  int                       // bytes ever written to the ring (the next goes at ring % tapeTail)
	total int64                     // bytes of frames and separators the stream carried
	seen  int                       // frames recorded
}

// tapeHead and tapeTail bound a tape, small because every open stream holds one.
const (
	tapeHead = 256
	tapeTail = 1024
)

var tapes = sync.Pool{New: func() any { return new(tape) }}

func (t *tape) record(ev *sse.Event) {
	if t.seen > 0 {
		t.write(sep)
	}
	t.seen++
	if ev.Type != "" {
		t.write(eventPrefix)
		t.write([]byte(ev.Type))
		t.write(newline)
	}
	t.write(dataPrefix)
	t.write(ev.Data)
}

var (
	sep         = []byte("\n\n")
	newline     = []byte("\n")
	eventPrefix = []byte("event: ")
	dataPrefix  = []byte("data: ")
)

// write appends b to the head while it has room and to the ring always.
func (t *tape) write(b []byte) {
	t.total += int64(len(b))
	if t.head < tapeHead {
		t.head += copy(t.buf[t.head:tapeHead], b)
	}
	ring := t.buf[tapeHead:]
	if len(b) > tapeTail {
		t.ring += len(b) - tapeTail
		b = b[len(b)-tapeTail:]
	}
	at := t.ring % tapeTail
	n := copy(ring[at:], b)
	copy(ring, b[n:])
	t.ring += len(b)
}

// frames is the tape as redacted frames: the whole stream, or its first and last complete frames
// around a line saying what was not kept (a frame cut by a bound is left out: half a secret would pass).
func (t *tape) frames(redact func(string) string) []string {
	if t == nil || t.seen == 0 {
		return nil
	}
	if redact == nil {
		redact = func(s string) string { return s }
	}
	if t.total == int64(t.head) {
		return split(redact(string(t.buf[:t.head])))
	}
	ring := t.buf[tapeHead:]
	tail := ring[:min(t.ring, tapeTail)]
	if t.ring > tapeTail {
		at := t.ring % tapeTail
		tail = append(append(make([]byte, 0, tapeTail), ring[at:]...), ring[:at]...)
	}
	if from := t.total - int64(len(tail)); from <= int64(t.head) {
		// Together, the head and the ring hold the whole stream.
		return split(redact(string(t.buf[:t.head]) + string(tail[int64(t.head)-from:])))
	}
	head := split(redact(string(t.buf[:t.head])))
	last := split(redact(string(tail)))
	out := head[:max(len(head)-1, 0)]
	out = append(out, fmt.Sprintf("…[%d bytes of frames not kept: a sample keeps the whole frames of a stream's first %d bytes and of its last %d]",
		t.total-int64(t.head)-int64(len(tail)), tapeHead, tapeTail))
	return append(out, last[min(1, len(last)):]...)
}

func split(s string) []string {
	var out []string
	for _, f := range bytes.Split([]byte(s), sep) {
		if len(f) > 0 {
			out = append(out, string(f))
		}
	}
	return out
}

func (t *tape) reset() { t.head, t.ring, t.total, t.seen = 0, 0, 0, 0 }
