package clientturn_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/wiretest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// The bodies of the table tests every provider-wire client dialect runs over its own rows.

// LibraryClean plays every embedded scenario against the mock at url with truth and noTruth
// (option noGroundTruth): a correct provider breaks no rule in either mode.
func LibraryClean(t *testing.T, url string, truth, noTruth Dialect) {
	t.Helper()
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

// Fault is one row of a dialect's fault table: the mock's fault switch and the rules it breaks.
type Fault[F ~string] struct {
	Fault    F
	Scenario string
	NoTruth  bool
	Want     []protocol.Rule
}

// Faults plays each row's scenario against a mock with its fault: exactly its rules break.
func Faults[F ~string](t *testing.T, start func(testing.TB, F) string, truth, noTruth Dialect, tests []Fault[F]) {
	t.Helper()
	for _, tt := range tests {
		t.Run(string(tt.Fault)+"/"+tt.Scenario, func(t *testing.T) {
			t.Parallel()
			url := start(t, tt.Fault)
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

// ErrorCase is one row of a dialect's CheckError table: an HTTP 429 to S, breaking the rule or not.
type ErrorCase struct {
	Name   string
	S      *protocol.Session
	H      http.Header
	Body   string
	Broken bool
}

// CheckErrors judges each row with d: the row's verdict, every violation of rule.
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

// Rule is one row of a dialect's checker table: a stream, maybe aborted, and the rules it breaks.
type Rule struct {
	Name    string
	Stream  string
	Aborted bool
	Want    []protocol.Rule
}

// CheckRules feeds each row's stream to a structure-only checker: exactly its rules break.
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
	if err := dialecttest.Feed(sse.NewDecoder(strings.NewReader(stream)), func(ev *sse.Event) { c.Observe(ev) }); err != nil {
		t.Fatal(err)
	}
	return c.Finish(nil)
}

// fuzzChecker feeds arbitrary streams to a checker: no panic, every violation names a rule.
func fuzzChecker(f *testing.F, newChecker func(*protocol.Session) protocol.Checker, seeds ...string) {
	for _, seed := range seeds {
		f.Add([]byte(seed))
	}
	session := NewSession(f, "parallel-tools", 1)
	f.Fuzz(func(t *testing.T, stream []byte) {
		s := *session
		c := newChecker(&s)
		err := dialecttest.Feed(sse.NewDecoder(strings.NewReader(string(stream))), func(ev *sse.Event) { c.Observe(ev) })
		for _, v := range c.Finish(err) {
			if v.Rule == "" {
				t.Fatalf("violation without a rule: %+v", v)
			}
		}
	})
}

// BenchObserve judges a 256-frame answer per op with a fresh checker, as at load (ns/frame).
func BenchObserve(b *testing.B, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker) {
	turn := wiretest.TextTurn(256)
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

// BenchObserveFrame judges one text frame per op on a warm checker without ground truth.
func BenchObserveFrame(b *testing.B, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker) {
	turn := wiretest.TextTurn(16)
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

// turnStream is the stream newWriter writes for turn, its mid-stream error included.
func turnStream(t testing.TB, newWriter func(io.Writer) TurnWriter, turn *scenarios.ScriptTurn) []byte {
	t.Helper()
	var buf bytes.Buffer
	wiretest.WriteTurn(t, newWriter(&buf), turn)
	return buf.Bytes()
}

// OtherText plays conforming turns of other content than the session's script, written by the
// wire's own encoder (newWriter), as a target whose model is not the mock sends them: for every
// scenario (plans aside) and every turn both scripts stream, seed 2's turn and the next
// scenario's judged against a session scripted for seed 1 at that turn (dialecttest.JudgeOther).
func OtherText(t *testing.T, rules []protocol.RuleSpec, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker) {
	t.Helper()
	kinds := dialecttest.RuleSet(t, rules)
	lib := scenarios.Embedded()
	names := dialecttest.Unplanned(t)
	for i, name := range names {
		sc, _ := lib.Get(name)
		want := sc.Render(1)
		next, _ := lib.Get(names[(i+1)%len(names)])
		for _, other := range []struct {
			script   *scenarios.Script
			sameName bool
		}{{sc.Render(2), true}, {next.Render(3), false}} {
			for turn := range min(len(want.Turns), len(other.script.Turns)) {
				ot := &other.script.Turns[turn]
				if ot.HTTPStatus != 0 || want.Turns[turn].HTTPStatus != 0 {
					continue // no stream: CheckError's
				}
				stream := turnStream(t, newWriter, ot)
				label := fmt.Sprintf("%s seed %d turn %d judged as %s seed 1", other.script.Scenario, other.script.Seed, turn, name)
				differs := other.sameName && stepText(ot) != stepText(&want.Turns[turn])
				dialecttest.JudgeOther(t, kinds, label, string(stream), differs, func(truth bool) []protocol.Violation {
					s := NewSession(t, name, 1)
					s.Turn, s.NoGroundTruth = turn, !truth
					c := newChecker(s)
					_ = dialecttest.Feed(sse.NewDecoderLimits(bytes.NewReader(stream), writerLimits), func(ev *sse.Event) { c.Observe(ev) })
					return c.Finish(nil)
				})
			}
		}
	}
}

// writerLimits decode the streams a wire's own writer wrote for a test: as large as any event
// the library makes (openai-responses repeats thinking-over-cap's 84,000 tokens on one line).
var writerLimits = sse.Limits{MaxLine: 16 << 20, MaxEvent: 16 << 20}

// stepText is the answer text a turn streams.
func stepText(turn *scenarios.ScriptTurn) string {
	var b strings.Builder
	for _, st := range turn.Steps {
		if st.Kind == scenarios.StepText {
			b.WriteString(st.Text)
		}
	}
	return b.String()
}

// Outcome is one row of a dialect's error-outcome table: a stream of a turn of scenario, ended
// by Cut (nil: cleanly), the Observation.Errors it must report and the rules it must break.
type Outcome struct {
	Name     string
	Scenario string
	Turn     int
	NoTruth  bool
	Stream   string
	Cut      error
	Errors   []string
	Want     []protocol.Rule
}

// CheckOutcomes feeds each row's stream to a checker: exactly its Errors and its rules.
func CheckOutcomes(t *testing.T, newChecker func(*protocol.Session) protocol.Checker, tests []Outcome) {
	t.Helper()
	for _, tt := range tests {
		s := NewSession(t, tt.Scenario, 1)
		s.Turn, s.NoGroundTruth = tt.Turn, tt.NoTruth
		c := newChecker(s)
		var errs []string
		_ = dialecttest.Feed(sse.NewDecoder(strings.NewReader(tt.Stream)), func(ev *sse.Event) {
			if obs := c.Observe(ev); obs.Error != "" {
				if obs.Kind != protocol.FrameTerminal {
					t.Errorf("%s: Observation.Error %q on a frame of kind %d, want FrameTerminal", tt.Name, obs.Error, obs.Kind)
				}
				errs = append(errs, obs.Error)
			}
		})
		if !slices.Equal(errs, tt.Errors) {
			t.Errorf("%s: Observation.Error %q, want %q", tt.Name, errs, tt.Errors)
		}
		vs := c.Finish(tt.Cut)
		if got := Rules(vs); !slices.Equal(got, tt.Want) {
			t.Errorf("%s: rules %v, want %v; violations %v", tt.Name, got, tt.Want, vs)
		}
	}
}

// ErrorOutcomes runs CheckOutcomes over the rows every provider wire shares (an error frame
// where the script has none, the scripted one, a cut), then the wire's own; errRule and
// contentRule are the wire's error and ground-truth rules.
func ErrorOutcomes(t *testing.T, newWriter func(io.Writer) TurnWriter, newChecker func(*protocol.Session) protocol.Checker, errRule, contentRule protocol.Rule, own ...Outcome) {
	t.Helper()
	text := func(scenario string, turn, nth int) int {
		return StepIndex(t, scenario, turn, scenarios.StepText, nth)
	}
	args := StepIndex(t, "parallel-tools", 0, scenarios.StepToolArgs, 1)
	crash := func(scenario string, turn, after int) string {
		return FailingTurn(t, newWriter, scenario, turn, after, "runtime crashed")
	}
	CheckOutcomes(t, newChecker, append([]Outcome{
		// The answer cut short by an error frame.
		{Name: "mid answer", Scenario: "plain-answer", Stream: crash("plain-answer", 0, text("plain-answer", 0, 5)), Errors: []string{"runtime crashed"}},
		// Inside the tool calls' arguments.
		{Name: "mid tool call", Scenario: "parallel-tools", Stream: crash("parallel-tools", 0, args), Errors: []string{"runtime crashed"}},
		// The scripted error: no violation, and its message reported all the same.
		{Name: "scripted", Scenario: "provider-error-midstream", Stream: FailingTurn(t, newWriter, "provider-error-midstream", 0, text("provider-error-midstream", 0, 39), "upstream model crashed (scripted)"),
			Errors: []string{"upstream model crashed (scripted)"}},
		// A script that fails at turn 1 (HTTP 503), an error frame at turn 0: the wrong turn,
		// and the turn's text short of the script.
		{Name: "wrong turn", Scenario: "provider-503-after-tool", Stream: crash("provider-503-after-tool", 0, text("provider-503-after-tool", 0, 0)),
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{errRule, contentRule}},
		// Without ground truth nothing is scripted.
		{Name: "no ground truth", Scenario: "provider-503-after-tool", NoTruth: true, Stream: crash("provider-503-after-tool", 0, text("provider-503-after-tool", 0, 0)), Errors: []string{"runtime crashed"}},
		// Cut inside the tool calls (a transport error, a stall, a truncation).
		{Name: "cut", Scenario: "parallel-tools", Stream: FailingTurn(t, newWriter, "parallel-tools", 0, args, ""), Cut: errors.Join(io.ErrUnexpectedEOF, errors.New("stalled"))},
	}, own...))
}

// CutAnswer is plain-answer's turn up to its sixth text piece (FailingTurn).
func CutAnswer(t testing.TB, newWriter func(io.Writer) TurnWriter, msg string) string {
	t.Helper()
	return FailingTurn(t, newWriter, "plain-answer", 0, StepIndex(t, "plain-answer", 0, scenarios.StepText, 5), msg)
}

// FailingTurn is the stream of turn of scenario up to step afterStep, then the error frame with
// msg, or nothing when msg is "" (a cut).
func FailingTurn(t testing.TB, newWriter func(io.Writer) TurnWriter, scenario string, turn, afterStep int, msg string) string {
	t.Helper()
	st := dialecttest.Script(t, scenario, 1).Turns[turn]
	st.Steps = st.Steps[:afterStep+1]
	if msg == "" {
		st.ErrorAfterStep = -1
		return string(turnStream(t, func(w io.Writer) TurnWriter { return cut{newWriter(w)} }, &st))
	}
	st.ErrorAfterStep, st.ErrorMessage = afterStep, msg
	return string(turnStream(t, newWriter, &st))
}

// cut is a writer whose turns end without their Finish, as a cut stream does.
type cut struct{ TurnWriter }

func (cut) Finish(*scenarios.ScriptTurn) error { return nil }

// StepIndex is the index of the nth (from 0) step of kind in turn of scenario (seed 1).
func StepIndex(t testing.TB, scenario string, turn int, kind scenarios.StepKind, nth int) int {
	t.Helper()
	for i, st := range dialecttest.Script(t, scenario, 1).Turns[turn].Steps {
		if st.Kind == kind {
			if nth == 0 {
				return i
			}
			nth--
		}
	}
	t.Fatalf("%s turn %d has no step #%d of kind %v", scenario, turn, nth, kind)
	return -1
}
