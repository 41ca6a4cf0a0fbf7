package loadgen

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// testScale speeds the mock's script and the runtime's tools up 20×.
const testScale = 0.05

// stack is an in-process mock provider and reference runtime, each on its own httptest server.
type stack struct {
	mockURL, runtimeURL string
	scale               float64
}

func newStack(t *testing.T, scale float64, faults ...string) *stack {
	t.Helper()
	return newStackOf(t, scenarios.Embedded(), scale, faults...)
}

// newStackOf is newStack with the mock playing lib's scenarios.
func newStackOf(t *testing.T, lib *scenarios.Library, scale float64, faults ...string) *stack {
	t.Helper()
	return newStackWrapped(t, lib, scale, nil, faults...)
}

// newStackWrapped is newStackOf with the mock's handler wrapped by wrapMock (nil: as it is),
// for a test that changes how the provider behaves.
func newStackWrapped(t *testing.T, lib *scenarios.Library, scale float64, wrapMock func(http.Handler) http.Handler, faults ...string) *stack {
	t.Helper()
	mock, err := mockprovider.New(mockprovider.Options{Library: lib, TimeScale: scale})
	if err != nil {
		t.Fatal(err)
	}
	var mh http.Handler = mock
	if wrapMock != nil {
		mh = wrapMock(mock)
	}
	mts := httptest.NewUnstartedServer(ownGauges(mh))
	mts.Config.Protocols = mockprovider.Protocols()
	mts.Start()
	f, err := agentruntime.ParseFaults(faults)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := agentruntime.New(agentruntime.Options{ProviderURL: mts.URL, Faults: f, ToolTimeScale: scale, Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	rts := httptest.NewServer(ownGauges(rt.Handler()))
	t.Cleanup(func() {
		rts.CloseClientConnections()
		rts.Close()
		_ = rt.Close()
		mts.CloseClientConnections()
		mts.Close()
	})
	return &stack{mockURL: mts.URL, runtimeURL: rts.URL, scale: scale}
}

// mixOf builds a one-purpose mix: the given scenarios, equally weighted, through profiles.
func mixOf(t *testing.T, scenarioNames []string, profiles ...Profile) *Mix {
	t.Helper()
	scen := map[string]float64{}
	for _, s := range scenarioNames {
		scen[s] = 1
	}
	m, err := NewMix("test", 3, scen, profiles)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Client profiles for the self-proof mixes (functions, so no test shares a profile's maps).

// optedInAll is opted-in sim-chat against both providers' deployments with every event.
func optedInAll() Profile {
	all := protocol.Options{"policy": "all"}
	return Profile{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1,
		Targets: []Target{{Slug: "openai-all", Options: all}, {Slug: "anthropic-all", Options: all}}}
}

// optedInNone is opted-in sim-chat against deployments that send text only.
func optedInNone() Profile {
	return Profile{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1,
		Targets: []Target{{Slug: "openai-none"}, {Slug: "anthropic-none"}}}
}

// legacyAll is legacy sim-chat against a deployment with every event.
func legacyAll() Profile {
	return Profile{Dialect: "sim-chat", Weight: 1, Targets: []Target{{Slug: "openai-all", Options: protocol.Options{"policy": "all"}}}}
}

// canvas is sim-canvas against both providers' deployments.
func canvas() Profile {
	return Profile{Dialect: "sim-canvas", Weight: 1, Targets: []Target{{Slug: "openai-all"}, {Slug: "anthropic-all"}}}
}

// composeAll is compose against both providers' deployments.
func composeAll() Profile {
	return Profile{Dialect: "compose", Weight: 1, Targets: []Target{{Slug: "openai-all"}, {Slug: "anthropic-all"}}}
}

// processWide are the metric name prefixes of the Go and process collectors: goroutines,
// descriptors, memory, threads of the whole process.
var processWide = []string{"go_", "process_", agentruntime.MetricGoroutines}

// ownGauges serves h, and under /own/ the same routes with a /metrics without the process-wide
// metrics (processWide): in a test binary those count every parallel test's goroutines and
// descriptors, so only the server's own gauges (its streams, provider streams, tools, queue)
// say what it left behind.
func ownGauges(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.Handle("/own/", http.StripPrefix("/own", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			h.ServeHTTP(w, r)
			return
		}
		r.Header.Del("Accept-Encoding") // plain text, to filter by line
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var kept []string
		for line := range strings.Lines(rec.Body.String()) {
			name := strings.TrimPrefix(strings.TrimPrefix(line, "# HELP "), "# TYPE ")
			if !slices.ContainsFunc(processWide, func(p string) bool { return strings.HasPrefix(name, p) }) {
				kept = append(kept, line)
			}
		}
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.WriteHeader(rec.Code)
		_, _ = w.Write([]byte(strings.Join(kept, "")))
	})))
	return mux
}

// config is a run against the stack whose leak check reads the stack's own gauges only (its
// runtime's and mock's streams, tools and queue, through ownGauges), not the goroutines and
// descriptors of this process, which tests running in parallel share.
func (s *stack) config(m *Mix, clients int, sessions int64) Config {
	cfg := s.configWholeProcess(m, clients, sessions)
	cfg.MockURL, cfg.RuntimeMetricsURL = s.mockURL+"/own", s.runtimeURL+"/own/metrics"
	cfg.noSelfLeakGauges = true
	return cfg
}

// playNoLeakCheck runs config's load with outs, without the leak check (goroutine counts are
// shared by parallel tests).
func (s *stack) playNoLeakCheck(t *testing.T, m *Mix, clients int, sessions int64, outs ...Output) *measure.Run {
	t.Helper()
	cfg := s.config(m, clients, sessions)
	cfg.NoLeakCheck = true
	cfg.Outputs = append(cfg.Outputs, outs...)
	return runLoad(t, cfg)
}

// configWholeProcess is config whose leak check also reads the process-wide gauges (the
// runtime's and the mock's goroutines and descriptors, and the generator's own): for tests
// that run alone (not parallel), where they are this test's.
func (s *stack) configWholeProcess(m *Mix, clients int, sessions int64) Config {
	return Config{
		Target: s.runtimeURL, MockURL: s.mockURL, Mix: m, MixName: m.Name, RunID: "selfproof",
		Clients: clients, Sessions: sessions, ScriptTimeScale: s.scale,
		// A correct runtime cancels within milliseconds; 1 s absorbs -race and a busy CI
		// machine. Faults that ignore cancels are caught by streams that run on longer.
		AbortTolerance: time.Second, LeakGrace: 3 * time.Second, Grace: 10 * time.Second,
		StreamTimeout: 20 * time.Second,
	}
}

// runLoad runs cfg (withDialects), failing the test when the run cannot happen.
func runLoad(tb testing.TB, cfg Config) *measure.Run {
	tb.Helper()
	run, err := Run(context.Background(), withDialects(cfg))
	if err != nil {
		tb.Fatal(err)
	}
	return run
}

func describe(run *measure.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "counters %+v\nviolations %v\nverdict %v\n", run.Summary.Counters, run.Summary.Violations, run.Summary.Verdict.Reasons)
	for i, s := range run.Samples {
		if i == 6 {
			break
		}
		frames := s.Frames
		if len(frames) > 12 {
			frames = frames[:12]
		}
		fmt.Fprintf(&b, "sample %s %s/%s seed %d %s: %s\n  %s\n", s.Rule, s.Scenario, s.Dialect, s.Seed, s.Session, s.Detail, strings.Join(frames, "\n  "))
	}
	return b.String()
}

