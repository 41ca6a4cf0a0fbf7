package loadgen

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// TestScriptedFirst: when a script has the first chunk and token due, per kind of client,
// from the scenario's constant timings (ttft 200 ms, itl 10 ms) worked out by hand.
func TestScriptedFirst(t *testing.T) {
	t.Parallel()
	const head = "name: x\ntiming:\n  ttft: 200ms\n  itl: 10ms\nturns:\n"
	ms := time.Millisecond
	optedIn := simchat.NewClient(true, simchat.Policy{IncludeThinking: true, IncludeToolCalls: true})
	noThinking := simchat.NewClient(true, simchat.Policy{})
	legacy := simchat.NewClient(false, simchat.Policy{})
	lastStepOfTurn0 := func(s *scenarios.Script) time.Duration { st := s.Turns[0].Steps; return st[len(st)-1].At }
	for _, tc := range []struct {
		name, turns string
		client      protocol.Client
		scale       float64
		// chunk and token are the due times worked out from the timings; the script is
		// passed for what depends on the seed (how many frames a tool's arguments take).
		chunk, token func(*scenarios.Script) time.Duration
	}{
		// the first text frame comes at the ttft, and carries the first token
		{"plain", "  - text: {tokens: 4}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 200 * ms }, func(*scenarios.Script) time.Duration { return 200 * ms }},
		// the mock's time scale scales the script
		{"scaled", "  - text: {tokens: 4}\n", optedIn, 0.05,
			func(*scenarios.Script) time.Duration { return 10 * ms }, func(*scenarios.Script) time.Duration { return 10 * ms }},
		// thinking is the first token; the answer follows 5 thinking tokens at 10 ms each
		{"thinking seen", "  - thinking: {tokens: 5}\n    text: {tokens: 4}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 250 * ms }, func(*scenarios.Script) time.Duration { return 200 * ms }},
		// a client not sent thinking has its first token with the answer
		{"thinking unseen", "  - thinking: {tokens: 5}\n    text: {tokens: 4}\n", noThinking, 1,
			func(*scenarios.Script) time.Duration { return 250 * ms }, func(*scenarios.Script) time.Duration { return 250 * ms }},
		// after a tool turn: turn 0's last frame, the tool's 300 ms, then turn 1's ttft
		{"after a tool", "  - toolCalls:\n      - {name: t, duration: 300ms}\n  - text: {tokens: 4}\n", optedIn, 1,
			func(s *scenarios.Script) time.Duration { return lastStepOfTurn0(s) + 300*ms + 200*ms },
			func(s *scenarios.Script) time.Duration { return lastStepOfTurn0(s) + 300*ms + 200*ms }},
		// a legacy client is sent the settled answer: due with the last of 4 answer tokens
		{"settled", "  - text: {tokens: 4}\n", legacy, 1,
			func(*scenarios.Script) time.Duration { return 230 * ms }, func(*scenarios.Script) time.Duration { return 230 * ms }},
		// a provider that fails before any stream has nothing due
		{"provider 429", "  - text: {tokens: 4}\nfaults:\n  httpError: {turn: 0, status: 429}\n", optedIn, 1,
			func(*scenarios.Script) time.Duration { return 0 }, func(*scenarios.Script) time.Duration { return 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, err := scenarios.Parse("x.yaml", []byte(head+tc.turns))
			if err != nil {
				t.Fatal(err)
			}
			script := sc.Render(7)
			got := scriptedFirst(script, tc.client, tc.scale)
			if want := (scriptedLatency{chunk: tc.chunk(script), token: tc.token(script)}); got != want {
				t.Errorf("scriptedFirst = chunk %v token %v, want chunk %v token %v", got.chunk, got.token, want.chunk, want.token)
			}
		})
	}
}

// fixedLibrary is a library of one scenario, "fixed": a constant 400 ms ttft, then tokens
// tokens 20 ms apart.
func fixedLibrary(t *testing.T, tokens int) *scenarios.Library {
	t.Helper()
	dir := t.TempDir()
	doc := fmt.Sprintf("name: fixed\ntiming:\n  ttft: 400ms\n  itl: 20ms\nturns:\n  - text: {tokens: %d}\n", tokens)
	if err := os.WriteFile(filepath.Join(dir, "fixed.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := scenarios.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestOverheadIsMeasuredLessScripted: in a seeded run against the reference runtime, the
// ttfc.overhead and ttft.overhead histograms hold exactly each session's measured ttfc less its
// scripted one, worked out here from the scenario alone (a constant 400 ms ttft at the test's
// time scale) and each session's own ttfc, as the run reported it.
func TestOverheadIsMeasuredLessScripted(t *testing.T) {
	t.Parallel()
	lib := fixedLibrary(t, 20)
	scripted := time.Duration(float64(400*time.Millisecond) * testScale)
	st := newStackOf(t, lib, testScale)
	cfg := st.config(mixOf(t, []string{"fixed"}, optedInNone()), 4, 24)
	cfg.Library, cfg.NoLeakCheck = lib, true
	want := measure.NewHistograms()
	var mu sync.Mutex
	cfg.Outputs = append(cfg.Outputs, LatencyFunc(func(l Latencies) {
		if l.TimeToFirstChunk == 0 {
			return
		}
		over := max(l.TimeToFirstChunk-scripted, 0)
		mu.Lock()
		defer mu.Unlock()
		for _, m := range []measure.Metric{measure.FirstChunkOverhead, measure.FirstTokenOverhead} {
			if err := want.Record(measure.Key{Metric: m, Scenario: l.Scenario, Dialect: l.Dialect}, over); err != nil {
				t.Error(err)
			}
		}
	}))
	run := runLoad(t, cfg)
	if !run.Summary.Verdict.Pass {
		t.Fatalf("the run failed:\n%s", describe(run))
	}
	for _, m := range []measure.Metric{measure.FirstChunkOverhead, measure.FirstTokenOverhead} {
		got, n := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == m })
		exp, _ := want.Merged(func(k measure.Key) bool { return k.Metric == m })
		if n == 0 || got.TotalCount() != 24 || !got.Equals(exp) {
			t.Errorf("%s: %d values (p50 %d µs, max %d µs), want the 24 sessions' ttfc − %v (p50 %d µs, max %d µs)",
				m, got.TotalCount(), got.ValueAtQuantile(50), got.Max(), scripted, exp.ValueAtQuantile(50), exp.Max())
		}
	}
	ttfc, _ := run.Summary.OverallMetric(measure.FirstChunk)
	over, ok := run.Summary.OverallMetric(measure.FirstChunkOverhead)
	if !ok || ttfc.Count != over.Count || ttfc.Min < scripted.Microseconds() {
		t.Errorf("overall ttfc %+v and its overhead %+v: want one overhead per ttfc, every ttfc at or after the scripted %v", ttfc, over, scripted)
	}
}
