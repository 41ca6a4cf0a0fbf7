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

func TestParseRequest(t *testing.T) {
	t.Parallel()
	wiretest.ParseRequests(t, ParseRequest, []wiretest.ParseCase[Request]{
		{
			// String content, streaming with usage.
			Name: "string content",
			Body: `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi [[streambench scenario=a]]"}]}`,
			Want: Request{Model: "m", Stream: true, IncludeUsage: true, LastUserText: "hi [[streambench scenario=a]]"},
		},
		{
			// Array-of-parts content joins the text parts and skips images.
			Name: "parts content",
			Body: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a "},{"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"b"}]}]}`,
			Want: Request{Model: "m", LastUserText: "a b"},
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
			Want: Request{Model: "m", Stream: true, LastUserText: "first", AssistantTurns: 2, Thinking: true},
		},
		{
			// reasoning_effort "none" asks for no reasoning.
			Name: "reasoning none",
			Body: `{"model":"m","reasoning_effort":"none","messages":[{"role":"user","content":"x"}]}`,
			Want: Request{Model: "m", LastUserText: "x"},
		},
		{
			// The reasoning object form asks for reasoning too.
			Name: "reasoning object",
			Body: `{"model":"m","reasoning":{"effort":"high"},"messages":[{"role":"user","content":"x"}]}`,
			Want: Request{Model: "m", LastUserText: "x", Thinking: true},
		},
		{
			// Unknown fields are ignored.
			Name: "unknown fields",
			Body: `{"model":"m","temperature":0.2,"n":1,"messages":[{"role":"user","content":"x","name":"bob"}],"future":{"a":1}}`,
			Want: Request{Model: "m", LastUserText: "x"},
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
		wiretest.FuzzParse(t, body, ParseRequest, requestOracle, func(req *Request, v wiretest.Verdict, assistants int) bool {
			return req.Model == "" || v == wiretest.Valid && req.AssistantTurns != assistants
		})
	})
}

// requestOracle reads a chat completions body without ParseRequest; the wire's roles are user,
// system, developer, tool and function.
var requestOracle = wiretest.MessagesOracle{
	Keys:  []string{"model", "messages", "stream"},
	Roles: []string{"user", "system", "developer", "tool", "function"},
}

func TestNewRequest(t *testing.T) {
	t.Parallel()
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
	c := wiretest.Send(t, Wire{}, "/", req, "/v1/chat/completions", map[string]string{
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
