package openai

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
	wiretest.BenchWrite(b, NewStreamWriter(io.Discard, testMeta, true), turn, turn.Steps[5:6], nil)
}

// BenchmarkDecodeTextTurn decodes a whole 256-frame text turn per op and reports ns/frame.
func BenchmarkDecodeTextTurn(b *testing.B) {
	wiretest.BenchDecode(b, writeTurn(b, wiretest.TextTurn(256), testMeta, true), Wire{}.NewStream)
}
