package simchat

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
)

func TestCursor(t *testing.T) {
	t.Parallel()
	c := newCursor([]string{"", "Let me ", "", "think.", "Done"})
	steps := []struct {
		piece string
		ok    bool
	}{
		{"Let", true},       // inside the first non-empty part
		{" me think", true}, // across an empty part into the next
		{"x", false},        // a mismatch does not move the cursor
		{".Do", true},       // across a part boundary
		{"nex", false},      // longer than what is left
		{"ne", true},        // exactly the rest
		{"", true},          // nothing to match
		{"!", false},        // past the end
	}
	for _, s := range steps {
		if got := advance(&c, []byte(s.piece)); got != s.ok {
			t.Fatalf("advance(%q) = %t, want %t (cursor %+v)", s.piece, got, s.ok, c)
		}
	}
	if !c.done() || c.n != len("Let me think.Done") {
		t.Errorf("cursor not done after the whole text: %+v", c)
	}
	c.restartAt(3)
	if c.next(4) != "thin" || c.n != len("Let me ") {
		t.Errorf("restartAt(3): next %q, n %d", c.next(4), c.n)
	}
}

func TestViolationsOnePerRule(t *testing.T) {
	t.Parallel()
	var v Violations
	long := strings.Repeat("é", 300) // 600 bytes of two-byte runes
	v.Add(protocol.RConverge, "first: %s", long)
	v.Add(protocol.RConverge, "second")
	v.Add(protocol.RTerminal, "other")
	v.Add(protocol.RConverge, "third")
	got := v.List()
	if len(got) != 2 || got[0].Rule != protocol.RConverge || got[1].Rule != protocol.RTerminal {
		t.Fatalf("violations %v, want one R-converge and one R-terminal", got)
	}
	d := got[0].Detail
	if !strings.HasPrefix(d, "first: ") || !strings.HasSuffix(d, "… (and 2 more)") || !utf8.ValidString(d) || len(d) > maxDetail+20 {
		t.Errorf("detail %q: want the first one, shortened on a rune boundary, with the count of the others", d)
	}
	if !v.Has(protocol.RTerminal) || v.Has(protocol.RFraming) {
		t.Error("Has disagrees with the list")
	}
}
