package protocol

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streambench/streambench/scenarios"
)

func TestViolationsOnePerRule(t *testing.T) {
	t.Parallel()
	var v Violations
	long := strings.Repeat("é", 300) // 600 bytes of two-byte runes
	v.Add(RConverge, "first: %s", long)
	v.Add(RConverge, "second")
	v.Add(RTerminal, "other")
	v.Add(RConverge, "third")
	got := v.List()
	if len(got) != 2 || got[0].Rule != RConverge || got[1].Rule != RTerminal {
		t.Fatalf("violations %v, want one R-converge and one R-terminal", got)
	}
	d := got[0].Detail
	if !strings.HasPrefix(d, "first: ") || !strings.HasSuffix(d, "… (and 2 more)") || !utf8.ValidString(d) || len(d) > maxDetail+20 {
		t.Errorf("detail %q: want the first one, shortened on a rune boundary, with the count of the others", d)
	}
}

// TestCheckEventStream: an event stream's Content-Type passes; another, or none, is one
// R-headers violation quoting what was seen.
func TestCheckEventStream(t *testing.T) {
	t.Parallel()
	if v := CheckEventStream(http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}); v != nil {
		t.Errorf("an event stream: %v", v)
	}
	for _, ct := range []string{"application/json", ""} {
		v := CheckEventStream(http.Header{"Content-Type": {ct}})
		if len(v) != 1 || v[0].Rule != RHeaders || !strings.Contains(v[0].Detail, "expected text/event-stream, saw \""+ct+"\"") {
			t.Errorf("Content-Type %q: %v, want one R-headers violation quoting it", ct, v)
		}
	}
}

// TestMatchToolCall: a streamed call answers the scripted one of its id, else the earliest
// unused one of its name, else none.
func TestMatchToolCall(t *testing.T) {
	t.Parallel()
	script := []scenarios.ScriptToolCall{{ID: "a", Name: "search"}, {ID: "b", Name: "search"}, {ID: "c", Name: "fetch"}}
	used := []bool{true, false, false}
	for _, tc := range []struct {
		id, name string
		want     int
	}{
		{"c", "search", 2},   // the id wins over the name
		{"a", "search", 0},   // a used call's id is still its own (the caller reports the repeat)
		{"x", "search", 1},   // an unknown id: the earliest unused call of the name
		{"x", "weather", -1}, // neither
	} {
		if got := MatchToolCall(script, used, tc.id, tc.name); got != tc.want {
			t.Errorf("MatchToolCall(%s, %s) = %d, want %d", tc.id, tc.name, got, tc.want)
		}
	}
}
