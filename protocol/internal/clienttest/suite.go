package clienttest

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// The bodies of the table tests every provider-wire client dialect runs: each dialect's test
// keeps its own rows (faults, rules, error shapes, with a comment each) and hands them here,
// so the wires are held to the same procedure.

// LibraryClean plays every embedded scenario, every turn, against the mock with truth (ground
// truth) and noTruth (WithNoGroundTruth): a correct provider breaks no rule in either mode.
func LibraryClean(t *testing.T, truth, noTruth Dialect) {
	t.Helper()
	url := StartMock(t, mockprovider.FaultNone)
	multi := 0
	for _, mode := range []struct {
		name  string
		d     Dialect
		truth bool
	}{{"ground-truth", truth, true}, {"no-ground-truth", noTruth, false}} {
		for _, name := range scenarios.Embedded().Names() {
			for seed := uint64(1); seed <= 3; seed++ {
				s := NewSession(t, name, seed)
				res := Play(t, mode.d, url, s)
				if len(res.Violations) > 0 {
					t.Errorf("%s %s seed %d: %d requests, statuses %v: %v", mode.name, name, seed, res.Requests, res.Statuses, res.Violations)
				}
				if mode.truth {
					CheckKinds(t, s, res)
				}
				if res.Requests > 1 {
					multi++
				}
				if want := mode.d.Turns(s); res.Requests != want {
					t.Errorf("%s %s seed %d: %d requests, want %d", mode.name, name, seed, res.Requests, want)
				}
			}
		}
	}
	if multi == 0 {
		t.Error("no session played more than one turn: the tool loop was never exercised")
	}
}

// Fault is one row of a dialect's fault table: the mock's fault switch, the scenario that
// exercises it, whether the client judges without ground truth, and the rules it must break.
type Fault struct {
	Fault    mockprovider.Fault
	Scenario string
	NoTruth  bool
	Want     []protocol.Rule
}

// Faults plays each row's scenario at seed 7 against a mock with the row's fault, with truth
// or, for a NoTruth row, noTruth (WithNoGroundTruth), and fails t unless exactly the row's
// rules break.
func Faults(t *testing.T, truth, noTruth Dialect, tests []Fault) {
	t.Helper()
	for _, tt := range tests {
		t.Run(string(tt.Fault)+"/"+tt.Scenario, func(t *testing.T) {
			t.Parallel()
			url := StartMock(t, tt.Fault)
			d := truth
			if tt.NoTruth {
				d = noTruth
			}
			res := Play(t, d, url, NewSession(t, tt.Scenario, 7))
			if got := Rules(res.Violations); !slices.Equal(got, tt.Want) {
				t.Errorf("rules %v, want %v; violations: %v", got, tt.Want, res.Violations)
			}
		})
	}
}

// ErrorCase is one row of a dialect's CheckError table: a non-200 answer (always HTTP 429) to
// session S and whether it breaks the wire's error rule.
type ErrorCase struct {
	Name   string
	S      *protocol.Session
	H      http.Header
	Body   string
	Broken bool
}

// CheckErrors judges each row with d and fails t unless the row's verdict holds and every
// violation is of rule.
func CheckErrors(t *testing.T, d Dialect, rule protocol.Rule, tests []ErrorCase) {
	t.Helper()
	for _, tt := range tests {
		vs := d.CheckError(http.StatusTooManyRequests, tt.H, []byte(tt.Body), tt.S)
		if got := len(vs) > 0; got != tt.Broken {
			t.Errorf("%s: violations %v, want broken=%t", tt.Name, vs, tt.Broken)
		}
		for _, v := range vs {
			if v.Rule != rule {
				t.Errorf("%s: rule %s, want %s", tt.Name, v.Rule, rule)
			}
		}
	}
}

// Rule is one row of a dialect's checker table: a hand-written stream, whether the client
// cut it (Aborted), and the rules it must break.
type Rule struct {
	Name    string
	Stream  string
	Aborted bool
	Want    []protocol.Rule
}

// CheckRules feeds each row's stream to a structure-only checker from newChecker and fails t
// unless exactly the row's rules break.
func CheckRules(t *testing.T, newChecker func(*protocol.Session) protocol.Checker, tests []Rule) {
	t.Helper()
	for _, tt := range tests {
		vs := judge(t, newChecker, tt.Stream, tt.Aborted)
		if got := Rules(vs); !slices.Equal(got, tt.Want) {
			t.Errorf("%s: rules %v, want %v; violations %v", tt.Name, got, tt.Want, vs)
		}
	}
}

// judge feeds a raw stream to a structure-only checker (aborted: cut by the client).
func judge(t *testing.T, newChecker func(*protocol.Session) protocol.Checker, stream string, aborted bool) []protocol.Violation {
	t.Helper()
	s := NewSession(t, "plain-answer", 1)
	s.NoGroundTruth, s.Aborted = true, aborted
	c := newChecker(s)
	dec := sse.NewDecoder(strings.NewReader(stream))
	var ev sse.Event
	for {
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Observe(&ev)
	}
	return c.Finish(nil)
}

// FuzzChecker feeds arbitrary streams (seeded with seeds) to a ground-truth checker from
// newChecker on the parallel-tools scenario: it must never panic, and every violation names a
// rule.
func FuzzChecker(f *testing.F, newChecker func(*protocol.Session) protocol.Checker, seeds ...string) {
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	session := NewSession(f, "parallel-tools", 1)
	f.Fuzz(func(t *testing.T, stream []byte) {
		s := *session
		c := newChecker(&s)
		dec := sse.NewDecoder(strings.NewReader(string(stream)))
		var ev sse.Event
		var err error
		for err = dec.Next(&ev); err == nil; err = dec.Next(&ev) {
			c.Observe(&ev)
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		for _, v := range c.Finish(err) {
			if v.Rule == "" {
				t.Fatalf("violation without a rule: %+v", v)
			}
		}
	})
}

// BenchObserve judges a whole 256-frame answer, written by newWriter, against its ground
// truth per op (a fresh checker from newChecker each time, as the load generator makes one per
// stream) and reports the cost and allocations per frame.
func BenchObserve(b *testing.B, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker) {
	turn := TextTurn(256)
	events := Events(b, newWriter, turn)
	s := TextSession(turn)
	b.ReportAllocs()
	for b.Loop() {
		c := newChecker(s)
		for i := range events {
			c.Observe(&events[i])
		}
		if vs := c.Finish(nil); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/frame")
}

// BenchObserveFrame judges one text frame per op on a warm checker from newChecker without
// ground truth (a cursor would run out of script).
func BenchObserveFrame(b *testing.B, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker) {
	turn := TextTurn(16)
	events := Events(b, newWriter, turn)
	s := TextSession(turn)
	s.NoGroundTruth = true
	c := newChecker(s)
	for i := 0; i < 3; i++ {
		c.Observe(&events[i]) // start, first blocks: the per-stream setup
	}
	frame := &events[3]
	b.ReportAllocs()
	for b.Loop() {
		c.Observe(frame)
	}
}
