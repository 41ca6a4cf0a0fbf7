package protocol

import (
	"strings"
	"testing"
)

// TestParseRule: every rule parses as itself; anything else is an error naming it and the
// known rules.
func TestParseRule(t *testing.T) {
	t.Parallel()
	for _, r := range Rules() {
		if got, err := ParseRule(string(r)); err != nil || got != r {
			t.Errorf("ParseRule(%q) = %q, %v", r, got, err)
		}
	}
	for _, bad := range []string{"", "abort", "r-abort", "R-abort "} {
		if _, err := ParseRule(bad); err == nil || !strings.Contains(err.Error(), `unknown rule "`+bad+`"`) || !strings.Contains(err.Error(), "R-abort") {
			t.Errorf("ParseRule(%q): %v, want an error naming it and listing the rules", bad, err)
		}
	}
}

// TestRulesListsEveryConstant: Rules() is written by hand, so a Rule constant added without it
// would be rejected by --allow; the constants are read from the source.
func TestRulesListsEveryConstant(t *testing.T) {
	t.Parallel()
	listed := map[Rule]bool{}
	for _, r := range Rules() {
		listed[r] = true
	}
	declared := declaredRules(t)
	for _, r := range declared {
		if !listed[r] {
			t.Errorf("Rule constant %s is missing from Rules()", r)
		}
	}
	if len(listed) != len(declared) {
		t.Errorf("Rules() lists %d rules, the package declares %d", len(listed), len(declared))
	}
}
