package dialects

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// stub is a dialect with only a name and rules, for registry tests.
type stub struct {
	name  string
	rules []protocol.RuleSpec
}

func (s stub) Name() string                 { return s.name }
func (stub) Options() []protocol.OptionSpec { return nil }
func (s stub) Rules() []protocol.RuleSpec   { return s.rules }
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

// TestLookupAndWith: an unknown name is an error listing the known ones; With adds a dialect
// and its rules without changing the original; duplicate names, empty names and a rule
// another dialect (or protocol) declares are refused.
func TestLookupAndWith(t *testing.T) {
	t.Parallel()
	r := Default()
	if _, err := r.Lookup("sim-talk"); err == nil || !strings.Contains(err.Error(), `"sim-talk"`) || !strings.Contains(err.Error(), "compose") {
		t.Errorf("Lookup(unknown): %v, want an error naming it and the known dialects", err)
	}
	r2, err := r.With(stub{name: "echo", rules: []protocol.RuleSpec{{ID: "R-echo-text", Kind: protocol.RuleContent, Text: "the echoed text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Lookup("echo"); err != nil {
		t.Errorf("With: %v", err)
	}
	if k := r2.Rules().Kind("R-echo-text"); k != protocol.RuleContent {
		t.Errorf("With: the new dialect's rule has kind %s, want content", k)
	}
	if _, err := r.Lookup("echo"); err == nil {
		t.Error("With changed the original registry")
	}
	if _, err := r.Rules().Parse("R-echo-text"); err == nil {
		t.Error("With changed the original registry's rules")
	}
	for _, taken := range []protocol.Rule{protocol.RTerminal, "R-agui-run"} {
		d := stub{name: "echo", rules: []protocol.RuleSpec{{ID: taken, Kind: protocol.RuleStructure, Text: "x"}}}
		if _, err := r.With(d); err == nil || !strings.Contains(err.Error(), string(taken)+" is declared twice") {
			t.Errorf("a dialect redeclaring %s: %v, want an error naming it", taken, err)
		}
	}
	if _, err := r.With(stub{name: "compose"}); err == nil || !strings.Contains(err.Error(), `"compose"`) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := New(stub{name: ""}); err == nil {
		t.Error("empty name accepted")
	}
}