// TestSelfProofCleanRuntime: the default mix against a correct runtime has zero violations,
// no unscripted errors and a clean leak check. Not parallel: the leak check reads goroutine
// counts of this process, which parallel tests would disturb.
func TestSelfProofCleanRuntime(t *testing.T) {
	s := newStack(t, testScale)
	m := mixWithoutLongAnswer(t)
	run := runLoad(t, s.configWholeProcess(m, 8, 60))
	sum := run.Summary
	if n := sum.TotalViolations(); n != 0 || !sum.Verdict.Pass {
		t.Fatalf("clean runtime: %d violations, verdict %v\n%s", n, sum.Verdict.Pass, describe(run))
	}
	if sum.Counters.SessionsStarted != 60 {
		t.Errorf("started %d sessions, want 60", sum.Counters.SessionsStarted)
	}
	if sum.Counters.Outcome(measure.OutcomeAborted) == 0 || sum.Counters.Outcome(measure.OutcomeScriptedError) == 0 {
		t.Errorf("the default mix should abort some sessions and script some errors: %+v", sum.Counters)
	}
	if len(sum.Leaks) == 0 {
		t.Errorf("no leak readings")
	}
	sources := map[string]bool{}
	for _, l := range sum.Leaks {
		sources[l.Source] = true
	}
	for _, want := range []string{"runtime", "mock", "generator"} {
		if !sources[want] {
			t.Errorf("leak check did not read the %s: %+v", want, sum.Leaks)
		}
	}
	var cancels int64
	for _, ms := range sum.Metrics {
		if ms.Metric == measure.CancelLatency {
			cancels += ms.Count
		}
	}
	if cancels == 0 {
		t.Errorf("no cancel latency recorded for the aborted sessions: %+v", sum.Metrics)
	}
}

