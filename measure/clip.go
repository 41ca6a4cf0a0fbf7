package measure

import (
	"fmt"
	"unicode/utf8"
)

// Bounds on the frames a run keeps of its violation samples, whatever a target sends: of one
// frame (the rest is Clipped), of one sample (later frames are counted, not kept), of the run's
// samples altogether (no further session is replayed).
const (
	MaxSampleFrameBytes = 64 << 10
	MaxSampleBytes      = 256 << 10
	MaxRunSampleBytes   = 4 << 20
)

// Clip cuts s to at most limit bytes at a UTF-8 boundary, marking how many were cut.
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
