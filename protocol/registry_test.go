package protocol

import (
	"strings"
	"testing"
)

// stub is a dialect with only a name and rules, for registry tests.
type stub struct {
	name  string
	rules []RuleSpec
}

func (s stub) Name() string                            { return s.name }
func (stub) Options() []OptionSpec                     { return nil }
func (s stub) Rules() []RuleSpec                       { return s.rules }
func (stub) Configure(string, Options) (Client, error) { return nil, nil }

var _ Dialect = stub{}

// TestRegistryLookupAndWith: an unknown name is an error listing the known ones; With adds a
// dialect and its rules without changing the original; duplicate names, empty names and a rule
// another dialect (or protocol) declares are refused.
func TestRegistryLookupAndWith(t *testing.T) {
	t.Parallel()
	r, err := NewRegistry(stub{name: "compose"}, stub{name: "ag-ui", rules: []RuleSpec{{ID: "R-agui-run", Kind: RuleStructure, Text: "one run"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup("sim-talk"); err == nil || !strings.Contains(err.Error(), `"sim-talk"`) || !strings.Contains(err.Error(), "compose") {
		t.Errorf("Lookup(unknown): %v, want an error naming it and the known dialects", err)
	}
	r2, err := r.With(stub{name: "echo", rules: []RuleSpec{{ID: "R-echo-text", Kind: RuleContent, Text: "the echoed text"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Lookup("echo"); err != nil {
		t.Errorf("With: %v", err)
	}
	if got := strings.Join(r2.Names(), ","); got != "compose,ag-ui,echo" {
		t.Errorf("With: Names() = %s, want the registration order compose,ag-ui,echo", got)
	}
	if k := r2.Rules().Kind("R-echo-text"); k != RuleContent {
		t.Errorf("With: the new dialect's rule has kind %s, want content", k)
	}
	if _, err := r.Lookup("echo"); err == nil {
		t.Error("With changed the original registry")
	}
	if _, err := r.Rules().Parse("R-echo-text"); err == nil {
		t.Error("With changed the original registry's rules")
	}
	for _, taken := range []Rule{RTerminal, "R-agui-run"} {
		d := stub{name: "echo", rules: []RuleSpec{{ID: taken, Kind: RuleStructure, Text: "x"}}}
		if _, err := r.With(d); err == nil || !strings.Contains(err.Error(), string(taken)+" is declared twice") {
			t.Errorf("a dialect redeclaring %s: %v, want an error naming it", taken, err)
		}
	}
	if _, err := r.With(stub{name: "compose"}); err == nil || !strings.Contains(err.Error(), `"compose"`) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := NewRegistry(stub{name: ""}); err == nil {
		t.Error("empty name accepted")
	}
}
