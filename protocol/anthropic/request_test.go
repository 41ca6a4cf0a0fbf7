package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

func TestParseRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		want    Request
		wantErr string
	}{
		{
			// String content, streaming, with a system prompt (ignored).
			name: "string content",
			body: `{"model":"m","max_tokens":100,"stream":true,"system":"be brief","messages":[{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]", MaxTokens: 100},
		},
		{
			// Array-of-blocks content joins the text blocks and skips images.
			name: "block content",
			body: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image","source":{"type":"base64"}},{"type":"text","text":"b"}]}]}`,
			want: Request{Model: "m", IncludeUsage: true, LastUserText: "a b", MaxTokens: 1},
		},
		{
			// A tool loop: assistant turns counted, tool_result-only user messages skipped for the text.
			name: "tool results",
			body: `{"model":"m","max_tokens":2048,"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[
				{"role":"user","content":"first"},
				{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t1","name":"f","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r","is_error":true}]},
				{"role":"assistant","content":[{"type":"text","text":"pre"},{"type":"tool_use","id":"t2","name":"f","input":{"a":1}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"r2"}]}]}]}`,
			want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "first", AssistantTurns: 2, Thinking: true, MaxTokens: 2048},
		},
		{
			// Disabled thinking is not thinking.
			name: "thinking disabled",
			body: `{"model":"m","max_tokens":5,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"}]}`,
			want: Request{Model: "m", IncludeUsage: true, LastUserText: "x", MaxTokens: 5},
		},
		// Missing messages.
		{name: "missing messages", body: `{"model":"m","max_tokens":5}`, wantErr: "messages: required"},
		// Missing model.
		{name: "missing model", body: `{"max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, wantErr: "model: required"},
		// Missing max_tokens.
		{name: "missing max_tokens", body: `{"model":"m","messages":[{"role":"user","content":"x"}]}`, wantErr: "max_tokens: required"},
		// max_tokens below one.
		{name: "zero max_tokens", body: `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"x"}]}`, wantErr: "max_tokens: must be at least 1, got 0"},
		// Content of the wrong type names the message index.
		{name: "content number", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":42}]}`, wantErr: "messages[2].content: expected string or array of content blocks"},
		// Missing content.
		{name: "missing content", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user"}]}`, wantErr: "messages[0].content: required"},
		// A block without a type.
		{name: "block without type", body: `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"text":"x"}]}]}`, wantErr: "messages[0].content: [0].type: required"},
		// A system role inside messages is refused, as the API does.
		{name: "system role", body: `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, wantErr: `messages[0].role: expected "user" or "assistant", got "system"`},
		// A top-level field of the wrong type names the field.
		{name: "max_tokens string", body: `{"model":"m","max_tokens":"5","messages":[{"role":"user","content":"x"}]}`, wantErr: "request body: max_tokens: expected int, got JSON string"},
		// Not JSON.
		{name: "not json", body: `{"model":`, wantErr: "request body: invalid JSON at byte 9: unexpected end of JSON input"},
		// Empty body.
		{name: "empty body", body: ` `, wantErr: "request body: empty, want a JSON object"},
		// Invalid UTF-8 in a string: refused with its offset, not decoded as U+FFFD.
		{name: "bad utf-8", body: "{\"model\":\"m\xff\"}", wantErr: "request body: not valid UTF-8 at byte 11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRequest([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.want {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
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
		req, err := ParseRequest(body)
		if (req == nil) == (err == nil) {
			t.Fatalf("ParseRequest returned (%v, %v): want exactly one", req, err)
		}
		v, why, assistants := requestOracle(body)
		switch {
		case v == wiretest.Invalid && err == nil:
			t.Fatalf("accepted %q, which is invalid: %s", body, why)
		case v == wiretest.Valid && err != nil:
			t.Fatalf("refused %q, which is valid: %v", body, err)
		case err != nil && err.Error() == "":
			t.Fatalf("refused %q with an empty error", body)
		case err == nil && (req.Model == "" || !req.IncludeUsage || v == wiretest.Valid && req.AssistantTurns != assistants):
			t.Fatalf("accepted %q as %+v; the body has %d assistant message(s)", body, req, assistants)
		}
	})
}

// requestOracle reads a Messages body without ParseRequest: invalid for what no request can
// be (empty, not UTF-8, not JSON, not an object, no model, no or non-positive max_tokens, no
// messages, a message with a role other than user and assistant), valid for the plain shape
// every client sends (lower-case keys once each, string model, integer max_tokens >= 1,
// messages of both roles with string content), and the number of assistant messages.
func requestOracle(body []byte) (v wiretest.Verdict, why string, assistants int) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return wiretest.Invalid, "empty", 0
	case !utf8.Valid(body):
		return wiretest.Invalid, "not UTF-8", 0
	case !json.Valid(body):
		return wiretest.Invalid, "not JSON", 0
	}
	ms, ok := wiretest.Members(body)
	if !ok {
		return wiretest.Invalid, "not an object", 0
	}
	plain := true
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Key] || !slices.Contains([]string{"model", "max_tokens", "messages", "stream"}, m.Key) {
			plain = false
		}
		seen[m.Key] = true
	}
	if model, _ := wiretest.Field(ms, "model"); model == nil || model == "" {
		return wiretest.Invalid, "no model", 0
	} else if _, isString := model.(string); !isString {
		return wiretest.Invalid, "model not a string", 0
	}
	switch maxTokens, _ := wiretest.Field(ms, "max_tokens"); n := maxTokens.(type) {
	case nil:
		return wiretest.Invalid, "no max_tokens", 0
	case float64:
		if n < 1 {
			return wiretest.Invalid, "max_tokens below 1", 0
		}
		if n != math.Trunc(n) || n > 1<<53 {
			plain = false
		}
	default:
		return wiretest.Invalid, "max_tokens not a number", 0
	}
	if stream, n := wiretest.Field(ms, "stream"); n > 0 {
		if _, isBool := stream.(bool); !isBool {
			plain = false
		}
	}
	msgs, _ := wiretest.Field(ms, "messages")
	list, isList := msgs.([]any)
	if !isList || len(list) == 0 {
		if msgs != nil && !isList {
			return wiretest.Unsure, "", 0 // a type error, which ParseRequest also refuses, named its way
		}
		return wiretest.Invalid, "no messages", 0
	}
	for _, raw := range wiretest.Elements(ms, "messages") {
		mm, isObject := wiretest.Members(raw)
		if !isObject {
			plain = false
			continue
		}
		role, roles := wiretest.Field(mm, "role")
		content, contents := wiretest.Field(mm, "content")
		name, isString := role.(string)
		_, contentIsString := content.(string)
		if len(mm) != 2 || roles != 1 || contents != 1 || !isString || !contentIsString {
			plain = false
		}
		if roles == 1 && isString {
			switch name {
			case "assistant":
				assistants++
			case "user":
			default:
				return wiretest.Invalid, "role " + name, 0
			}
		}
	}
	if plain {
		return wiretest.Valid, "", assistants
	}
	return wiretest.Unsure, "", assistants
}

// captured is a request as the fake provider saw it.
type captured struct {
	method, path string
	header       http.Header
	raw          []byte
}

// captureServer answers 204 and hands back what it received.
func captureServer(t *testing.T) (*httptest.Server, <-chan captured) {
	t.Helper()
	ch := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		ch <- captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), raw: raw}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func TestNewRequest(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t)
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
	hr, err := Wire{}.NewRequest(context.Background(), srv.URL, req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := <-got
	if c.method != http.MethodPost || c.path != "/v1/messages" {
		t.Errorf("request line = %s %s", c.method, c.path)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", "Anthropic-Version": "2023-06-01",
		"X-Streambench-Scenario": "x", "X-Api-Key": "real-key",
	} {
		if v := c.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
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
	if string(c.raw) != want {
		t.Errorf("body\ngot:  %s\nwant: %s", c.raw, want)
	}
	// The mock's parser reads what the runtime sends.
	parsed, err := ParseRequest(c.raw)
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
