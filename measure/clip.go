package measure

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on what a run keeps of its violation samples (ViolationSample), whatever a target
// sends: a hostile one can stream frames of up to a mebibyte each (sse.DefaultMaxEvent).
const (
	// MaxSampleFrameBytes is the most of one frame a sample keeps; the rest is cut (Clip).
	MaxSampleFrameBytes = 64 << 10
	// MaxSampleBytes is the most frame bytes one sample keeps; later frames are counted in a
	// last line, not kept. With the samples per rule (3 by default) it bounds a rule's.
	MaxSampleBytes = 256 << 10
	// MaxRunSampleBytes is the most frame bytes a run's samples keep altogether: once spent,
	// no further session is replayed for a sample (the run says how many were not).
	MaxRunSampleBytes = 4 << 20
)

// Clip returns s cut to at most limit bytes (at a UTF-8 boundary) followed by a marker
// saying how many bytes were cut, or s itself when it fits.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := max(limit, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("…[clipped: %d of %d bytes cut]", len(s)-n, len(s))
}

// SampleBytes is the frame bytes s keeps.
func (s *ViolationSample) SampleBytes() int {
	n := 0
	for _, f := range s.Frames {
		n += len(f)
	}
	return n
}
