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
