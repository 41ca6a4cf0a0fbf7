package agui_test

import (
	"path/filepath"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
)

// BenchmarkObserve is the checker's cost per event on recorded streams of the reference
// runtime (text and reasoning deltas; parallel tool calls), against the script, a fresh checker
// per stream as the load generator makes one.
func BenchmarkObserve(b *testing.B) {
	for _, name := range []string{"thinking-answer", "parallel-tools"} {
		b.Run(name, func(b *testing.B) {
			rec, err := protocol.ReadRecording(filepath.Join("testdata", "runtime", name+".frames"))
			if err != nil {
				b.Fatal(err)
			}
			s, err := rec.Session("")
			if err != nil {
				b.Fatal(err)
			}
			events := dialecttest.DecodeAll(b, rec.Frames)
			b.ReportAllocs()
			for b.Loop() {
				c := agui.NewChecker(s, false)
				for i := range events {
					c.Observe(&events[i])
				}
				if v := c.Finish(nil); len(v) != 0 {
					b.Fatal(v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
		})
	}
}
