package wiretest

import (
	"io"
	"testing"

	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/openai"
)

// BenchmarkAnthropicStreamWriterStep measures writing one text frame (one op = one Step).
func BenchmarkAnthropicStreamWriterStep(b *testing.B) {
	turn := TextTurn(256)
	BenchWrite(b, anthropic.NewStreamWriter(io.Discard, anthropicMeta, true), turn, turn.Steps, nil)
}

// BenchmarkAnthropicDecodeTextTurn decodes a whole 256-frame text turn per op and reports ns/frame.
func BenchmarkAnthropicDecodeTextTurn(b *testing.B) {
	BenchDecode(b, anthropicTurn(b, TextTurn(256), anthropicMeta), anthropic.Wire{}.NewStream)
}

// BenchmarkOpenAIStreamWriterStep measures writing one text frame (one op = one Step).
func BenchmarkOpenAIStreamWriterStep(b *testing.B) {
	turn := TextTurn(256)
	BenchWrite(b, openai.NewStreamWriter(io.Discard, openaiMeta, true), turn, turn.Steps, nil)
}

// BenchmarkOpenAIStreamWriterToolStep measures writing one tool-arguments frame.
func BenchmarkOpenAIStreamWriterToolStep(b *testing.B) {
	turn := SmallTurn("call_")
	BenchWrite(b, openai.NewStreamWriter(io.Discard, openaiMeta, true), turn, turn.Steps[5:6], nil)
}

// BenchmarkOpenAIDecodeTextTurn decodes a whole 256-frame text turn per op and reports ns/frame.
func BenchmarkOpenAIDecodeTextTurn(b *testing.B) {
	BenchDecode(b, openaiTurn(b, TextTurn(256), openaiMeta, true), openai.Wire{}.NewStream)
}
