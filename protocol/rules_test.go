package protocol

import (
	"strings"
	"testing"
)

// TestSharedRules: the shared rules make a rule set of their own (each with an ID, a text and
// a kind, a mixed one naming its content part), which parses every one as itself and refuses
// anything else with an error naming it and the known rules.
func TestSharedRules(t *testing.T) {
	t.Parallel()
	set, err := NewRuleSet(SharedRules())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(set.Rules()); got != len(SharedRules()) || got < 8 {
		t.Fatalf("%d shared rules in the set, %d declared", got, len(SharedRules()))
	}
	for _, r := range set.Rules() {
		if got, err := set.Parse(string(r)); err != nil || got != r {
			t.Errorf("Parse(%q) = %q, %v", r, got, err)
		}
	}
	for _, bad := range []string{"", "abort", "r-abort", "R-abort "} {
		if _, err := set.Parse(bad); err == nil || !strings.Contains(err.Error(), `unknown rule "`+bad+`"`) || !strings.Contains(err.Error(), "R-abort") {
			t.Errorf("Parse(%q): %v, want an error naming it and listing the rules", bad, err)
		}
	}
	content := func(r Rule) string {
		spec, _ := set.Lookup(r)
		return spec.Content
	}
	if k := set.Kind(RTerminal); k != RuleMixed || content(RTerminal) == "" {
		t.Errorf("R-terminal: %s, content part %q; want mixed with its content part", k, content(RTerminal))
	}
	if k := set.Kind(RAbort); k != RuleStructure || content(RAbort) != "" {
		t.Errorf("R-abort: %s, content part %q; want structure, none", k, content(RAbort))
	}
	if set.Kind("R-nonexistent") != 0 || content("R-nonexistent") != "" {
		t.Error("an unknown rule has a kind")
	}
	if _, ok := set.Lookup("R-nonexistent"); ok {
		t.Error("Lookup found an unknown rule")
	}
}

// TestNewRuleSetRefuses: a rule declared twice (in one group or two), one without its R-
// prefix or a text, of no kind, a mixed one without its content part and another with one
// are errors naming the rule.
func TestNewRuleSetRefuses(t *testing.T) {
	t.Parallel()
	ok := RuleSpec{ID: "R-x", Kind: RuleStructure, Text: "x"}
	for _, tc := range []struct {
		name   string
		groups [][]RuleSpec
		want   string
	}{
		{"twice in a group", [][]RuleSpec{{ok, ok}}, "R-x is declared twice"},
		{"a shared rule redeclared", [][]RuleSpec{SharedRules(), {{ID: RTerminal, Kind: RuleStructure, Text: "x"}}}, "R-terminal is declared twice"},
		{"no prefix", [][]RuleSpec{{{ID: "x", Kind: RuleStructure, Text: "x"}}}, `"x": an ID starts with R-`},
		{"no text", [][]RuleSpec{{{ID: "R-y", Kind: RuleStructure}}}, "R-y: no text"},
		{"no kind", [][]RuleSpec{{{ID: "R-y", Text: "y"}}}, "R-y: no kind"},
		{"mixed without content", [][]RuleSpec{{{ID: "R-y", Kind: RuleMixed, Text: "y"}}}, "R-y is mixed"},
		{"content part on a content rule", [][]RuleSpec{{{ID: "R-y", Kind: RuleContent, Text: "y", Content: "z"}}}, "R-y is content but names a content part"},
	} {
		if _, err := NewRuleSet(tc.groups...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	if _, err := NewRuleSet([]RuleSpec{ok}, []RuleSpec{{ID: "R-y", Kind: RuleMixed, Text: "y", Content: "z"}}); err != nil {
		t.Errorf("a good set: %v", err)
	}
}
