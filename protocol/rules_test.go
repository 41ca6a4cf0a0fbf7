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
