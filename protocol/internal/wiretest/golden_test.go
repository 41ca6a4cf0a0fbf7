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
	goldenStreams(t, "anthropic", map[string][]byte{
		// Thinking, text and two tool calls.
		"turn.golden": anthropicTurn(t, SmallTurn("toolu_"), anthropicMeta),
		// An error event after the first text piece ends the stream.
		"error_midstream.golden": anthropicTurn(t, errorTurn("toolu_", "Overloaded"), anthropicMeta),
	}, func(t *testing.T, lines []string) {
		// Every data line is one valid JSON object whose type is the event name.
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

// errorTurn is SmallTurn(toolIDPrefix) failing with message after its first text piece.
func errorTurn(toolIDPrefix, message string) *scenarios.ScriptTurn {
	turn := SmallTurn(toolIDPrefix)
	turn.ErrorAfterStep = 2
	turn.ErrorMessage = message
	return turn
}

// goldenStreams compares each named stream with its golden file in testdata/dir, then checks
// its lines with check.
func goldenStreams(t *testing.T, dir string, streams map[string][]byte, check func(t *testing.T, lines []string)) {
	for name, got := range streams {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			golden.Check(t, "testdata/"+dir+"/"+name, got)
			check(t, strings.Split(string(got), "\n"))
		})
	}
}

// goldenResponse is the response write writes, compared with the golden file at path and
// decoded into resp.
func goldenResponse(t *testing.T, path string, resp any, write func(w io.Writer) error) []byte {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, path, b.Bytes())
	if err := json.Unmarshal(b.Bytes(), resp); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestStreamWriterPing: each wire's keep-alive is the one its clients skip.
func TestStreamWriterPing(t *testing.T) {
	t.Parallel()
	var a, o bytes.Buffer
	for _, tc := range []struct {
		buf  *bytes.Buffer
		err  error
		want string
	}{
		{&a, anthropic.NewStreamWriter(&a, anthropicMeta, true).Ping(), "event: ping\ndata: {\"type\":\"ping\"}\n\n"},
		{&o, openai.NewStreamWriter(&o, openaiMeta, false).Ping(), ": ping\n\n"},
	} {
		if tc.err != nil {
			t.Fatal(tc.err)
		}
		if tc.buf.String() != tc.want {
			t.Errorf("ping = %q, want %q", tc.buf.String(), tc.want)
		}
	}
}

func TestAnthropicWriteResponse(t *testing.T) {
	t.Parallel()
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
	b := goldenResponse(t, "testdata/anthropic/response_tools.golden", &resp, func(w io.Writer) error {
		return anthropic.WriteResponse(w, SmallTurn("toolu_"), anthropicMeta)
	})
	c := resp.Content
	if len(c) != 4 || c[0].Thinking != "Let me think \"hard\"." || c[0].Signature == "" || c[1].Text != "Checking two sources…\n" ||
		c[3].Type != "tool_use" || string(c[3].Input) != `{"url":"https://x.test/?a=1&b=<2>"}` || resp.StopReason != "tool_use" ||
		resp.Usage.InputTokens != 42 || resp.Usage.OutputTokens != 17 {
		t.Errorf("response = %s", b)
	}
	bad := SmallTurn("toolu_")
	bad.ToolCalls[1].Arguments = `[1]`
	if err := anthropic.WriteResponse(io.Discard, bad, anthropicMeta); err == nil || !strings.Contains(err.Error(), "tool call 1 (fetch_url): arguments are not a JSON object") {
		t.Errorf("error = %v", err)
	}
}

func TestOpenAIStreamGolden(t *testing.T) {
	t.Parallel()
	goldenStreams(t, "openai", map[string][]byte{
		// Thinking, text and two tool calls, with the usage chunk.
		"turn_usage.golden": openaiTurn(t, SmallTurn("call_"), openaiMeta, true),
		// The same turn without stream_options.include_usage: no usage chunk, no usage:null.
		"turn_nousage.golden": openaiTurn(t, SmallTurn("call_"), openaiMeta, false),
		// An error frame after the first text piece ends the stream.
		"error_midstream.golden": openaiTurn(t, errorTurn("call_", "The server had an error while processing your request."), openaiMeta, true),
	}, func(t *testing.T, lines []string) {
		// Every data line but [DONE] must be one valid JSON object.
		for _, line := range lines {
			data, ok := strings.CutPrefix(line, "data: ")
			if ok && data != "[DONE]" && !json.Valid([]byte(data)) {
				t.Errorf("invalid JSON frame: %s", data)
			}
		}
	})
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
	b := goldenResponse(t, "testdata/openai/response_tools.golden", &resp, func(w io.Writer) error {
		return openai.WriteResponse(w, SmallTurn("call_"), openaiMeta)
	})
	m := resp.Choices[0].Message
	if m.Content == nil || *m.Content != "Checking two sources…\n" || m.ReasoningContent != "Let me think \"hard\"." ||
		len(m.ToolCalls) != 2 || m.ToolCalls[1].Function.Arguments != `{"url":"https://x.test/?a=1&b=<2>"}` ||
		resp.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("response = %s", b)
	}
}
