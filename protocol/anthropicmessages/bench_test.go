package anthropicmessages

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/clienttest"
)

func newWriter(w io.Writer) clienttest.TurnWriter {
	return anthropic.NewStreamWriter(w, anthropic.StreamMeta{ID: "bench-1", Model: "m", Created: 1}, true)
}

// BenchmarkObserve judges a whole 256-frame answer against its ground truth per op (a fresh
// checker each time, as the load generator makes one per stream) and reports the cost and
// allocations per frame: the checker's setup is the only allocation, none per frame.
func BenchmarkObserve(b *testing.B) {
	turn := clienttest.TextTurn(256)
	events := clienttest.Events(b, newWriter, turn)
	s := clienttest.TextSession(turn)
	b.ReportAllocs()
	for b.Loop() {
		c := NewChecker(s)
		for i := range events {
			c.Observe(&events[i])
		}
		if vs := c.Finish(nil); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/frame")
}

// BenchmarkObserveFrame judges one text frame per op on a warm checker without ground truth
// (a cursor would run out of script): 0 allocs/op.
func BenchmarkObserveFrame(b *testing.B) {
	turn := clienttest.TextTurn(16)
	events := clienttest.Events(b, newWriter, turn)
	s := clienttest.TextSession(turn)
	s.NoGroundTruth = true
	c := NewChecker(s)
	for i := 0; i < 3; i++ {
		c.Observe(&events[i]) // start, first blocks: the per-stream setup
	}
	frame := &events[3]
	b.ReportAllocs()
	for b.Loop() {
		c.Observe(frame)
	}
}
