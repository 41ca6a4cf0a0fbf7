package anthropic

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

func TestParseRequest(t *testing.T) {
	t.Parallel()
	wiretest.ParseRequests(t, ParseRequest, []wiretest.ParseCase[Request]{
		{
			// String content, streaming, with a system prompt (ignored).
			Name: "string content",
			Body: `{"model":"m","max_tokens":100,"stream":true,"system":"be brief","messages":[{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			Want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]", MaxTokens: 100},
		},
		{
			// Array-of-blocks content joins the text blocks and skips images.
			Name: "block content",
			Body: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image","source":{"type":"base64"}},{"type":"text","text":"b"}]}]}`,
			Want: Request{Model: "m", IncludeUsage: true, LastUserText: "a b", MaxTokens: 1},
		},
		{
			// A tool loop: assistant turns counted, tool_result-only user messages skipped for the text.
			Name: "tool results",
			Body: `{"model":"m","max_tokens":2048,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[
				{"role":"user","content":"first"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r","is_error":true}]},
				{"role":"assistant","content":[{"type":"text","text":"pre"},{"type":"tool_use","id":"t2","name":"f","input":{"a":1}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"r2"}]}]}]}`,
			Want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "first", AssistantTurns: 2, Thinking: true, MaxTokens: 2048},
		},
		{
			// Disabled thinking is not thinking.
			Name: "thinking disabled",
			Body: `{"model":"m","max_tokens":5,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"}]}`,
			Want: Request{Model: "m", IncludeUsage: true, LastUserText: "x", MaxTokens: 5},
		},
		// Missing messages.
		{Name: "missing messages", Body: `{"model":"m","max_tokens":5}`, WantErr: "messages: required"},
		// Missing model.
		{Name: "missing model", Body: `{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, WantErr: "model: required"},
		// Missing max_tokens.
		{Name: "missing max_tokens", Body: `{"model":"m","messages":[{"role":"user","content":"x"}]}`, WantErr: "max_tokens: required"},
		// max_tokens below one.
		{Name: "zero max_tokens", Body: `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, WantErr: "max_tokens: must be at least 1, got 0"},
		// Content of the wrong type names the message index.
		{Name: "content number", Body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":42}]}`, WantErr: "messages[2].content: expected string or array of content blocks"},
		// Missing content.
		{Name: "missing content", Body: `{"model":"m","max_tokens":5,"messages":[{"role":"user"}]}`, WantErr: "messages[0].content: required"},
		// A block without a type.
		{Name: "block without type", Body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"text":"x"}]}]}`, WantErr: "messages[0].content: [0].type: required"},
		// A system role inside messages is refused, as the API does.
		{Name: "system role", Body: `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, WantErr: `messages[0].role: expected "user" or "assistant", got "system"`},
		// A top-level field of the wrong type names the field.
		{Name: "max_tokens string", Body: `{"model":"m","max_tokens":"5","messages":[{"role":"user","content":"x"}]}`, WantErr: "request body: max_tokens: expected int, got JSON string"},
		// Not JSON.
		{Name: "not json", Body: `{"model":`, WantErr: "request body: invalid JSON at byte 9: unexpected end of JSON input"},
		// Empty body.
		{Name: "empty body", Body: ` `, WantErr: "request body: empty, want a JSON object"},
		// Invalid UTF-8 in a string: refused with its offset, not decoded as U+FFFD.
		{Name: "bad utf-8", Body: "{\"model\":\"m\xff\"}", WantErr: "request body: not valid UTF-8 at byte 11"},
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":"b"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":{}}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":-1,"messages":null}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`))
	f.Add([]byte("{\"model\":\"m\",\"max_tokens\":1,\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}"))
	f.Add([]byte(`{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"a"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1.5,"messages":[{"role":"user","content":"a"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a"}]}`))
	f.Add([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"a"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		wiretest.FuzzParse(t, body, ParseRequest, requestOracle, func(req *Request, v wiretest.Verdict, assistants int) bool {
			return req.Model == "" || !req.IncludeUsage || v == wiretest.Valid && req.AssistantTurns != assistants
		})
	})
}

// requestOracle reads a Messages body without ParseRequest; the wire's own: max_tokens required,
// at least 1, an integer in the plain shape; no role but user and assistant.
var requestOracle = wiretest.MessagesOracle{
	Keys:  []string{"model", "max_tokens", "messages", "stream"},
	Roles: []string{"user"},
	Extra: func(ms []wiretest.Member) (plain bool, why string) {
		switch maxTokens, _ := wiretest.Field(ms, "max_tokens"); n := maxTokens.(type) {
		case nil:
			return false, "no max_tokens"
		case float64:
			if n < 1 {
				return false, "max_tokens below 1"
			}
			return n == math.Trunc(n) && n <= 1<<53, ""
		default:
			return false, "max_tokens not a number"
		}
	},
}

func TestNewRequest(t *testing.T) {
	t.Parallel()
	req := &protocol.ModelRequest{
		Model: "sim-model",
		Messages: []protocol.Message{
			{Role: "user", Text: "hi [[streambench scenario=x seed=1]]"},
			{Role: "assistant", Text: "Let me look.", ToolCalls: []protocol.ToolCall{
				{ID: "toolu_1", Name: "search_call", Arguments: `{"q":"a"}`},
				{ID: "toolu_2", Name: "fetch_url", Arguments: ``},
			}},
			{Role: "tool", ToolCallID: "toolu_1", Text: "found"},
			{Role: "tool", ToolCallID: "toolu_2", Text: "failed", IsError: true},
			{Role: "user", Text: "and then?"},
			{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "toolu_3", Name: "search_call", Arguments: `{}`}}},
			{Role: "tool", ToolCallID: "toolu_3", Text: "ok"},
		},
		Tools:    []string{"search_call"},
		Thinking: true,
		Header:   http.Header{"X-Streambench-Scenario": {"x"}, "X-Api-Key": {"real-key"}},
	}
	c := wiretest.Send(t, Wire{}, "", req, "/v1/messages", map[string]string{
		"Content-Type": "application/json", "Anthropic-Version": "2023-06-01",
		"X-Streambench-Scenario": "x", "X-Api-Key": "real-key",
	})
	want := `{"model":"sim-model","max_tokens":4096,"messages":[` +
		`{"role":"user","content":[{"type":"text","text":"hi [[streambench scenario=x seed=1]]"}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"Let me look."},` +
		`{"type":"tool_use","id":"toolu_1","name":"search_call","input":{"q":"a"}},` +
		`{"type":"tool_use","id":"toolu_2","name":"fetch_url","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"found"},` +
		`{"type":"tool_result","tool_use_id":"toolu_2","content":"failed","is_error":true},` +
		`{"type":"text","text":"and then?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"search_call","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3","content":"ok"}]}],` +
		`"stream":true,"tools":[{"name":"search_call","input_schema":{"type":"object"}}],` +
		`"thinking":{"type":"enabled","budget_tokens":1024}}`
	if string(c.Body) != want {
		t.Errorf("body\ngot:  %s\nwant: %s", c.Body, want)
	}
	// The mock's parser reads what the runtime sends.
	parsed, err := ParseRequest(c.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantParsed := Request{Model: "sim-model", Stream: true, IncludeUsage: true, LastUserText: "and then?", AssistantTurns: 2, Thinking: true, MaxTokens: 4096}
	if *parsed != wantParsed {
		t.Errorf("ParseRequest of NewRequest's body = %+v, want %+v", *parsed, wantParsed)
	}
}

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
