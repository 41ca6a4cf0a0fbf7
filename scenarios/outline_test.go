package scenarios

import (
	"strings"
	"testing"
)

// TestWriteOutline outlines embedded scenarios: a tool turn, an HTTP failure and a client
// abort each show as such.
func TestWriteOutline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		scenario string
		want     []string
	}{
		// Two turns, the first calling a tool with its _sim arguments.
		{"preamble-tool", []string{"# Rendered with seed 3", "## turn 0: ", "## turn 1", "tool call call_", `"_sim":{"ms":`, "text: "}},
		// A turn refused before any stream.
		{"provider-429", []string{"## turn 0: HTTP 429"}},
		// The client's behaviour closes the outline.
		{"abort-mid-answer", []string{"\nclient: abort after 30 chunks\n"}},
	} {
		s, ok := Embedded().Get(tc.scenario)
		if !ok {
			t.Fatalf("no embedded scenario %q", tc.scenario)
		}
		var b strings.Builder
		if err := s.WriteOutline(&b, 3); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: outline lacks %q:\n%s", tc.scenario, want, b.String())
			}
		}
	}
}
