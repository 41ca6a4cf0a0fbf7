package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
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
			// String content, streaming with usage.
			name: "string content",
			body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]"},
		},
		{
			// Array-of-parts content joins the text parts and skips images.
			name: "parts content",
			body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`,
			want: Request{Model: "m", LastUserText: "a b"},
		},
		{
			// A tool loop: assistant turns are counted, tool messages skipped, the last user text kept.
			name: "tool messages",
			body: `{"model":"m","stream":true,"reasoning_effort":"low","messages":[
				{"role":"user","content":"first"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"result"},
				{"role":"assistant","content":"pre","tool_calls":[{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"r2"}]}]}`,
			want: Request{Model: "m", Stream: true, LastUserText: "first", AssistantTurns: 2, Thinking: true},
		},
		{
			// reasoning_effort "none" asks for no reasoning.
			name: "reasoning none",
			body: `{"model":"m","reasoning_effort":"none","messages":[{"role":"user","content":"x"}]}`,
			want: Request{Model: "m", LastUserText: "x"},
		},
		{
			// The reasoning object form asks for reasoning too.
			name: "reasoning object",
			body: `{"model":"m","reasoning":{"effort":"high"},"messages":[{"role":"user","content":"x"}]}`,
			want: Request{Model: "m", LastUserText: "x", Thinking: true},
		},
		{
			// Unknown fields are ignored.
			name: "unknown fields",
			body: `{"model":"m","temperature":0.2,"n":1,"messages":[{"role":"user","content":"x","name":"bob"}],"future":{"a":1}}`,
			want: Request{Model: "m", LastUserText: "x"},
		},
		// Missing messages.
		{name: "missing messages", body: `{"model":"m"}`, wantErr: "messages: required"},
		// Empty messages.
		{name: "empty messages", body: `{"model":"m","messages":[]}`, wantErr: "messages: required"},
		// Missing model.
		{name: "missing model", body: `{"messages":[{"role":"user","content":"x"}]}`, wantErr: "model: required"},
		// Content of the wrong type names the message index.
		{name: "content number", body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":42}]}`, wantErr: "messages[2].content: expected string or array of parts"},
		// Parts that are not objects.
		{name: "parts not objects", body: `{"model":"m","messages":[{"role":"user","content":["a"]}]}`, wantErr: "messages[0].content: expected string or array of parts"},
		// Messages that are not objects.
		{name: "message not object", body: `{"model":"m","messages":["hi"]}`, wantErr: "messages[0]: json: cannot unmarshal string"},
		// Missing role.
		{name: "missing role", body: `{"model":"m","messages":[{"content":"x"}]}`, wantErr: "messages[0].role: required"},
		// Unknown role.
		{name: "unknown role", body: `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, wantErr: `messages[0].role: unknown role "robot"`},
		// A top-level field of the wrong type names the field.
		{name: "stream not bool", body: `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`, wantErr: "request body: stream: expected bool, got JSON string"},
		// Nested wrong type.
		{name: "include_usage not bool", body: `{"model":"m","stream_options":{"include_usage":1},"messages":[{"role":"user","content":"x"}]}`, wantErr: "request body: stream_options.include_usage: expected bool, got JSON number"},
		// Not JSON at all.
		{name: "not json", body: `model=m`, wantErr: "request body: invalid JSON at byte 1"},
		// Empty body.
		{name: "empty body", body: ``, wantErr: "request body: empty, want a JSON object"},
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
	f.Add([]byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"assistant","content":null}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"tool","content":{}}]}`))
	f.Add([]byte(`{"model":"","messages":null}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`))
	f.Add([]byte("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}"))
	f.Add([]byte(`{"MODEL":"m","messages":[{"role":"user","content":"a"}],"model":null}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"a"}]} trailing`))
	f.Add([]byte(`[{"model":"m"}]`))
	f.Add([]byte(` `))
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
		case err == nil && (req.Model == "" || v == wiretest.Valid && req.AssistantTurns != assistants):
			t.Fatalf("accepted %q as %+v; the body has %d assistant message(s)", body, req, assistants)
		}
	})
}

// requestOracle reads a chat completions body without ParseRequest: invalid for what no
// request can be (empty, not UTF-8, not JSON, not an object, no model, no messages, a message
// without a role or with an unknown one), valid for the plain shape every client sends
// (lower-case keys once each, string model, messages of known roles with string content),
// and the number of assistant messages.
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
		if seen[m.Key] || !slices.Contains([]string{"model", "messages", "stream"}, m.Key) {
			plain = false
		}
		seen[m.Key] = true
	}
	if model, _ := wiretest.Field(ms, "model"); model == nil || model == "" {
		return wiretest.Invalid, "no model", 0
	} else if _, isString := model.(string); !isString {
		return wiretest.Invalid, "model not a string", 0
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
			case "user", "system", "developer", "tool", "function":
			default:
				return wiretest.Invalid, "unknown role " + name, 0
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
	body         map[string]any
}

// captureServer answers 204 and hands back what it received.
func captureServer(t *testing.T) (*httptest.Server, <-chan captured) {
	t.Helper()
	ch := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := captured{method: r.Method, path: r.URL.Path, header: r.Header.Clone()}
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, raw)
		}
		ch <- c
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
				{ID: "call_1", Name: "search_call", Arguments: `{"q":"a"}`},
				{ID: "call_2", Name: "fetch_url", Arguments: `{"u":"b"}`},
			}},
			{Role: "tool", ToolCallID: "call_1", Text: "found"},
			{Role: "tool", ToolCallID: "call_2", Text: "failed", IsError: true},
		},
		Tools:    []string{"search_call", "fetch_url"},
		Thinking: true,
		Header:   http.Header{"X-Streambench-Session": {"s1"}},
	}
	hr, err := Wire{}.NewRequest(context.Background(), srv.URL+"/", req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := <-got
	if c.method != http.MethodPost || c.path != "/v1/chat/completions" {
		t.Errorf("request line = %s %s", c.method, c.path)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/json", "Accept": "text/event-stream", "X-Streambench-Session": "s1",
	} {
		if v := c.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	want := `{"messages":[` +
		`{"content":"hi [[streambench scenario=x seed=1]]","role":"user"},` +
		`{"content":"Let me look.","role":"assistant","tool_calls":[` +
		`{"function":{"arguments":"{\"q\":\"a\"}","name":"search_call"},"id":"call_1","type":"function"},` +
		`{"function":{"arguments":"{\"u\":\"b\"}","name":"fetch_url"},"id":"call_2","type":"function"}]},` +
		`{"content":"found","role":"tool","tool_call_id":"call_1"},` +
		`{"content":"failed","role":"tool","tool_call_id":"call_2"}],` +
		`"model":"sim-model","reasoning_effort":"medium","stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"function":{"name":"search_call","parameters":{"type":"object"}},"type":"function"},` +
		`{"function":{"name":"fetch_url","parameters":{"type":"object"}},"type":"function"}]}`
	gotJSON, _ := json.Marshal(c.body)
	if string(gotJSON) != want {
		t.Errorf("body\ngot:  %s\nwant: %s", gotJSON, want)
	}
	// The mock's parser reads what the runtime sends.
	raw, _ := json.Marshal(c.body)
	parsed, err := ParseRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.AssistantTurns != 1 || parsed.LastUserText != req.Messages[0].Text || !parsed.IncludeUsage || !parsed.Stream || !parsed.Thinking {
		t.Errorf("ParseRequest of NewRequest's body = %+v", parsed)
	}
}

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
