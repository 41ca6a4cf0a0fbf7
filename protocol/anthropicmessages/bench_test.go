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
	clienttest.BenchObserve(b, newWriter, newChecker)
}

// BenchmarkObserveFrame judges one text frame per op on a warm checker without ground truth
// (a cursor would run out of script): 0 allocs/op.
func BenchmarkObserveFrame(b *testing.B) {
	clienttest.BenchObserveFrame(b, newWriter, newChecker)
}
