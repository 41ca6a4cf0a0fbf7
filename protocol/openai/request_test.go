package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

// TestNewRequestMaxTokensFields: MaxTokens goes in the field MaxTokensField names, min_tokens
// and ignore_eos only when asked, and the mock's parser reads the length back from each.
func TestNewRequestMaxTokensFields(t *testing.T) {
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
		hr, err := Wire{}.NewRequest(context.Background(), "http://x", &protocol.ModelRequest{Model: "m",
			Messages: []protocol.Message{{Role: "user", Text: "hi"}}, MaxTokens: 12, MaxTokensField: tc.field, MinTokens: tc.minTokens, IgnoreEOS: tc.ignoreEOS})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(hr.Body)
		if !bytes.HasSuffix(body, []byte(`"stream_options":{"include_usage":true},`+tc.want)) {
			t.Errorf("field %q: body %s, want it to end %s", tc.field, body, tc.want)
		}
		parsed, err := ParseRequest(body)
		if err != nil || parsed.MaxTokens != 12 {
			t.Errorf("field %q: ParseRequest = %+v, %v; want max tokens 12", tc.field, parsed, err)
		}
	}
}

func TestNewRequestErrors(t *testing.T) {
	t.Parallel()
	wiretest.RequestErrors(t, Wire{}, []wiretest.RequestError{
		// A tool result must name its call.
		{Name: "tool without id", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "tool", Text: "x"}}}, WantErr: "messages[0]: tool result without a tool call id"},
		// Roles are limited to the three the runtime uses.
		{Name: "bad role", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "user"}, {Role: "developer"}}}, WantErr: `messages[1]: unknown role "developer"`},
		// The max tokens field is one of three names.
		{Name: "bad field", Req: protocol.ModelRequest{MaxTokens: 3, MaxTokensField: "max_new_tokens"}, WantErr: `max tokens field "max_new_tokens"`},
	})
}

func TestWriteErrorParseError(t *testing.T) {
	t.Parallel()
	wiretest.ErrorAnswers(t, Wire{}, []wiretest.ErrorAnswer{
		{
			// The mock's own error shape round-trips.
			Name: "rate limit",
			Handler: func(w http.ResponseWriter, _ *http.Request) {
				WriteError(w, 429, "rate_limit_error", "Rate limit reached")
			},
			JSON: true,
			Want: protocol.ProviderError{Status: 429, Type: "rate_limit_error", Message: "Rate limit reached"},
		},
		{
			// A body that is not the API's JSON is kept as the message.
			Name: "plain text",
			Handler: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "upstream connect error", http.StatusBadGateway)
			},
			Want: protocol.ProviderError{Status: 502, Type: "server_error", Message: "upstream connect error"},
		},
		{
			// An empty body falls back to the status text.
			Name:    "empty",
			Handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) },
			Want:    protocol.ProviderError{Status: 503, Type: "server_error", Message: "Service Unavailable"},
		},
		{
			// A huge body is read only up to 64 KiB.
			Name: "huge body",
			Handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(strings.Repeat("x", 200<<10)))
			},
			Want: protocol.ProviderError{Status: 400, Type: "invalid_request_error", Message: strings.Repeat("x", 64<<10)},
		},
	})
}

func TestWriteResponse(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := WriteResponse(&b, smallTurn(), testMeta); err != nil {
		t.Fatal(err)
	}
	wiretest.CheckGolden(t, *update, "response_tools.golden", []byte(b.String()))
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
