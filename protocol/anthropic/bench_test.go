package anthropic

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

// BenchmarkStreamWriterToolStep measures writing one tool-arguments frame.
func BenchmarkStreamWriterToolStep(b *testing.B) {
	turn := smallTurn()
	w := NewStreamWriter(io.Discard, testMeta, true)
	wiretest.BenchWrite(b, w, turn, turn.Steps[5:6], func() {
		w.tools[0].written, w.tools[0].open = 0, true // keep the block open: measure the delta alone
	})
}
