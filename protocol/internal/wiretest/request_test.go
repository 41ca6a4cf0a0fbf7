package wiretest

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
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/openai"
)

// parseCase is a request body and what a wire's ParseRequest makes of it: Want, or an error
// containing WantErr.
type parseCase[R comparable] struct {
	Name, Body string
	Want       R
	WantErr    string
}

// parseRequests runs parse over every case.
func parseRequests[R comparable](t *testing.T, parse func([]byte) (*R, error), cases []parseCase[R]) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, err := parse([]byte(tt.Body))
			if tt.WantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.WantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.WantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got != tt.Want {
				t.Errorf("got %+v, want %+v", *got, tt.Want)
			}
		})
	}
}

// checkParse checks parse on body against oracle: a request or an error, never both; what the
// oracle calls valid accepted and invalid refused; a non-empty error; and no accepted request
// for which wrong(req, verdict, assistant messages) holds.
func checkParse[R any](t *testing.T, body []byte, parse func([]byte) (*R, error), oracle messagesOracle, wrong func(req *R, v Verdict, assistants int) bool) {
	req, err := parse(body)
	if (req == nil) == (err == nil) {
		t.Fatalf("ParseRequest returned (%v, %v): want exactly one", req, err)
	}
	v, why, assistants := oracle.Judge(body)
	switch {
	case v == Invalid && err == nil:
		t.Fatalf("accepted %q, which is invalid: %s", body, why)
	case v == Valid && err != nil:
		t.Fatalf("refused %q, which is valid: %v", body, err)
	case err != nil && err.Error() == "":
		t.Fatalf("refused %q with an empty error", body)
	case err == nil && wrong(req, v, assistants):
		t.Fatalf("accepted %q as %+v; the body has %d assistant message(s)", body, req, assistants)
	}
}

// messagesOracle reads a chat request body without the parser under test. Judge says Invalid
// for what no request can be (empty, not UTF-8, not JSON, not an object, no model, no
// messages, a message whose role is neither assistant nor in Roles, or what Extra refuses),
// Valid for the plain shape every client sends (Keys once each and lower-case, a string
// model, messages of a role and a string content), else Unsure; and the assistant messages.
type messagesOracle struct {
	Keys  []string
	Roles []string
	// Extra judges the wire's own members: why non-empty is Invalid, !plain leaves Valid.
	Extra func(ms []Member) (plain bool, why string)
}

// Judge is the oracle's verdict on body, why it is Invalid, and its assistant messages.
func (o messagesOracle) Judge(body []byte) (v Verdict, why string, assistants int) {
	switch {
	case len(bytes.TrimSpace(body)) == 0:
		return Invalid, "empty", 0
	case !utf8.Valid(body):
		return Invalid, "not UTF-8", 0
	case !json.Valid(body):
		return Invalid, "not JSON", 0
	}
	ms, ok := Members(body)
	if !ok {
		return Invalid, "not an object", 0
	}
	plain := true
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.Key] || !slices.Contains(o.Keys, m.Key) {
			plain = false
		}
		seen[m.Key] = true
	}
	if model, _ := Field(ms, "model"); model == nil || model == "" {
		return Invalid, "no model", 0
	} else if _, isString := model.(string); !isString {
		return Invalid, "model not a string", 0
	}
	if o.Extra != nil {
		extraPlain, why := o.Extra(ms)
		if why != "" {
			return Invalid, why, 0
		}
		plain = plain && extraPlain
	}
	if stream, n := Field(ms, "stream"); n > 0 {
		if _, isBool := stream.(bool); !isBool {
			plain = false
		}
	}
	msgs, _ := Field(ms, "messages")
	list, isList := msgs.([]any)
	if !isList || len(list) == 0 {
		if msgs != nil && !isList {
			return Unsure, "", 0 // a type error, which ParseRequest also refuses, named its way
		}
		return Invalid, "no messages", 0
	}
	msgPlain, why, assistants := o.judgeMessages(ms)
	switch {
	case why != "":
		return Invalid, why, 0
	case plain && msgPlain:
		return Valid, "", assistants
	}
	return Unsure, "", assistants
}

