package jsonwire

import "testing"

func TestCursor(t *testing.T) {
	t.Parallel()
	c := NewCursor([]string{"", "Let me ", "", "think.", "Done"})
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
		if got := Advance(&c, []byte(s.piece)); got != s.ok {
			t.Fatalf("Advance(%q) = %t, want %t (cursor %+v)", s.piece, got, s.ok, c)
		}
	}
	if !c.Done() || c.Matched() != len("Let me think.Done") || c.Total() != c.Matched() {
		t.Errorf("cursor not done after the whole text: %+v", c)
	}
	c.RestartAt(3)
	if c.Next(4) != "thin" || c.Matched() != len("Let me ") {
		t.Errorf("restartAt(3): next %q, n %d", c.Next(4), c.Matched())
	}
}
