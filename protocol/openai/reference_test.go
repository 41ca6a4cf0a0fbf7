package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/internal/wiretest"
	"github.com/streambench/streambench/sse"
)

// refChunk is the straightforward encoding/json shape of a chunk: the reference the fast
// scanner-based parser is checked against.
type refChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// refKeys are the keys refChunk knows; encoding/json matches them case-insensitively.
var refKeys = []string{"choices", "index", "delta", "content", "reasoning_content", "reasoning", "tool_calls", "id", "function",
	"name", "arguments", "finish_reason", "usage", "prompt_tokens", "completion_tokens", "error", "message", "type"}

// referenceUnmarshal decodes a frame with encoding/json into the same view.
func referenceUnmarshal(_ *jsonwire.Scanner, data []byte, v *Chunk) error {
	var c refChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return err
	}
	*v = Chunk{}
	if c.Error != nil {
		v.HasError, v.ErrorMessage, v.ErrorType = true, []byte(c.Error.Message), []byte(c.Error.Type)
	}
	if c.Usage != nil {
		v.HasUsage, v.PromptTokens, v.CompletionTokens = true, c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	for _, ch := range c.Choices {
		cv := Choice{Index: ch.Index, Content: []byte(ch.Delta.Content), ReasoningContent: []byte(ch.Delta.ReasoningContent),
			Reasoning: []byte(ch.Delta.Reasoning), FinishReason: []byte(ch.FinishReason)}
		for _, tc := range ch.Delta.ToolCalls {
			cv.ToolCalls = append(cv.ToolCalls, ToolCall{Index: tc.Index, ID: []byte(tc.ID), Name: []byte(tc.Function.Name), Args: []byte(tc.Function.Arguments)})
		}
		v.Choices = append(v.Choices, cv)
	}
	return nil
}

// streamOf is this wire's stream over data with the parser p picks.
func streamOf(data []byte, p wiretest.Parser) protocol.ModelStream {
	parse := wiretest.ParserOf(p, ParseChunk, referenceUnmarshal, refKeys)
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(bytes.NewReader(data))}, parse: parse}
}

// FuzzParserMatchesReference decodes arbitrary streams with the fast parser and with the
// encoding/json reference: the events and the way the stream ends must be identical.
func FuzzParserMatchesReference(f *testing.F) {
	f.Add(writeTurn(f, smallTurn(), testMeta, true))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\\u00e9\\ud800\",\"x\":[1,{}]},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"m\",\"type\":null,\"code\":5}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"reasoning\":\"r\",\"reasoning_content\":\"\"}}]}\n\n"))
	f.Add([]byte("data: {\"choices\":[null,{\"index\":1}],\"usage\":null}\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.AssertSameOutcome(t, data, streamOf) })
}

// BenchmarkDecodeTextTurnEncodingJSON is BenchmarkDecodeTextTurn with the encoding/json
// reference parser, to show what the scanner saves.
func BenchmarkDecodeTextTurnEncodingJSON(b *testing.B) {
	wiretest.BenchDecode(b, writeTurn(b, wiretest.TextTurn(256), testMeta, true), func(r io.Reader) protocol.ModelStream {
		return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(r)}, parse: referenceUnmarshal}
	})
}

// TestParserMatchesReferenceMutations runs wiretest.MutationSweep over a golden stream.
func TestParserMatchesReferenceMutations(t *testing.T) {
	t.Parallel()
	wiretest.MutationSweep(t, writeTurn(t, smallTurn(), testMeta, true), streamOf)
}
