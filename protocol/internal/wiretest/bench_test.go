package wiretest

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/openai"
)

// BenchmarkStreamWriterStep measures, on every wire, writing one text frame (one op = one Step).
func BenchmarkStreamWriterStep(b *testing.B) {
	for _, pw := range providerWires {
		b.Run(pw.name, func(b *testing.B) {
			turn := TextTurn(256)
			BenchWrite(b, pw.newWriter(io.Discard, jsonwire.StreamMeta{ID: pw.idPrefix + "test1", Model: "sim-model"}), turn, turn.Steps, nil)
		})
	}
}

// BenchmarkDecodeTextTurn decodes, on every wire, a whole 256-frame text turn per op and
// reports ns/frame.
func BenchmarkDecodeTextTurn(b *testing.B) {
	for _, pw := range providerWires {
		b.Run(pw.name, func(b *testing.B) {
			BenchDecode(b, pw.frames(b, TextTurn(256), jsonwire.StreamMeta{ID: pw.idPrefix + "test1", Model: "sim-model"}), pw.wire.NewStream)
		})
	}
}

// BenchmarkOpenAIStreamWriterToolStep measures writing one tool-arguments frame.
func BenchmarkOpenAIStreamWriterToolStep(b *testing.B) {
	turn := SmallTurn("call_")
	BenchWrite(b, openai.NewStreamWriter(io.Discard, openaiMeta, true), turn, turn.Steps[5:6], nil)
}
