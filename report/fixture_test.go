package report_test

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// runOptions shape a fixture run.
type runOptions struct {
	seed       uint64
	ttfcShift  time.Duration // added to every time to first chunk
	violations map[protocol.Rule]int64
	leak       bool
	httpErrors int64
	sessions   int64
}

// fixtureRun builds a deterministic run from a seeded generator: two scenarios on two dialects,
// log-normal latencies, a 30 s timeline, a leak table and violation samples with frames that
// need escaping.
func fixtureRun(t testing.TB, o runOptions) *measure.Run {
	t.Helper()
	if o.sessions == 0 {
		o.sessions = 2000
	}
	rng := rand.New(rand.NewPCG(o.seed, 42))
	logNormal := func(median time.Duration, sigma float64) time.Duration {
		return time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
	}
	h := measure.NewHistograms()
	rec := func(m measure.Metric, scenario, dialect string, d time.Duration) {
		if err := h.Record(measure.Key{Metric: m, Scenario: scenario, Dialect: dialect}, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, sc := range []struct {
		scenario, dialect string
		ttfc              time.Duration
		n                 int
	}{
		{"plain-answer", "sim-chat", 80 * time.Millisecond, 600},
		{"plain-answer", "compose", 90 * time.Millisecond, 400},
		{"tool-loop", "sim-chat", 150 * time.Millisecond, 500},
		{"abort-midstream", "sim-canvas", 60 * time.Millisecond, 300},
	} {
		for range sc.n {
			rec(measure.Connect, sc.scenario, sc.dialect, logNormal(300*time.Microsecond, 0.5))
			rec(measure.FirstChunk, sc.scenario, sc.dialect, logNormal(sc.ttfc, 0.3)+o.ttfcShift)
			rec(measure.StreamDuration, sc.scenario, sc.dialect, logNormal(2*time.Second, 0.2))
			for range 5 {
				rec(measure.ChunkGap, sc.scenario, sc.dialect, logNormal(20*time.Millisecond, 0.4))
			}
			if sc.scenario == "abort-midstream" {
				rec(measure.CancelLatency, sc.scenario, sc.dialect, logNormal(3*time.Millisecond, 0.6))
			}
		}
	}
	// Token metrics from their own generator, so the latencies above keep their values.
	trng := rand.New(rand.NewPCG(o.seed, 43))
	tokenNormal := func(median time.Duration, sigma float64) time.Duration {
		return time.Duration(float64(median) * math.Exp(sigma*trng.NormFloat64()))
	}
	var outputTokens int64
	for range 600 {
		ttft := tokenNormal(70*time.Millisecond, 0.3)
		rec(measure.TimeToFirstToken, "plain-answer", "sim-chat", ttft)
		rec(measure.TimeToFirstOutput, "plain-answer", "sim-chat", ttft+tokenNormal(10*time.Millisecond, 0.3))
		tpot := tokenNormal(8*time.Millisecond, 0.2)
		rec(measure.TimePerOutputToken, "plain-answer", "sim-chat", tpot)
		for range 3 {
			rec(measure.InterTokenLatency, "plain-answer", "sim-chat", tokenNormal(tpot, 0.4))
		}
		// 120 tokens over the stream: tokens/s ×RateScale, recorded where microseconds go.
		rate := 120 * measure.RateScale / (ttft + 119*tpot).Seconds()
		rec(measure.StreamTokensPerSecond, "plain-answer", "sim-chat", time.Duration(rate)*time.Microsecond)
		outputTokens += 120
	}
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	var timeline []measure.TimelinePoint
	for s := range 30 {
		active := int64(min(s, 10)) * 50
		timeline = append(timeline, measure.TimelinePoint{Second: s, Active: active, Started: 60, Completed: 58,
			Frames: active*25 + rng.Int64N(100), Errors: int64(s % 7 / 6), Violations: int64(s % 11 / 10)})
	}
	violations := o.violations
	if violations == nil {
		violations = map[protocol.Rule]int64{}
	}
	var samples []measure.ViolationSample
	for _, rule := range slices.Sorted(maps.Keys(violations)) {
		samples = append(samples, measure.ViolationSample{Session: "run-s17", Scenario: "tool-loop", Dialect: "sim-chat",
			Seed: 17, Rule: rule, Detail: "final text differs at byte 5 (<b>&amp;</b>)",
			Frames: []string{`data: {"blockId":"b1","chunk":"<script>alert(1)</script>"}`, `data: {"event":"final"}`, `data: "[DONE]"`}})
	}
	leaks := []measure.Leak{
		{Source: "runtime", Name: "go_goroutines", Before: 12, After: 13, Delta: 1, Tolerance: 30, OK: true},
		{Source: "mock", Name: "process_open_fds", Before: 20, After: 21, Delta: 1, Tolerance: 30, OK: true},
	}
	if o.leak {
		leaks = append(leaks, measure.Leak{Source: "runtime", Name: "streambench_open_streams", Before: 0, After: 40, Delta: 40, Tolerance: 0, OK: false})
	}
	run := &measure.Run{
		Summary: measure.Summary{
			Schema: measure.SchemaVersion, RunID: "fixture-1", Started: start, Ended: start.Add(31500 * time.Millisecond),
			Config: measure.Config{Target: "http://127.0.0.1:8080", Dialects: []string{"compose", "sim-canvas", "sim-chat"},
				Clients: 500, Duration: 30 * time.Second, Warmup: 2 * time.Second, Mix: "default", Seed: o.seed,
				Thresholds: []string{"errors<1%"}},
			Environment: measure.Environment{GoVersion: "go1.26.0", OS: "linux", Arch: "amd64", CPUs: 2, GitRevision: "abc123"},
			Metrics:     measure.Summarize(h),
			Counters: measure.Counters{SessionsStarted: o.sessions, SessionsOK: o.sessions - o.httpErrors - 30, SessionsFailed: o.httpErrors,
				SessionsAborted: 300, ScriptedErrors: 30, Frames: 400000, Bytes: 9 << 20,
				OutputTokens: outputTokens, GoodputSessions: o.sessions - o.httpErrors - 330, GoodputJudged: o.sessions - 300},
			Violations: violations,
			Leaks:      leaks,
			Verdict:    measure.Verdict{Pass: true},
		},
		Histograms: h,
		Timeline:   timeline,
		Samples:    samples,
	}
	run.Summary.Tokens = measure.NewTokenSummary(run.Summary.Counters, []string{"ttft<100ms", "tpot<10ms"}, 30*time.Second)
	if o.httpErrors > 0 {
		run.Summary.Counters.HTTPErrors = map[int]int64{503: o.httpErrors}
	}
	if len(violations) > 0 || o.leak || o.httpErrors > 0 {
		run.Summary.Verdict = measure.Verdict{Pass: false, Reasons: []string{"see violations, leaks and errors"}}
	}
	return run
}

// writeFixture saves a fixture run in a fresh directory.
func writeFixture(t testing.TB, o runOptions) string {
	t.Helper()
	dir := t.TempDir()
	if err := measure.WriteRun(dir, fixtureRun(t, o)); err != nil {
		t.Fatal(err)
	}
	return dir
}
