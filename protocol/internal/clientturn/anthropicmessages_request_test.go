package clientturn_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/internal/clientturn"
)

// TestAnthropicMessagesNewRequest checks the tool loop's second request as the mock reads it: one assistant
// turn already in it, the directive still the last user text, the dialect's headers on it.
func TestAnthropicMessagesNewRequest(t *testing.T) {
	t.Parallel()
	s := NewSession(t, "tool-chain", 1)
	s.Turn = 1
	d := anthropicmessages.New(clientturn.WithModel("claude-test"), clientturn.WithHeader("X-Api-Key", "real"))
	req, err := d.NewRequest(context.Background(), "http://127.0.0.1:1", s)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://127.0.0.1:1/v1/messages" || req.Header.Get("X-Api-Key") != "real" || req.Header.Get("Anthropic-Version") == "" {
		t.Errorf("request %s with headers %v", req.URL, req.Header)
	}
	body, _ := io.ReadAll(req.Body)
	parsed, err := anthropic.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Model != "claude-test" || !parsed.Stream || parsed.AssistantTurns != 1 || parsed.LastUserText != s.Input {
		t.Errorf("parsed %+v", parsed)
	}
	for _, call := range s.Expected.Turns[0].ToolCalls {
		if !strings.Contains(string(body), `"tool_use_id":"`+call.ID+`"`) {
			t.Errorf("no tool result for %s in %s", call.ID, body)
		}
	}
	// Without ground truth every session is its first turn.
	if n := anthropicmessages.New(clientturn.WithNoGroundTruth()).Turns(s); n != 1 {
		t.Errorf("no ground truth: %d turns, want 1", n)
	}
}