// TestSelfProofFaults: each rule-breaking fault switch is caught by its rule, and by nothing
// unrelated.
func TestSelfProofFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault     string
		scenarios []string
		profiles  []Profile
		want      []protocol.Rule // each must be reported
		allowed   []protocol.Rule // may also be reported (consequences of the same fault)
	}{
		// Intermediate text never retracted: the opted-in answer does not converge.
		{"no-reset", []string{"preamble-tool", "tool-chain"}, []Profile{optedInAll(), canvas()}, []protocol.Rule{protocol.RConverge}, nil},
		// A reset in the final turn breaks the reset scope (and only that: the client clears
		// the block and the runtime re-sends the final text, so the answer still converges).
		{"reset-in-final", []string{"plain-answer"}, []Profile{optedInAll(), canvas()}, []protocol.Rule{protocol.RResetScope}, nil},
		// Thinking sent as chunks: it pollutes the answer, and the thinking frames the policy
		// promises are missing.
		{"leak-thinking", []string{"thinking-answer"}, []Profile{optedInAll()}, []protocol.Rule{protocol.RNoThinkingAnswer}, []protocol.Rule{protocol.RConverge, simchat.RThinkingGate}},
		// Live text to legacy clients.
		{"ignore-header", []string{"plain-answer", "preamble-tool"}, []Profile{legacyAll()}, []protocol.Rule{simchat.RLegacySettled}, nil},
		// Thinking and tool frames whatever the policy.
		{"ignore-policy", []string{"thinking-answer", "preamble-tool"}, []Profile{optedInNone()}, []protocol.Rule{simchat.RThinkingGate, simchat.RToolGate}, nil},
		// Tool arguments in public chat.
		{"expose-tool-args", []string{"preamble-tool"}, []Profile{optedInAll()}, []protocol.Rule{simchat.RToolRedaction}, nil},
		// A tool start without its end.
		{"unbalanced-tool", []string{"preamble-tool"}, []Profile{optedInAll(), composeAll()}, []protocol.Rule{protocol.RToolLifecycle}, nil},
		// Two terminals.
		{"double-terminal", []string{"plain-answer"}, []Profile{optedInAll(), canvas()}, []protocol.Rule{protocol.RTerminal}, nil},
		// No end marker.
		{"missing-done", []string{"plain-answer"}, []Profile{optedInAll(), composeAll()}, []protocol.Rule{protocol.RTerminal}, nil},
		// The provider is never told the client left: at a quarter of real time the rest of
		// the aborted answer streams on for ~2 s, past the 1 s tolerance.
		{"no-cancel", []string{"abort-mid-answer"}, []Profile{optedInAll()}, []protocol.Rule{protocol.RAbort}, nil},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			scale := testScale
			if c.fault == "no-cancel" {
				scale = 0.25
			}
			s := newStack(t, scale, c.fault)
			var outs violationCount
			run := s.playNoLeakCheck(t, mixOf(t, c.scenarios, c.profiles...), 4, 16, &outs)
			// What counts violations per session from the outputs (the console's table) counts
			// every one, R-abort's too, which the mock's records show only after the load.
			if n := outs.n.Load(); n != run.Summary.TotalViolations() {
				t.Errorf("fault %s: the outputs heard of %d violations, the run counted %d", c.fault, n, run.Summary.TotalViolations())
			}
			checkFaultRules(t, run, c.fault, c.want, c.allowed)
		})
	}
}

// checkFaultRules fails the test unless run reports every want rule, no rule but want and
// allowed, and a failed verdict (fault names the switch that broke them).
func checkFaultRules(t *testing.T, run *measure.Run, fault string, want, allowed []protocol.Rule) {
	t.Helper()
	got := run.Summary.Violations
	for _, rule := range want {
		if got[rule] == 0 {
			t.Errorf("fault %s: rule %s not reported", fault, rule)
		}
	}
	for rule, n := range got {
		if !slices.Contains(want, rule) && !slices.Contains(allowed, rule) {
			t.Errorf("fault %s: unrelated rule %s reported %d times", fault, rule, n)
		}
	}
	if run.Summary.Verdict.Pass {
		t.Errorf("fault %s: verdict passed", fault)
	}
	if t.Failed() {
		t.Logf("rules %v\n%s", slices.Sorted(maps.Keys(got)), describe(run))
	}
}