// judgeMessages reads the messages: whether all are plain, why one is Invalid, the assistant ones.
func (o messagesOracle) judgeMessages(ms []Member) (plain bool, why string, assistants int) {
	plain = true
	for _, raw := range Elements(ms, "messages") {
		mm, isObject := Members(raw)
		if !isObject {
			plain = false
			continue
		}
		role, roles := Field(mm, "role")
		content, contents := Field(mm, "content")
		name, isString := role.(string)
		_, contentIsString := content.(string)
		if len(mm) != 2 || roles != 1 || contents != 1 || !isString || !contentIsString {
			plain = false
		}
		if roles == 1 && isString {
			switch {
			case name == "assistant":
				assistants++
			case !slices.Contains(o.Roles, name):
				return false, "role " + name, 0
			}
		}
	}
	return plain, "", assistants
}

// captured is a request as a fake provider saw it.
type captured struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// send sends w's request for req to a fake provider at its URL + suffix, which answers 204,
// checks the request line (POST wantPath) and the headers in wantHeader, and returns the request.
func send(t *testing.T, w protocol.ProviderWire, suffix string, req *protocol.ModelRequest, wantPath string, wantHeader map[string]string) captured {
	t.Helper()
	ch := make(chan captured, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		ch <- captured{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: raw}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	hr, err := w.NewRequest(context.Background(), srv.URL+suffix, req)
	dialecttest.Do(t, srv.Client(), hr, err)
	c := <-ch
	if c.Method != http.MethodPost || c.Path != wantPath {
		t.Errorf("request line = %s %s", c.Method, c.Path)
	}
	for k, want := range wantHeader {
		if v := c.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	return c
}

func TestAnthropicParseRequest(t *testing.T) {
	t.Parallel()
	parseRequests(t, anthropic.ParseRequest, []parseCase[anthropic.Request]{
		{
			// String content, streaming, with a system prompt (ignored).
			Name: "string content",
			Body: `{"model":"m","max_tokens":100,"stream":true,"system":"be brief","messages":[{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			Want: anthropic.Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]", MaxTokens: 100},
		},
		{
			// Array-of-blocks content joins the text blocks and skips images.
			Name: "block content",
			Body: `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image","source":{"type":"base64"}},{"type":"text","text":"b"}]}]}`,
			Want: anthropic.Request{Model: "m", IncludeUsage: true, LastUserText: "a b", MaxTokens: 1},
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
			Want: anthropic.Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "first", AssistantTurns: 2, Thinking: true, MaxTokens: 2048},
		},
		{
			// Disabled thinking is not thinking.
			Name: "thinking disabled",
			Body: `{"model":"m","max_tokens":5,"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"x"}]}`,
			Want: anthropic.Request{Model: "m", IncludeUsage: true, LastUserText: "x", MaxTokens: 5},
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

func FuzzAnthropicParseRequest(f *testing.F) {
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
		checkParse(t, body, anthropic.ParseRequest, anthropicOracle, func(req *anthropic.Request, v Verdict, assistants int) bool {
			return req.Model == "" || !req.IncludeUsage || v == Valid && req.AssistantTurns != assistants
		})
	})
}

// anthropicOracle reads a Messages body without ParseRequest; the wire's own: max_tokens required,
// at least 1, an integer in the plain shape; no role but user and assistant.
var anthropicOracle = messagesOracle{
	Keys:  []string{"model", "max_tokens", "messages", "stream"},
	Roles: []string{"user"},
	Extra: func(ms []Member) (plain bool, why string) {
		switch maxTokens, _ := Field(ms, "max_tokens"); n := maxTokens.(type) {
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

// toolTurn is a user's message, an assistant's two tool calls (ids idPrefix+"1" and "2", the
// second's arguments args2) and their results, the second failed.
func toolTurn(idPrefix, args2 string) []protocol.Message {
	return []protocol.Message{
		{Role: "user", Text: "hi [[streambench scenario=x seed=1]]"},
		{Role: "assistant", Text: "Let me look.", ToolCalls: []protocol.ToolCall{
			{ID: idPrefix + "1", Name: "search_call", Arguments: `{"q":"a"}`},
			{ID: idPrefix + "2", Name: "fetch_url", Arguments: args2},
		}},
		{Role: "tool", ToolCallID: idPrefix + "1", Text: "found"},
		{Role: "tool", ToolCallID: idPrefix + "2", Text: "failed", IsError: true},
	}
}

func TestAnthropicNewRequest(t *testing.T) {
	t.Parallel()
	req := &protocol.ModelRequest{
		Model: "sim-model",
		Messages: append(toolTurn("toolu_", ""),
			protocol.Message{Role: "user", Text: "and then?"},
			protocol.Message{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "toolu_3", Name: "search_call", Arguments: `{}`}}},
			protocol.Message{Role: "tool", ToolCallID: "toolu_3", Text: "ok"},
		),
		Tools:    []string{"search_call"},
		Thinking: true,
		Header:   http.Header{"X-Streambench-Scenario": {"x"}, "X-Api-Key": {"real-key"}},
	}
	c := send(t, anthropic.Wire{}, "", req, "/v1/messages", map[string]string{
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
	parsed, err := anthropic.ParseRequest(c.Body)
	if err != nil {
		t.Fatal(err)
	}
	wantParsed := anthropic.Request{Model: "sim-model", Stream: true, IncludeUsage: true, LastUserText: "and then?", AssistantTurns: 2, Thinking: true, MaxTokens: 4096}
	if *parsed != wantParsed {
		t.Errorf("ParseRequest of NewRequest's body = %+v, want %+v", *parsed, wantParsed)
	}
}

func TestOpenAIParseRequest(t *testing.T) {
	t.Parallel()
	parseRequests(t, openai.ParseRequest, []parseCase[openai.Request]{
		{
			// String content, streaming with usage.
			Name: "string content",
			Body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			Want: openai.Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]"},
		},
		{
			// Array-of-parts content joins the text parts and skips images.
			Name: "parts content",
			Body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`,
			Want: openai.Request{Model: "m", LastUserText: "a b"},
		},
		{
			// A tool loop: assistant turns are counted, tool messages skipped, the last user text kept.
			Name: "tool messages",
			Body: `{"model":"m","stream":true,"reasoning_effort":"low","messages":[
				{"role":"user","content":"first"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c1","content":"result"},
				{"role":"assistant","content":"pre","tool_calls":[{"id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"r2"}]}]}`,
			Want: openai.Request{Model: "m", Stream: true, LastUserText: "first", AssistantTurns: 2, Thinking: true},
		},
		{
			// reasoning_effort "none" asks for no reasoning.
			Name: "reasoning none",
			Body: `{"model":"m","reasoning_effort":"none","messages":[{"role":"user","content":"x"}]}`,
			Want: openai.Request{Model: "m", LastUserText: "x"},
		},
		{
			// The reasoning object form asks for reasoning too.
			Name: "reasoning object",
			Body: `{"model":"m","reasoning":{"effort":"high"},"messages":[{"role":"user","content":"x"}]}`,
			Want: openai.Request{Model: "m", LastUserText: "x", Thinking: true},
		},
		{
			// Unknown fields are ignored.
			Name: "unknown fields",
			Body: `{"model":"m","temperature":0.2,"n":1,"messages":[{"role":"user","content":"x","name":"bob"}],"future":{"a":1}}`,
			Want: openai.Request{Model: "m", LastUserText: "x"},
		},
		// Missing messages.
		{Name: "missing messages", Body: `{"model":"m"}`, WantErr: "messages: required"},
		// Empty messages.
		{Name: "empty messages", Body: `{"model":"m","messages":[]}`, WantErr: "messages: required"},
		// Missing model.
		{Name: "missing model", Body: `{"messages":[{"role":"user","content":"x"}]}`, WantErr: "model: required"},
		// Content of the wrong type names the message index.
		{Name: "content number", Body: `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"},{"role":"user","content":42}]}`, WantErr: "messages[2].content: expected string or array of parts"},
		// Parts that are not objects.
		{Name: "parts not objects", Body: `{"model":"m","messages":[{"role":"user","content":["a"]}]}`, WantErr: "messages[0].content: expected string or array of parts"},
		// Messages that are not objects.
		{Name: "message not object", Body: `{"model":"m","messages":["hi"]}`, WantErr: "messages[0]: json: cannot unmarshal string"},
		// Missing role.
		{Name: "missing role", Body: `{"model":"m","messages":[{"content":"x"}]}`, WantErr: "messages[0].role: required"},
		// Unknown role.
		{Name: "unknown role", Body: `{"model":"m","messages":[{"role":"robot","content":"x"}]}`, WantErr: `messages[0].role: unknown role "robot"`},
		// A top-level field of the wrong type names the field.
		{Name: "stream not bool", Body: `{"model":"m","stream":"yes","messages":[{"role":"user","content":"x"}]}`, WantErr: "request body: stream: expected bool, got JSON string"},
		// Nested wrong type.
		{Name: "include_usage not bool", Body: `{"model":"m","stream_options":{"include_usage":1},"messages":[{"role":"user","content":"x"}]}`, WantErr: "request body: stream_options.include_usage: expected bool, got JSON number"},
		// Not JSON at all.
		{Name: "not json", Body: `model=m`, WantErr: "request body: invalid JSON at byte 1"},
		// Empty body.
		{Name: "empty body", Body: ``, WantErr: "request body: empty, want a JSON object"},
		// Invalid UTF-8 in a string: refused with its offset, not decoded as U+FFFD.
		{Name: "bad utf-8", Body: "{\"model\":\"m\xff\"}", WantErr: "request body: not valid UTF-8 at byte 11"},
	})
}

func FuzzOpenAIParseRequest(f *testing.F) {
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
		checkParse(t, body, openai.ParseRequest, openaiOracle, func(req *openai.Request, v Verdict, assistants int) bool {
			return req.Model == "" || v == Valid && req.AssistantTurns != assistants
		})
	})
}

// openaiOracle reads a chat completions body without ParseRequest; the wire's roles are user,
// system, developer, tool and function.
var openaiOracle = messagesOracle{
	Keys:  []string{"model", "messages", "stream"},
	Roles: []string{"user", "system", "developer", "tool", "function"},
}

func TestOpenAINewRequest(t *testing.T) {
	t.Parallel()
	req := &protocol.ModelRequest{
		Model:    "sim-model",
		Messages: toolTurn("call_", `{"u":"b"}`),
		Tools:    []string{"search_call", "fetch_url"},
		Thinking: true,
		Header:   http.Header{"X-Streambench-Session": {"s1"}},
	}
	c := send(t, openai.Wire{}, "/", req, "/v1/chat/completions", map[string]string{
		"Content-Type": "application/json", "Accept": "text/event-stream", "X-Streambench-Session": "s1",
	})
	var body map[string]any
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Errorf("request body is not JSON: %v: %s", err, c.Body)
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
	gotJSON, _ := json.Marshal(body)
	if string(gotJSON) != want {
		t.Errorf("body\ngot:  %s\nwant: %s", gotJSON, want)
	}
	// The mock's parser reads what the runtime sends.
	raw, _ := json.Marshal(body)
	parsed, err := openai.ParseRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.AssistantTurns != 1 || parsed.LastUserText != req.Messages[0].Text || !parsed.IncludeUsage || !parsed.Stream || !parsed.Thinking {
		t.Errorf("ParseRequest of NewRequest's body = %+v", parsed)
	}
}

// The request-body fuzz oracles' pieces read a body with encoding/json's tokens, independently
// of the wire's parser, so duplicate and mistyped members stay visible.

// Member is one key and its raw value in a JSON object, in document order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members lists the members of the JSON object data, duplicates included (ok false: no object).
func Members(data []byte) (out []Member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		out = append(out, Member{key, raw})
	}
	return out, true
}

// Field is the last member named name (case-insensitively, as in encoding/json) and the count.
func Field(ms []Member, name string) (last any, count int) {
	for _, m := range ms {
		if strings.EqualFold(m.Key, name) {
			last = nil
			_ = json.Unmarshal(m.Value, &last)
			count++
		}
	}
	return last, count
}

// Elements are the raw elements of the last member named name (nil: not an array).
func Elements(ms []Member, name string) []json.RawMessage {
	var raws []json.RawMessage
	for _, m := range ms {
		if strings.EqualFold(m.Key, name) {
			raws = nil
			_ = json.Unmarshal(m.Value, &raws)
		}
	}
	return raws
}

// Verdict is a fuzz oracle's independent reading of a request body.
type Verdict int

// The verdicts.
const (
	Unsure  Verdict = iota // outside what the oracle decides
	Valid                  // must be accepted
	Invalid                // must be refused
)

// requestError is a model request a wire's encoder refuses, and what its error says.
type requestError struct {
	Name    string
	Req     protocol.ModelRequest
	WantErr string
}

// requestErrors builds every case's request with w, and the two every wire refuses alike: the
// error contains WantErr.
func requestErrors(t *testing.T, w protocol.ProviderWire, cases []requestError) {
	cases = append([]requestError{
		// A tool result must name its call.
		{Name: "tool without id", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "tool", Text: "x"}}}, WantErr: "messages[0]: tool result without a tool call id"},
		// Roles are limited to the three the runtime uses.
		{Name: "bad role", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "user"}, {Role: "developer"}}}, WantErr: `messages[1]: unknown role "developer"`},
	}, cases...)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			_, err := w.NewRequest(context.Background(), "http://x", &tt.Req)
			if err == nil || !strings.Contains(err.Error(), tt.WantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.WantErr)
			}
		})
	}
}

