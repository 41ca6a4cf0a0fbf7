package dialects

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// stub is a dialect with only a name, for registry tests.
type stub struct{ name string }

func (s stub) Name() string                 { return s.name }
func (stub) Options() []protocol.OptionSpec { return nil }
func (stub) Configure(string, protocol.Options) (protocol.Client, error) {
	return nil, nil
}

var _ protocol.Dialect = stub{}

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

// TestLookupAndWith: an unknown name is an error listing the known ones; With adds without
// changing the original; duplicate and empty names are refused.
func TestLookupAndWith(t *testing.T) {
	t.Parallel()
	r := Default()
	if _, err := r.Lookup("sim-talk"); err == nil || !strings.Contains(err.Error(), `"sim-talk"`) || !strings.Contains(err.Error(), "compose") {
		t.Errorf("Lookup(unknown): %v, want an error naming it and the known dialects", err)
	}
	r2, err := r.With(stub{"echo"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Lookup("echo"); err != nil {
		t.Errorf("With: %v", err)
	}
	if _, err := r.Lookup("echo"); err == nil {
		t.Error("With changed the original registry")
	}
	if _, err := r.With(stub{"compose"}); err == nil || !strings.Contains(err.Error(), `"compose"`) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := New(stub{""}); err == nil {
		t.Error("empty name accepted")
	}
}
