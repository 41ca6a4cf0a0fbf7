package clientturn_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/protocol/openaichat"
)

// TestOpenAIChatNewRequest checks the tool loop's second request as the mock reads it: one assistant
// turn already in it, the directive still the last user text, the dialect's headers on it.
func TestOpenAIChatNewRequest(t *testing.T) {
	t.Parallel()
	s := NewSession(t, "tool-chain", 1)
	s.Turn = 1
	d := openaichat.New(clientturn.WithModel("gpt-test"), clientturn.WithHeader("Authorization", "Bearer real"))
	req, err := d.NewRequest(context.Background(), "http://127.0.0.1:1/", s)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://127.0.0.1:1/v1/chat/completions" || req.Header.Get("Authorization") != "Bearer real" {
		t.Errorf("request %s with Authorization %q", req.URL, req.Header.Get("Authorization"))
	}
	body, _ := io.ReadAll(req.Body)
	parsed, err := openai.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Model != "gpt-test" || !parsed.Stream || !parsed.IncludeUsage || parsed.AssistantTurns != 1 || parsed.LastUserText != s.Input {
		t.Errorf("parsed %+v", parsed)
	}
	for _, call := range s.Expected.Turns[0].ToolCalls {
		if !strings.Contains(string(body), `"tool_call_id":"`+call.ID+`"`) {
			t.Errorf("no tool result for %s in %s", call.ID, body)
		}
	}
	// Without ground truth every session is its first turn.
	if n := openaichat.New(clientturn.WithNoGroundTruth()).Turns(s); n != 1 {
		t.Errorf("no ground truth: %d turns, want 1", n)
	}
}