// errorAnswer is a provider's non-200 answer and the error a wire reads from it.
type errorAnswer struct {
	Name    string
	Handler http.HandlerFunc
	Want    protocol.ProviderError
	JSON    bool
}

// errorAnswers serves every case's answer, and the two every wire reads alike (its own error
// shape, written by writeError; a huge body), and reads each with w.ParseError.
func errorAnswers(t *testing.T, w protocol.ProviderWire, writeError func(http.ResponseWriter, int, string, string), cases []errorAnswer) {
	cases = append(cases, errorAnswer{
		// The mock's own error shape round-trips.
		Name: "rate limit",
		Handler: func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, 429, "rate_limit_error", "Rate limit reached")
		},
		JSON: true,
		Want: protocol.ProviderError{Status: 429, Type: "rate_limit_error", Message: "Rate limit reached"},
	}, errorAnswer{
		// A huge body is read only up to 64 KiB.
		Name: "huge body",
		Handler: func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(strings.Repeat("x", 200<<10)))
		},
		Want: protocol.ProviderError{Status: 400, Type: "invalid_request_error", Message: strings.Repeat("x", 64<<10)},
	})
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.Handler)
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if tt.JSON && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", resp.Header.Get("Content-Type"))
			}
			if got := w.ParseError(resp); *got != tt.Want {
				t.Errorf("got %.200v, want %.200v", *got, tt.Want)
			}
		})
	}
}

func TestAnthropicNewRequestErrors(t *testing.T) {
	t.Parallel()
	requestErrors(t, anthropic.Wire{}, []requestError{
		// Tool arguments must be JSON to become a tool_use input.
		{Name: "bad arguments", Req: protocol.ModelRequest{Messages: []protocol.Message{{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "t", Name: "f", Arguments: `{"a":`}}}}}, WantErr: "messages[0].tool_calls[0] (f): arguments are not valid JSON"},
	})
}

func TestAnthropicWriteErrorParseError(t *testing.T) {
	t.Parallel()
	errorAnswers(t, anthropic.Wire{}, anthropic.WriteError, []errorAnswer{
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
	})
}

func TestOpenAINewRequestErrors(t *testing.T) {
	t.Parallel()
	requestErrors(t, openai.Wire{}, []requestError{
		// The max tokens field is one of three names.
		{Name: "bad field", Req: protocol.ModelRequest{MaxTokens: 3, MaxTokensField: "max_new_tokens"}, WantErr: `max tokens field "max_new_tokens"`},
	})
}

func TestOpenAIWriteErrorParseError(t *testing.T) {
	t.Parallel()
	errorAnswers(t, openai.Wire{}, openai.WriteError, []errorAnswer{
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
	})
}
