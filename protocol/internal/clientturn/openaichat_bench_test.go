package clientturn_test

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/openai"
)

func ocNewWriter(w io.Writer) TurnWriter {
	return openai.NewStreamWriter(w, openai.StreamMeta{ID: "bench-1", Model: "m", Created: 1}, true)
}

// BenchmarkOpenAIChatObserve judges a whole 256-frame answer against its ground truth per op (a fresh
// checker each time, as the load generator makes one per stream) and reports the cost and
// allocations per frame: the checker's setup is the only allocation, none per frame.
func BenchmarkOpenAIChatObserve(b *testing.B) {
	BenchObserve(b, ocNewWriter, ocNewChecker)
}

// BenchmarkOpenAIChatObserveFrame judges one text frame per op on a warm checker without ground truth
// (a cursor would run out of script): 0 allocs/op.
func BenchmarkOpenAIChatObserveFrame(b *testing.B) {
	BenchObserveFrame(b, ocNewWriter, ocNewChecker)
}
