package scenarios

import (
	"strings"
	"testing"
)

func TestParseDirective(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		want    Directive
		ok      bool
		wantErr string
	}{
		// No directive at all is not an error.
		{"absent", "just a question", Directive{}, false, ""},
		// The canonical form.
		{"full", "[[streambench scenario=plain-answer seed=7 session=s-1]]", Directive{"plain-answer", 7, "s-1", "", ""}, true, ""},
		// Anywhere in the text, with keys in any order and extra spaces.
		{"embedded", "hi there [[streambench  session=abc seed=18446744073709551615 scenario=x ]] please", Directive{"x", 18446744073709551615, "abc", "", ""}, true, ""},
		// Session is optional.
		{"no session", "[[streambench scenario=x seed=0]]", Directive{"x", 0, "", "", ""}, true, ""},
		// Only the first directive counts.
		{"first wins", "[[streambench scenario=a seed=1]] [[streambench scenario=b seed=2]]", Directive{"a", 1, "", "", ""}, true, ""},
		// Unterminated.
		{"unterminated", "[[streambench scenario=x seed=1", Directive{}, true, "missing closing"},
		// Seed must be a number.
		{"bad seed", "[[streambench scenario=x seed=abc]]", Directive{}, true, `seed "abc"`},
		// Negative seeds do not fit uint64.
		{"negative seed", "[[streambench scenario=x seed=-1]]", Directive{}, true, "seed"},
		// Scenario is required.
		{"missing scenario", "[[streambench seed=1]]", Directive{}, true, "missing scenario"},
		// Seed is required.
		{"missing seed", "[[streambench scenario=x]]", Directive{}, true, "missing seed"},
		// Unknown keys are typos.
		{"unknown key", "[[streambench scenario=x seed=1 sede=2]]", Directive{}, true, `unknown key "sede"`},
		// A field without '='.
		{"bare word", "[[streambench scenario=x seed=1 oops]]", Directive{}, true, "key=value"},
		// An empty value.
		{"empty value", "[[streambench scenario= seed=1]]", Directive{}, true, "key=value"},
		// Repeated keys are ambiguous.
		{"repeated", "[[streambench scenario=x scenario=y seed=1]]", Directive{}, true, "twice"},
		// The keyword must be followed by a space.
		{"glued", "[[streambenchscenario=x seed=1]]", Directive{}, true, "space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok, err := ParseDirective(tt.text)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDirectiveRoundTrip(t *testing.T) {
	t.Parallel()
	for _, d := range []Directive{{"plain-answer", 1, "sess-1", "", ""}, {"x", 0, "", "", ""}, {"tool-chain", 1<<64 - 1, "a/b:c", "0.1", ""}, {"preamble-tool", 7, "s-2", "", "custom_"}} {
		text := "please answer " + d.String() + " thanks"
		got, ok, err := ParseDirective(text)
		if err != nil || !ok || got != d {
			t.Errorf("ParseDirective(%q) = %+v, %v, %v; want %+v", text, got, ok, err, d)
		}
	}
}

func FuzzParseDirective(f *testing.F) {
	f.Add("[[streambench scenario=plain-answer seed=7 session=s-1]]")
	f.Add("[[streambench scenario=x seed=1")
	f.Add("text [[streambench]] more")
	f.Add("[[streambench scenario=日本 seed=99999999999999999999]]")
	f.Add("[[streambench scenario=x seed=1 toolPrefix=custom_]]")
	f.Fuzz(func(t *testing.T, text string) {
		d, ok, err := ParseDirective(text)
		if !ok && err != nil {
			t.Fatalf("error %v without a directive", err)
		}
		if ok && err == nil {
			if d.Scenario == "" {
				t.Fatal("accepted a directive without a scenario")
			}
			// What was accepted must survive a round trip.
			if strings.ContainsAny(d.Scenario+d.Session+d.Child, " \t\n]") {
				return
			}
			again, ok2, err2 := ParseDirective(d.String())
			if err2 != nil || !ok2 || again != d {
				t.Fatalf("round trip of %+v gave %+v, %v, %v", d, again, ok2, err2)
			}
		}
	})
}

// WithChild and WithToolPrefix write a swarm child's path, or the prefix the provider gives tool
// names, into a message's directive in place, leaving the rest of the text as it was. Only what
// every provider wire allows in a tool name may prefix one.
func TestDirectiveWith(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, value, want string
		with                  func(text, value string) (string, bool)
		got                   func(Directive) string
		bad                   map[string]string // a directive → part of its error
	}{
		{"WithChild", "hi [[streambench scenario=swarm-depth2 seed=7 session=s-1]] there", "0.1",
			"hi [[streambench scenario=swarm-depth2 seed=7 session=s-1 child=0.1]] there", WithChild,
			func(d Directive) string { return d.Child },
			map[string]string{"[[streambench scenario=a seed=1 child=0 child=1]]": "child given twice"}},
		{"WithToolPrefix", "hi [[streambench scenario=preamble-tool seed=7 session=s-1]] there", "custom_",
			"hi [[streambench scenario=preamble-tool seed=7 session=s-1 toolPrefix=custom_]] there", WithToolPrefix,
			func(d Directive) string { return d.ToolPrefix },
			map[string]string{
				"[[streambench scenario=a seed=1 toolPrefix=a toolPrefix=b]]":                  "toolPrefix given twice",
				"[[streambench scenario=a seed=1 toolPrefix=mcp.x]]":                           "only ASCII letters",
				"[[streambench scenario=a seed=1 toolPrefix=" + strings.Repeat("p", 33) + "]]": "1 to 32",
			}},
	} {
		out, ok := tc.with(tc.in, tc.value)
		if !ok || out != tc.want {
			t.Fatalf("%s: %q, %v", tc.name, out, ok)
		}
		if d, found, err := ParseDirective(out); err != nil || !found || tc.got(d) != tc.value || d.Session != "s-1" {
			t.Fatalf("parse %q: %+v %v %v", out, d, found, err)
		}
		if _, ok := tc.with("no directive here", tc.value); ok {
			t.Errorf("%s found a directive in text without one", tc.name)
		}
		for text, want := range tc.bad {
			if _, _, err := ParseDirective(text); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error containing %q", text, err, want)
			}
		}
	}
}
