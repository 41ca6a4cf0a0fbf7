package dialects

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestDefault: every shipped dialect is registered under its own name, with options that
// configure a client for a target.
func TestDefault(t *testing.T) {
	t.Parallel()
	r := Default()
	want := []string{"sim-chat", "sim-canvas", "compose", "openai-chat", "anthropic-messages", "openai-responses", "ai-sdk", "ag-ui", "langgraph"}
	if got := r.Names(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		d, err := r.Lookup(n)
		if err != nil || d.Name() != n {
			t.Fatalf("Lookup(%q) = %v, %v", n, d, err)
		}
		c, err := d.Configure("openai-all", nil)
		if err != nil {
			t.Fatalf("%s: Configure with no options: %v", n, err)
		}
		req, err := c.NewRequest(context.Background(), "http://127.0.0.1:1", &protocol.Session{ID: "s", Target: "openai-all", Input: "hi"})
		if err != nil || req.Method != http.MethodPost {
			t.Errorf("%s: NewRequest = %v, %v", n, req, err)
		}
		if _, err := d.Configure("openai-all", protocol.Options{"noSuchOption": true}); err == nil || !strings.Contains(err.Error(), "noSuchOption") {
			t.Errorf("%s: an unknown option: error %v, want one naming it", n, err)
		}
		if !strings.Contains(r.Help(), n) {
			t.Errorf("Help() lacks %s", n)
		}
	}
}

// TestDefaultCapabilities: the shipped dialects say what loadgen and the command line used to
// know by name: the inference endpoint dialects, how they send an API key and a length, which
// one plays swarm scenarios, and which take a path (with placeholders and defaults) or a model.
func TestDefaultCapabilities(t *testing.T) {
	t.Parallel()
	r := Default()
	if got := strings.Join(r.Endpoints(), ","); got != "openai-chat,anthropic-messages,openai-responses" {
		t.Errorf("Endpoints() = %s", got)
	}
	chat, _ := r.Endpoint("openai-chat")
	if name, value := chat.APIKey("k"); name != "Authorization" || value != "Bearer k" || chat.APIKeyEnv != "OPENAI_API_KEY" ||
		strings.Join(chat.MaxTokensFields, ",") != "max_tokens,max_completion_tokens,both" || !chat.VLLMFields {
		t.Errorf("openai-chat: %+v", chat)
	}
	for _, n := range []string{"anthropic-messages", "openai-responses"} {
		if e, _ := r.Endpoint(n); e.MaxTokensFields != nil || e.VLLMFields {
			t.Errorf("%s sends max_tokens alone: %+v", n, e)
		}
	}
	if got, want := r.APIKeyHelp(), "openai-chat, openai-responses: Authorization: Bearer KEY, default $OPENAI_API_KEY; anthropic-messages: x-api-key: KEY, default $ANTHROPIC_API_KEY"; got != want {
		t.Errorf("APIKeyHelp() = %q, want %q", got, want)
	}
	for _, n := range r.Names() {
		if got := r.PlaysSwarm(n); got != (n == "compose") {
			t.Errorf("PlaysSwarm(%s) = %t", n, got)
		}
	}
	if got := strings.Join(r.Taking("path"), ","); got != "sim-chat,sim-canvas,compose,ai-sdk,ag-ui,langgraph" {
		t.Errorf("Taking(path) = %s", got)
	}
	if got, want := r.OptionHelp("path"), "sim-chat {slug} (default /api/chat/{slug}), sim-canvas {workflow} (default /api/workflows/{workflow}/execute), "+
		"compose {agent} (default /agent/{agent}/stream), ai-sdk (default /api/chat), ag-ui {agent} (default /agui/{agent}), langgraph {thread} (default /runs/stream)"; got != want {
		t.Errorf("OptionHelp(path) = %q, want %q", got, want)
	}
	if got, want := r.OptionHelp("stopPath"), "compose {agent} {run}"; got != want {
		t.Errorf("OptionHelp(stopPath) = %q, want %q", got, want)
	}
	if got, want := r.OptionHelp("model"), "openai-chat, anthropic-messages, openai-responses (default streambench-mock)"; got != want {
		t.Errorf("OptionHelp(model) = %q, want %q", got, want)
	}
}