// TestSelfProofLeakGoroutine: a runtime that leaks a goroutine per aborted request fails the
// leak check. Not parallel: it reads this process's goroutine count.
func TestSelfProofLeakGoroutine(t *testing.T) {
	s := newStack(t, testScale, "leak-goroutine")
	run := runLoad(t, s.configWholeProcess(mixOf(t, []string{"abort-mid-answer"}, optedInAll()), 2, 40))
	var leaked bool
	for _, l := range run.Summary.Leaks {
		if l.Source == "runtime" && strings.Contains(l.Name, "goroutines") && !l.OK {
			leaked = true
		}
	}
	if !leaked || run.Summary.Verdict.Pass {
		t.Fatalf("leak-goroutine not caught by the leak check: leaks %+v\n%s", run.Summary.Leaks, describe(run))
	}
}

// TestSelfProofSlowFirstChunk: a latency fault breaks no rule but shows in time to first
// chunk, which is what the gate's regression check reads.
func TestSelfProofSlowFirstChunk(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	p50 := func(run *measure.Run) time.Duration {
		var p50 int64
		for _, m := range run.Summary.Metrics {
			if m.Metric == measure.FirstChunk {
				p50 = max(p50, m.P50)
			}
		}
		return time.Duration(p50) * time.Microsecond
	}
	// Both runs at once, so a busy machine delays both alike: the run without the fault is the
	// yardstick the delay shows against.
	var cfgs [2]Config
	for i, faults := range [][]string{nil, {"slow-first-chunk=" + delay.String()}} {
		cfgs[i] = newStack(t, testScale, faults...).config(mixOf(t, []string{"plain-answer"}, optedInAll()), 4, 12)
		cfgs[i].NoLeakCheck = true
	}
	var (
		runs [2]*measure.Run
		errs [2]error
		wg   sync.WaitGroup
	)
	for i := range cfgs {
		wg.Go(func() { runs[i], errs[i] = Run(context.Background(), withDialects(cfgs[i])) })
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	base, slow, run := p50(runs[0]), p50(runs[1]), runs[1]
	if n := run.Summary.TotalViolations(); n != 0 {
		t.Errorf("a latency fault reported %d violations: %v", n, run.Summary.Violations)
	}
	if slow-base < delay*8/10 {
		t.Errorf("ttfc p50 %v with slow-first-chunk=%v vs %v without: the delay does not show", slow, delay, base)
	}
}

// TestStopDuringToolLatencies: a compose stop while a tool runs yields both the stop latency
// (stop request → stopped terminal) and the tool cancel settle latency (stop request → the
// tool's end frame), and no violations.
func TestStopDuringToolLatencies(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	run := runLoad(t, s.config(mixOf(t, []string{"stop-during-tool"}, composeAll()), 4, 8))
	sum := run.Summary
	if n := sum.TotalViolations(); n != 0 {
		t.Fatalf("stop during tool: %d violations\n%s", n, describe(run))
	}
	counts := map[measure.Metric]int64{}
	for _, ms := range sum.Metrics {
		counts[ms.Metric] += ms.Count
	}
	for _, m := range []measure.Metric{measure.StopLatency, measure.ToolCancelSettle} {
		if counts[m] != 8 {
			t.Errorf("%s recorded for %d sessions, want all 8\n%s", m, counts[m], describe(run))
		}
	}
}

// violationCount counts the violations a run's outputs hear of: at each session's end and after
// the load (LateViolationOutput).
type violationCount struct{ n atomic.Int64 }

func (v *violationCount) SessionEnded(e SessionEnd)  { v.n.Add(int64(len(e.Violations))) }
func (v *violationCount) LateViolation(e SessionEnd) { v.n.Add(int64(len(e.Violations))) }

// withDialects is cfg with the shipped dialects' registry when it names none, as the command
// line gives every run.
func withDialects(cfg Config) Config {
	if cfg.Dialects == nil {
		cfg.Dialects = dialects.Default()
	}
	return cfg
}

// mixWithoutLongAnswer is the default mix without long-answer (2,000 tokens: too slow for a
// unit test even at 20×).
func mixWithoutLongAnswer(t *testing.T) *Mix {
	t.Helper()
	m, err := DefaultMix().Restrict("", "")
	if err != nil {
		t.Fatal(err)
	}
	delete(m.Scenarios, "long-answer")
	if m, err = m.Restrict("", ""); err != nil {
		t.Fatal(err)
	}
	return m
}
