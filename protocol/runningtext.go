package protocol

import (
	"hash/maphash"
	"strconv"
)

// RunningText is a stream's text as a checker needs it to compare with a whole copy that comes
// later (a done event, a state): its length and a running hash of all of it, and its first
// MaxRunningHead bytes for quoting. It is bounded whatever the stream sends, where keeping the
// text itself grew without end under a target that never stops (800 MiB in seconds).
type RunningText struct {
	n    int
	h    maphash.Hash
	head []byte
}

// MaxRunningHead is how much of a RunningText is kept as text.
const MaxRunningHead = 4 << 10

var runningSeed = maphash.MakeSeed()

// Append adds p to the text.
func (t *RunningText) Append(p []byte) {
	if t.n == 0 {
		t.h.SetSeed(runningSeed)
	}
	t.n += len(p)
	t.h.Write(p)
	if room := MaxRunningHead - len(t.head); room > 0 {
		t.head = append(t.head, p[:min(len(p), room)]...)
	}
}

// Len is the text's length in bytes.
func (t *RunningText) Len() int { return t.n }

// Head is the text's first MaxRunningHead bytes.
func (t *RunningText) Head() []byte { return t.head }

// Equal reports whether b is the text (by its length and hash).
func (t *RunningText) Equal(b []byte) bool {
	if len(b) != t.n {
		return false
	}
	if t.n == 0 {
		return true
	}
	return maphash.Bytes(runningSeed, b) == t.h.Sum64()
}

// FirstDiff says where b first differs from the text, as ", first differing at byte N" ("" when
// no difference is found within the head).
func (t *RunningText) FirstDiff(b []byte) string {
	for i := range min(len(b), len(t.head)) {
		if b[i] != t.head[i] {
			return ", first differing at byte " + strconv.Itoa(i)
		}
	}
	if len(b) > len(t.head) && len(t.head) == MaxRunningHead {
		return ", after the first " + strconv.Itoa(MaxRunningHead) + " bytes"
	}
	return ""
}
