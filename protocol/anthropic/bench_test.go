package anthropic

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

// BenchmarkStreamWriterStep measures writing one text frame (one op = one Step).
func BenchmarkStreamWriterStep(b *testing.B) {
	turn := wiretest.TextTurn(256)
	wiretest.BenchWrite(b, NewStreamWriter(io.Discard, testMeta, true), turn, turn.Steps, nil)
}

// BenchmarkStreamWriterToolStep measures writing one tool-arguments frame.
func BenchmarkStreamWriterToolStep(b *testing.B) {
	turn := smallTurn()
	w := NewStreamWriter(io.Discard, testMeta, true)
	wiretest.BenchWrite(b, w, turn, turn.Steps[5:6], func() {
		w.tools[0].written, w.tools[0].open = 0, true // keep the block open: measure the delta alone
	})
}

// BenchmarkDecodeTextTurn decodes a whole 256-frame text turn per op and reports ns/frame.
func BenchmarkDecodeTextTurn(b *testing.B) {
	wiretest.BenchDecode(b, writeTurn(b, wiretest.TextTurn(256), testMeta), Wire{}.NewStream)
}
