package clientturn_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/protocol/openaichat"
)

// TestNewRequest checks, on the anthropic and openai wires, the tool loop's second request as
// the mock reads it: one assistant turn already in it, the directive still the last user text,
// the dialect's headers on it.
func TestNewRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		new          func() protocol.Dialect
		model        string
		key          [2]string // the API key header and its placeholder (load --api-key replaces it)
		base, url    string    // the base URL given and the request's
		otherHeader  string    // a header the wire must send (non-empty), "" for none
		parse        func([]byte) (*jsonwire.ChatRequest, error)
		includeUsage bool   // the parsed request must include usage
		toolResult   string // the JSON key a tool result names its call by
	}{
		{
			name: anthropicmessages.Name, model: "claude-test", key: [2]string{"X-Api-Key", "streambench"},
			new:  func() protocol.Dialect { return anthropicmessages.New() },
			base: "http://127.0.0.1:1", url: "http://127.0.0.1:1/v1/messages", otherHeader: "Anthropic-Version",
			parse: anthropic.ParseRequest, toolResult: "tool_use_id",
		},
		{
			name: openaichat.Name, model: "gpt-test", key: [2]string{"Authorization", "Bearer streambench"},
			new:  func() protocol.Dialect { return openaichat.New() },
			base: "http://127.0.0.1:1/", url: "http://127.0.0.1:1/v1/chat/completions",
			parse: openai.ParseRequest, includeUsage: true, toolResult: "tool_call_id",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewSession(t, "tool-chain", 1)
			s.Turn = 1
			d := Configured(t, tc.new(), protocol.Options{"model": tc.model})
			req, err := d.NewRequest(context.Background(), tc.base, s)
			if err != nil {
				t.Fatal(err)
			}
			if req.URL.String() != tc.url || req.Header.Get(tc.key[0]) != tc.key[1] || tc.otherHeader != "" && req.Header.Get(tc.otherHeader) == "" {
				t.Errorf("request %s with headers %v", req.URL, req.Header)
			}
			body, _ := io.ReadAll(req.Body)
			parsed, err := tc.parse(body)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Model != tc.model || !parsed.Stream || tc.includeUsage && !parsed.IncludeUsage || parsed.AssistantTurns != 1 || parsed.LastUserText != s.Input {
				t.Errorf("parsed %+v", parsed)
			}
			for _, call := range s.Expected.Turns[0].ToolCalls {
				if !strings.Contains(string(body), `"`+tc.toolResult+`":"`+call.ID+`"`) {
					t.Errorf("no tool result for %s in %s", call.ID, body)
				}
			}
			// Without ground truth every session is its first turn.
			if n := Configured(t, tc.new(), NoTruth).Turns(s); n != 1 {
				t.Errorf("no ground truth: %d turns, want 1", n)
			}
		})
	}
}
