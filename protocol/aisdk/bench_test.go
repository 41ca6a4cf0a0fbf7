package aisdk

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/sse"
)

// BenchmarkObserve is the checker's cost per part on a long answer (text deltas) and on a
// tool-heavy stream, against the script: no allocation per text delta, since the load
// generator pays it on every token of every stream.
func BenchmarkObserve(b *testing.B) {
	for _, name := range []string{"long-answer", "parallel-tools"} {
		b.Run(name, func(b *testing.B) {
			script := dialecttest.Script(b, name, 1)
			parts := scriptParts(script, true, false)
			events := make([]sse.Event, len(parts))
			for i, p := range parts {
				events[i] = sse.Event{Data: []byte(p)}
			}
			s := &protocol.Session{Expected: script.Expected()}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c := NewChecker(s, Options{})
				for i := range events {
					c.Observe(&events[i])
				}
				if v := c.Finish(nil); len(v) != 0 {
					b.Fatal(v)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/part")
		})
	}
}

// TestObserveTextDeltaAllocs pins the benchmark's point: judging a text delta allocates nothing.
func TestObserveTextDeltaAllocs(t *testing.T) {
	script := dialecttest.Script(t, "long-answer", 1)
	s := &protocol.Session{Expected: script.Expected()}
	c := NewChecker(s, Options{})
	c.Observe(&sse.Event{Data: []byte(part("type", "start"))})
	c.Observe(&sse.Event{Data: []byte(part("type", "text-start", "id", "t"))})
	var frames []sse.Event
	for _, st := range script.Turns[0].Steps {
		frames = append(frames, sse.Event{Data: []byte(part("type", "text-delta", "id", "t", "delta", st.Text))})
	}
	i := 0
	allocs := testing.AllocsPerRun(len(frames)-1, func() {
		if obs := c.Observe(&frames[i]); obs.Kind != protocol.FrameAnswer {
			t.Fatalf("part %d: %v", i, obs)
		}
		i++
	})
	if allocs != 0 {
		t.Errorf("Observe(text-delta) allocates %.2f times per part, want 0", allocs)
	}
	if v := c.v.List(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}
