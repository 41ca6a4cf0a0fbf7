package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

func TestAnthropicStreamGolden(t *testing.T) {
	t.Parallel()
	errTurn := SmallTurn("toolu_")
	errTurn.ErrorAfterStep = 2
	errTurn.ErrorMessage = "Overloaded"
	tests := []struct {
		name string
		turn *scenarios.ScriptTurn
	}{
		// Thinking, text and two tool calls.
		{"turn.golden", SmallTurn("toolu_")},
		// An error event after the first text piece ends the stream.
		{"error_midstream.golden", errTurn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := anthropicTurn(t, tt.turn, anthropicMeta)
			golden.Check(t, "testdata/anthropic/"+tt.name, got)
			// Every data line is one valid JSON object whose type is the event name.
			lines := strings.Split(string(got), "\n")
			for i, line := range lines {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				var v struct{ Type string }
				if err := json.Unmarshal([]byte(data), &v); err != nil {
					t.Errorf("invalid JSON frame: %s", data)
				}
				if i == 0 || lines[i-1] != "event: "+v.Type {
					t.Errorf("data of type %q not preceded by its event line", v.Type)
				}
			}
		})
	}
}

func TestAnthropicStreamWriterPing(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := anthropic.NewStreamWriter(&buf, anthropicMeta, true)
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "event: ping\ndata: {\"type\":\"ping\"}\n\n" {
		t.Errorf("ping = %q", buf.String())
	}
}

func TestAnthropicWriteResponse(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := anthropic.WriteResponse(&b, SmallTurn("toolu_"), anthropicMeta); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/anthropic/response_tools.golden", []byte(b.String()))
	var resp struct {
		Content []struct {
			Type, Text, Thinking, Signature, ID, Name string
			Input                                     json.RawMessage
		}
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &resp); err != nil {
		t.Fatal(err)
	}
	c := resp.Content
	if len(c) != 4 || c[0].Thinking != "Let me think \"hard\"." || c[0].Signature == "" || c[1].Text != "Checking two sources…\n" ||
		c[3].Type != "tool_use" || string(c[3].Input) != `{"url":"https://x.test/?a=1&b=<2>"}` || resp.StopReason != "tool_use" ||
		resp.Usage.InputTokens != 42 || resp.Usage.OutputTokens != 17 {
		t.Errorf("response = %s", b.String())
	}
	bad := SmallTurn("toolu_")
	bad.ToolCalls[1].Arguments = `[1]`
	if err := anthropic.WriteResponse(io.Discard, bad, anthropicMeta); err == nil || !strings.Contains(err.Error(), "tool call 1 (fetch_url): arguments are not a JSON object") {
		t.Errorf("error = %v", err)
	}
}

func TestOpenAIStreamGolden(t *testing.T) {
	t.Parallel()
	errTurn := SmallTurn("call_")
	errTurn.ErrorAfterStep = 2
	errTurn.ErrorMessage = "The server had an error while processing your request."
	tests := []struct {
		name         string
		turn         *scenarios.ScriptTurn
		includeUsage bool
	}{
		// Thinking, text and two tool calls, with the usage chunk.
		{"turn_usage.golden", SmallTurn("call_"), true},
		// The same turn without stream_options.include_usage: no usage chunk, no usage:null.
		{"turn_nousage.golden", SmallTurn("call_"), false},
		// An error frame after the first text piece ends the stream.
		{"error_midstream.golden", errTurn, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := openaiTurn(t, tt.turn, openaiMeta, tt.includeUsage)
			golden.Check(t, "testdata/openai/"+tt.name, got)
			// Every data line but [DONE] must be one valid JSON object.
			for _, line := range strings.Split(string(got), "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if ok && data != "[DONE]" && !json.Valid([]byte(data)) {
					t.Errorf("invalid JSON frame: %s", data)
				}
			}
		})
	}
}

func TestOpenAIStreamWriterPing(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := openai.NewStreamWriter(&buf, openaiMeta, false)
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != ": ping\n\n" {
		t.Errorf("ping = %q", buf.String())
	}
}

// TestNewRequestMaxTokensFields: MaxTokens goes in the field MaxTokensField names, min_tokens
// and ignore_eos only when asked, and the mock's parser reads the length back from each.
func TestOpenAINewRequestMaxTokensFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field     string
		minTokens int
		ignoreEOS bool
		want      string // the body's length fields, in encoding order
	}{
		{"", 0, false, `"max_tokens":12}`},                                                                             // the default
		{protocol.MaxTokensField, 0, false, `"max_tokens":12}`},                                                        // named
		{protocol.MaxCompletionTokensField, 0, false, `"max_completion_tokens":12}`},                                   // OpenAI's newer name alone
		{protocol.BothMaxTokensFields, 0, false, `"max_tokens":12,"max_completion_tokens":12}`},                        // both
		{protocol.MaxCompletionTokensField, 12, true, `"max_completion_tokens":12,"min_tokens":12,"ignore_eos":true}`}, // vLLM's fixed length
	} {
		hr, err := openai.Wire{}.NewRequest(context.Background(), "http://x", &protocol.ModelRequest{Model: "m",
			Messages: []protocol.Message{{Role: "user", Text: "hi"}}, MaxTokens: 12, MaxTokensField: tc.field, MinTokens: tc.minTokens, IgnoreEOS: tc.ignoreEOS})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(hr.Body)
		if !bytes.HasSuffix(body, []byte(`"stream_options":{"include_usage":true},`+tc.want)) {
			t.Errorf("field %q: body %s, want it to end %s", tc.field, body, tc.want)
		}
		parsed, err := openai.ParseRequest(body)
		if err != nil || parsed.MaxTokens != 12 {
			t.Errorf("field %q: ParseRequest = %+v, %v; want max tokens 12", tc.field, parsed, err)
		}
	}
}

func TestOpenAIWriteResponse(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := openai.WriteResponse(&b, SmallTurn("call_"), openaiMeta); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/openai/response_tools.golden", []byte(b.String()))
	var resp struct {
		Choices []struct {
			Message struct {
				Content          *string `json:"content"`
				ReasoningContent string  `json:"reasoning_content"`
				ToolCalls        []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
		Usage struct {
			PromptTokens, CompletionTokens, TotalTokens int
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &resp); err != nil {
		t.Fatal(err)
	}
	m := resp.Choices[0].Message
	if m.Content == nil || *m.Content != "Checking two sources…\n" || m.ReasoningContent != "Let me think \"hard\"." ||
		len(m.ToolCalls) != 2 || m.ToolCalls[1].Function.Arguments != `{"url":"https://x.test/?a=1&b=<2>"}` ||
		resp.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("response = %s", b.String())
	}
}
