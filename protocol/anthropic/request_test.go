package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

func TestNewRequestErrors(t *testing.T) {
	t.Parallel()
	wiretest.RequestErrors(t, Wire{}, []wiretest.RequestError{
		// A tool result must name its call.
		{Name: "tool without id", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "tool", Text: "x"}}}, WantErr: "messages[0]: tool result without a tool call id"},
		// Roles are limited to the three the runtime uses.
		{Name: "bad role", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "user"}, {Role: "developer"}}}, WantErr: `messages[1]: unknown role "developer"`},
		// Tool arguments must be JSON to become a tool_use input.
		{Name: "bad arguments", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "t", Name: "f", Arguments: `{"a":`}}}}}, WantErr: "messages[0].tool_calls[0] (f): arguments are not valid JSON"},
	})
}

func TestWriteErrorParseError(t *testing.T) {
	t.Parallel()
	wiretest.ErrorAnswers(t, Wire{}, []wiretest.ErrorAnswer{
		{
			// The mock's own error shape round-trips.
			Name: "rate limit",
			Handler: func(w http.ResponseWriter, _ *http.Request) {
				WriteError(w, 429, "rate_limit_error", "Number of requests has exceeded your rate limit")
			},
			JSON: true,
			Want: protocol.ProviderError{Status: 429, Type: "rate_limit_error", Message: "Number of requests has exceeded your rate limit"},
		},
		{
			// A body that is not the API's JSON is kept as the message.
			Name:    "plain text",
			Handler: func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "bad gateway", http.StatusBadGateway) },
			Want:    protocol.ProviderError{Status: 502, Type: "api_error", Message: "bad gateway"},
		},
		{
			// An empty 529 is the API's overloaded status.
			Name:    "overloaded",
			Handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(529) },
			Want:    protocol.ProviderError{Status: 529, Type: "overloaded_error", Message: ""},
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
	bad := smallTurn()
	bad.ToolCalls[1].Arguments = `[1]`
	if err := WriteResponse(io.Discard, bad, testMeta); err == nil || !strings.Contains(err.Error(), "tool call 1 (fetch_url): arguments are not a JSON object") {
		t.Errorf("error = %v", err)
	}
}
