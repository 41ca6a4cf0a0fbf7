package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrInvalidField means an event's Type or ID cannot be written as one SSE field line.
var ErrInvalidField = errors.New("sse: invalid field")

// Encoder writes events to an io.Writer, one Write call per event so events from one encoder
// are never interleaved mid-frame. Flushing (http.Flusher) is the caller's job. Not safe for
// concurrent use.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, buf: make([]byte, 0, 512)}
}

// Reset makes e write to w, keeping its buffer.
func (e *Encoder) Reset(w io.Writer) { e.w = w }

// Validate reports whether ev can be encoded: Type must not contain CR or LF, and ID must not
// contain CR, LF or NUL (a decoder ignores an id with NUL, so it would be silently lost).
func (ev *Event) Validate() error {
	if strings.ContainsAny(ev.Type, "\r\n") {
		return fmt.Errorf("%w: event type %q contains a line break", ErrInvalidField, ev.Type)
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		return fmt.Errorf("%w: event id %q contains a line break or NUL", ErrInvalidField, ev.ID)
	}
	return nil
}

// Encode writes ev as one frame: "event:" if Type is set, "id:" if ID is set, "retry:" if
// Retry is at least a millisecond, then the data lines and a blank line. Data is split into
// lines at LF, CRLF and lone CR (a decoder would split there anyway), so Data round-trips
// exactly when it has no CR. Empty Data is written as one empty data line, so the event is
// still dispatched.
func (e *Encoder) Encode(ev *Event) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	e.buf = AppendEvent(e.buf[:0], ev)
	return e.write()
}

// Data writes "data: p\n\n" (p split into several data lines at line breaks), the fast path
// for the common unnamed event.
func (e *Encoder) Data(p []byte) error {
	e.buf = appendData(e.buf[:0], p)
	e.buf = append(e.buf, '\n')
	return e.write()
}

// Comment writes text as comment lines (one ": " line per line of text) followed by a blank
// line, the usual heartbeat shape (": ping\n\n"). Decoders ignore comments; the blank line
// dispatches nothing because the encoder never leaves a partial event behind.
func (e *Encoder) Comment(text string) error {
	e.buf = e.buf[:0]
	for {
		line, rest, more := cutLine(text)
		e.buf = append(e.buf, ": "...)
		e.buf = append(e.buf, line...)
		e.buf = append(e.buf, '\n')
		if !more {
			break
		}
		text = rest
	}
	e.buf = append(e.buf, '\n')
	return e.write()
}

func (e *Encoder) write() error {
	if _, err := e.w.Write(e.buf); err != nil {
		return fmt.Errorf("sse: write event: %w", err)
	}
	return nil
}

// AppendEvent appends ev's wire form (as Encode writes it) to dst and returns the extended
// slice; it allocates only when dst must grow. It does not validate: call ev.Validate first
// unless Type and ID are known to be free of CR, LF and NUL (for example constants).
func AppendEvent(dst []byte, ev *Event) []byte {
	if ev.Type != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Type...)
		dst = append(dst, '\n')
	}
	if ev.ID != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, ev.ID...)
		dst = append(dst, '\n')
	}
	if ms := ev.Retry.Milliseconds(); ms > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, ms, 10)
		dst = append(dst, '\n')
	}
	dst = appendData(dst, ev.Data)
	return append(dst, '\n')
}

// appendData appends one "data: " line per line of p.
func appendData(dst, p []byte) []byte {
	if bytes.IndexByte(p, '\r') < 0 {
		// Fast path: LF is the only possible separator.
		for {
			dst = append(dst, "data: "...)
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				dst = append(dst, p...)
				return append(dst, '\n')
			}
			dst = append(dst, p[:i]...)
			dst = append(dst, '\n')
			p = p[i+1:]
		}
	}
	for {
		line, rest, more := cutLine(p)
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if !more {
			return dst
		}
		p = rest
	}
}

// cutLine splits s at its first line break (CRLF, LF or lone CR).
func cutLine[S string | []byte](s S) (line, rest S, found bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return s[:i], s[i+1:], true
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				return s[:i], s[i+2:], true
			}
			return s[:i], s[i+1:], true
		}
	}
	return s, s[len(s):], false
}
