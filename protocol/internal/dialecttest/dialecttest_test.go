package dialecttest

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

func TestSameRules(t *testing.T) {
	t.Parallel()
	v := func(rules ...protocol.Rule) []protocol.Violation {
		var out []protocol.Violation
		for _, r := range rules {
			out = append(out, protocol.Violation{Rule: r, Detail: "x"})
		}
		return out
	}
	cases := []struct {
		name string
		vs   []protocol.Violation
		want []protocol.Rule
		same bool
	}{
		{"none wanted, none seen", nil, nil, true},
		{"same rules, other order", v(protocol.RTerminal, protocol.RFraming), []protocol.Rule{protocol.RFraming, protocol.RTerminal}, true},
		{"one missing", v(protocol.RTerminal), []protocol.Rule{protocol.RFraming, protocol.RTerminal}, false},
		{"one extra", v(protocol.RTerminal, protocol.RFraming), []protocol.Rule{protocol.RTerminal}, false},
		{"same count, other rule", v(protocol.RConverge), []protocol.Rule{protocol.RTerminal}, false},
		{"a rule twice for two different", v(protocol.RTerminal, protocol.RTerminal), []protocol.Rule{protocol.RTerminal, protocol.RFraming}, false},
	}
	for _, tc := range cases {
		if got := SameRules(tc.vs, tc.want); got != tc.same {
			t.Errorf("%s: SameRules(%v, %v) = %t, want %t", tc.name, Rules(tc.vs), tc.want, got, tc.same)
		}
	}
}

// abortSpy records whether the session looked aborted while frames were observed.
type abortSpy struct {
	s               *protocol.Session
	sawAborted      bool
	frames          int
	abortedAtFinish bool
}

func (c *abortSpy) Observe(*sse.Event) protocol.Observation {
	c.sawAborted = c.sawAborted || c.s.Aborted
	c.frames++
	return protocol.Observation{}
}

func (c *abortSpy) Finish(error) []protocol.Violation {
	c.abortedAtFinish = c.s.Aborted
	return nil
}

// Check hides the abort until Finish, as the load generator learns it only then.
func TestCheckLearnsAbortAtFinish(t *testing.T) {
	t.Parallel()
	s := &protocol.Session{Aborted: true}
	spy := &abortSpy{s: s}
	Check(t, []string{Raw(`{"a":1}`), Raw(`{"b":2}`)}, s, func() protocol.Checker {
		spy.sawAborted = s.Aborted
		return spy
	})
	if spy.sawAborted || !spy.abortedAtFinish || spy.frames != 2 || !s.Aborted {
		t.Errorf("checker saw aborted %t before Finish, %t at Finish, %d frames; session aborted %t afterwards: want false, true, 2, true",
			spy.sawAborted, spy.abortedAtFinish, spy.frames, s.Aborted)
	}
}

// The edits leave the frames they are given as they were.
func TestEditsCopy(t *testing.T) {
	t.Parallel()
	frames := []string{"a", "b", "c"}
	if got := Insert(frames[:2], 1, "x"); len(got) != 3 || got[1] != "x" || frames[1] != "b" || frames[2] != "c" {
		t.Errorf("Insert = %q, frames now %q", got, frames)
	}
	if got := Remove(frames, 0); len(got) != 2 || got[0] != "b" || frames[0] != "a" {
		t.Errorf("Remove = %q, frames now %q", got, frames)
	}
	if got := Replace(frames, 2, "z"); got[2] != "z" || frames[2] != "c" {
		t.Errorf("Replace = %q, frames now %q", got, frames)
	}
	if i, j := Index(t, frames, "b", 0), LastIndex(t, frames, "c"); i != 1 || j != 2 {
		t.Errorf("Index = %d, LastIndex = %d, want 1 and 2", i, j)
	}
}
