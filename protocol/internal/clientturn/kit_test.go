package clientturn_test

// The test kit of the provider-wire client dialects: a driver playing a whole session through a
// dialect as the load generator does, against a mock the test starts, and the table tests and
// benchmarks every dialect runs over its own rows.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/wiretest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Dialect is a client dialect that plays the tool loop and judges HTTP errors.
type Dialect interface {
	protocol.Client
	protocol.MultiTurn
	protocol.ErrorChecker
}

// NoTruth is the noGroundTruth option, as a mix profile gives it.
var NoTruth = protocol.Options{"noGroundTruth": true}

// Configured is d configured with o, as the load generator configures a mix target.
func Configured(t testing.TB, d protocol.Dialect, o protocol.Options) Dialect {
	t.Helper()
	c, err := d.Configure("", o)
	if err != nil {
		t.Fatal(err)
	}
	return c.(Dialect)
}

// NewSession is the session the load generator would plan for scenario at seed.
func NewSession(t testing.TB, scenario string, seed uint64) *protocol.Session {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(scenario)
	if !ok {
		t.Fatalf("no embedded scenario %q", scenario)
	}
	id := fmt.Sprintf("%s-%d", scenario, seed)
	input := scenarios.Directive{Scenario: scenario, Seed: seed, Session: id}.String()
	if sc.Prompt != "" {
		input += " " + sc.Prompt
	}
	return &protocol.Session{ID: id, Input: input, Expected: sc.Render(seed).Expected()}
}

// Result is what a played session left.
type Result struct {
	Violations []protocol.Violation
	// Requests is how many turns were requested; Statuses their HTTP statuses.
	Requests int
	Statuses []int
	// Kinds counts the observations by kind over all turns.
	Kinds map[protocol.FrameKind]int
	// Tokens and UsageTokens sum the observations' token counts over all turns.
	Tokens, UsageTokens int
}

// Play runs every turn of s against baseURL with d, as the load generator does.
func Play(t testing.TB, d Dialect, baseURL string, s *protocol.Session) Result {
	t.Helper()
	res := Result{Kinds: map[protocol.FrameKind]int{}}
	for turn := 0; turn < d.Turns(s); turn++ {
		s.Turn = turn
		req, err := d.NewRequest(context.Background(), baseURL, s)
		if err != nil {
			t.Fatalf("%s turn %d: NewRequest: %v", s.ID, turn, err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s turn %d: %v", s.ID, turn, err)
		}
		res.Requests++
		res.Statuses = append(res.Statuses, resp.StatusCode)
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			res.Violations = append(res.Violations, d.CheckError(resp.StatusCode, resp.Header, body, s)...)
			break
		}
		res.Violations = append(res.Violations, d.CheckHeaders(resp.Header, s)...)
		checker := d.NewChecker(s)
		streamErr := dialecttest.Feed(protocol.NewDecoder(d, resp.Body), func(ev *sse.Event) {
			obs := checker.Observe(ev)
			res.Kinds[obs.Kind]++
			res.Tokens += obs.Tokens
			res.UsageTokens += obs.UsageTokens
		})
		resp.Body.Close()
		res.Violations = append(res.Violations, checker.Finish(streamErr)...)
	}
	return res
}

// Rules lists the distinct rules of vs in order of first appearance.
func Rules(vs []protocol.Violation) []protocol.Rule {
	var out []protocol.Rule
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	return out
}

// TurnWriter is a provider wire's stream writer, as the mock drives it.
type TurnWriter = wiretest.TurnWriter

// Events plays turn through newWriter's writer and decodes it, each event with its own data.
func Events(t testing.TB, newWriter func(io.Writer) TurnWriter, turn *scenarios.ScriptTurn) []sse.Event {
	t.Helper()
	var buf bytes.Buffer
	wiretest.WriteTurn(t, newWriter(&buf), turn)
	return dialecttest.DecodeAll(t, []string{buf.String()})
}

// TextSession is a session whose one turn is turn's text, for benchmarks.
func TextSession(turn *scenarios.ScriptTurn) *protocol.Session {
	var text []byte
	for _, st := range turn.Steps {
		text = append(text, st.Text...)
	}
	return &protocol.Session{ID: "bench", Expected: scenarios.Expected{
		Turns: []scenarios.ExpectedTurn{{Text: string(text), Final: true}}, FailedTurn: -1,
	}}
}

// CheckKinds fails t unless s's turns were classified and counted as the load generator needs.
func CheckKinds(t testing.TB, s *protocol.Session, res Result) {
	t.Helper()
	want := map[protocol.FrameKind]int{}
	for turn := 0; turn < res.Requests && turn < len(s.Expected.Turns); turn++ {
		et := &s.Expected.Turns[turn]
		if et.Text != "" {
			want[protocol.FrameAnswer] = 1
		}
		if et.Thinking != "" {
			want[protocol.FrameThinking] = 1
		}
		want[protocol.FrameToolStart] += len(et.ToolCalls)
		if res.Statuses[turn] == http.StatusOK {
			want[protocol.FrameTerminal]++
		}
	}
	for kind, n := range want {
		if res.Kinds[kind] < n {
			t.Errorf("%s: %d observations of kind %d, want at least %d (all: %v)", s.ID, res.Kinds[kind], kind, n, res.Kinds)
		}
	}
	checkTokens(t, s, res)
}

// checkTokens checks Tokens against the played turns' text, UsageTokens the completed turns'.
func checkTokens(t testing.TB, s *protocol.Session, res Result) {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(s.Expected.Scenario)
	if !ok {
		return // a hand-built session: no script to compare with
	}
	script := sc.Render(s.Expected.Seed)
	var tokens, usage int
	for turn := 0; turn < res.Requests && turn < len(script.Turns); turn++ {
		st := &script.Turns[turn]
		for _, step := range st.Steps {
			if step.Kind != scenarios.StepToolArgs {
				tokens += step.Tokens
			}
		}
		if res.Statuses[turn] == http.StatusOK && st.ErrorAfterStep < 0 {
			usage += st.OutputTokens
		}
	}
	if res.Tokens != tokens {
		t.Errorf("%s: observations counted %d thinking and text tokens, the script streamed %d", s.ID, res.Tokens, tokens)
	}
	if res.UsageTokens != usage {
		t.Errorf("%s: usage reports sum to %d output tokens, the script's completed turns have %d", s.ID, res.UsageTokens, usage)
	}
}
