package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
)

// fakeRun is a run with plain-answer TTFCs of ttfcMs on two live dialects and on the legacy
// one (which must be left out), cancels cancel latencies, and the given violations.
func fakeRun(t *testing.T, ttfcMs []int, cancels int, violations map[protocol.Rule]int64) *measure.Run {
	t.Helper()
	h := measure.NewHistograms()
	record := func(k measure.Key, d time.Duration) {
		if err := h.Record(k, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"compose", "sim-chat-optedin"} {
		for _, ms := range ttfcMs {
			record(measure.Key{Metric: measure.FirstChunk, Scenario: "plain-answer", Dialect: d}, time.Duration(ms)*time.Millisecond)
		}
	}
	record(measure.Key{Metric: measure.FirstChunk, Scenario: "plain-answer", Dialect: legacyDialect}, time.Hour/2)
	for range cancels {
		record(measure.Key{Metric: measure.CancelLatency, Scenario: "abort-mid-answer", Dialect: "compose"}, 2*time.Millisecond)
	}
	return &measure.Run{Histograms: h, Summary: measure.Summary{
		Counters:   measure.Counters{SessionsStarted: 100, SessionsOK: 100, Outcomes: map[measure.Outcome]int64{measure.OutcomeCompleted: 90, measure.OutcomeAborted: 10}},
		Violations: violations,
	}}
}

func TestJudgeHop(t *testing.T) {
	t.Parallel()
	ttfc := []int{200, 210, 220, 230, 240}
	slower := []int{205, 215, 225, 235, 290}
	abort := map[protocol.Rule]int64{protocol.RAbort: 6}
	for _, c := range []struct {
		name     string
		direct   *measure.Run
		via      *measure.Run
		exp      HopExpectation
		wantFail string // "" passes
	}{
		// Portkey as it is: every judged abort breaks R-abort through it, none is cancelled.
		{"gateway that never cancels", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, abort), HopExpectation{}, ""},
		// A gateway that does cancel, declared so: via behaves as direct.
		{"gateway that cancels", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 6, nil), HopExpectation{CancelsUpstream: true}, ""},
		// The gateway started cancelling: the expectation is stale and must be updated.
		{"gateway now cancels", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 6, nil), HopExpectation{}, "now cancels its upstream"},
		// Declared to cancel but does not.
		{"gateway stopped cancelling", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, abort), HopExpectation{CancelsUpstream: true}, "should cancel upstream"},
		// Not cancelled and yet no R-abort: the check did not run (no --mock?).
		{"no R-abort through the gateway", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, nil), HopExpectation{}, "no R-abort"},
		// Any other rule broken through the gateway fails.
		{"other violation", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, map[protocol.Rule]int64{protocol.RAbort: 6, protocol.RConverge: 1}), HopExpectation{}, "R-converge×1"},
		// The yardstick itself misses cancels: nothing can be said about the hop.
		{"direct R-abort", fakeRun(t, ttfc, 5, map[protocol.Rule]int64{protocol.RAbort: 1}), fakeRun(t, slower, 0, abort), HopExpectation{}, "direct run: 1 R-abort"},
		// A workload without judged aborts proves nothing about cancels.
		{"no aborts judged", fakeRun(t, ttfc, 0, nil), fakeRun(t, slower, 0, abort), HopExpectation{}, "no cancel latency measured"},
		// Portkey on the anthropic wire: its re-wrapped HTTP error bodies are a known finding.
		{"known rule broken", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, map[protocol.Rule]int64{protocol.RAbort: 6, anthropicmessages.RError: 4}), HopExpectation{Known: []protocol.Rule{anthropicmessages.RError}}, ""},
		// A known rule no longer broken: the expectation is stale.
		{"known rule not broken", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, abort), HopExpectation{Known: []protocol.Rule{anthropicmessages.RError}}, "no R-anthropic-error"},
		// A known rule excuses the hop, not the yardstick.
		{"known rule in the direct run", fakeRun(t, ttfc, 6, map[protocol.Rule]int64{anthropicmessages.RError: 1}), fakeRun(t, slower, 0, map[protocol.Rule]int64{protocol.RAbort: 6, anthropicmessages.RError: 4}), HopExpectation{Known: []protocol.Rule{anthropicmessages.RError}}, "direct run: violations other than R-abort: R-anthropic-error×1"},
		// Comparing TTFT on runs that recorded only TTFC: nothing measured.
		{"metric not recorded", fakeRun(t, ttfc, 6, nil), fakeRun(t, slower, 0, abort), HopExpectation{Metric: measure.TimeToFirstToken}, "direct run: no ttft measured"},
	} {
		o := JudgeHop(c.direct, c.via, c.exp)
		checkFailures(t, c.name, o.Failures, c.wantFail)
	}
}

// checkFailures checks that failures is empty when wantFail is, else that one contains it.
func checkFailures(t *testing.T, name string, failures []string, wantFail string) {
	t.Helper()
	got := strings.Join(failures, "; ")
	switch {
	case wantFail == "" && len(failures) > 0:
		t.Errorf("%s: failed: %s", name, got)
	case wantFail != "" && !strings.Contains(got, wantFail):
		t.Errorf("%s: failures %q, want one containing %q", name, got, wantFail)
	}
}

// TestJudgeHopFailsOnErrorsAndLeaks: unscripted errors or a leak in either run fail the outcome.
func TestJudgeHopFailsOnErrorsAndLeaks(t *testing.T) {
	t.Parallel()
	ttfc := []int{200, 210}
	direct, via := fakeRun(t, ttfc, 6, nil), fakeRun(t, ttfc, 0, map[protocol.Rule]int64{protocol.RAbort: 6})
	via.Summary.Counters.HTTPErrors = map[int]int64{500: 3}
	via.Summary.Counters.Outcomes[measure.OutcomeHTTPError] = 3
	direct.Summary.Leaks = []measure.Leak{{Source: "runtime", Name: "go_goroutines", Delta: 50, Tolerance: 16}}
	got := strings.Join(JudgeHop(direct, via, HopExpectation{}).Failures, "; ")
	for _, want := range []string{"via run: 3 sessions with an error outcome", "direct run: 1 leak-check gauges over tolerance"} {
		if !strings.Contains(got, want) {
			t.Errorf("failures %q lack %q", got, want)
		}
	}
}

// TestJudgeHopOverhead: the overhead is via − direct on plain-answer's live dialects (legacy
// left out), and the per-key median compares like with like.
func TestJudgeHopOverhead(t *testing.T) {
	t.Parallel()
	o := JudgeHop(fakeRun(t, []int{200, 210, 220, 230, 240}, 6, nil),
		fakeRun(t, []int{205, 215, 225, 235, 290}, 0, map[protocol.Rule]int64{protocol.RAbort: 6}), HopExpectation{})
	if !o.Pass() {
		t.Fatalf("failed: %v", o.Failures)
	}
	near := func(us, wantMs int64) bool { return us >= wantMs*1000-300 && us <= wantMs*1000+300 } // 3 significant digits
	if !near(o.OverheadP50(), 5) || !near(o.OverheadP99(), 50) || !near(o.KeyMedianP50, 5) || o.Keys != 2 {
		t.Errorf("overhead p50 %d µs p99 %d µs, key median %d µs over %d keys; want ~5 ms, ~50 ms, ~5 ms over 2", o.OverheadP50(), o.OverheadP99(), o.KeyMedianP50, o.Keys)
	}
	if o.DirectPlain.Count != 10 {
		t.Errorf("plain-answer TTFC over %d streams, want 10 (legacy left out)", o.DirectPlain.Count)
	}
	if r := o.Report("portkey"); !strings.Contains(r, "portkey TTFC overhead: p50 +5.") || !strings.HasSuffix(r, "PASS\n") {
		t.Errorf("report:\n%s", r)
	}
}

// TestJudgeHopTTFT: with Metric ttft only the ttft histograms count (the ttfc ones of the same
// run are left out), and the report names the metric.
func TestJudgeHopTTFT(t *testing.T) {
	t.Parallel()
	withTTFT := func(ttfc, ttft []int, cancels int, v map[protocol.Rule]int64) *measure.Run {
		r := fakeRun(t, ttfc, cancels, v)
		for _, ms := range ttft {
			if err := r.Histograms.Record(measure.Key{Metric: measure.TimeToFirstToken, Scenario: "plain-answer", Dialect: "openai-chat"}, time.Duration(ms)*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		return r
	}
	o := JudgeHop(withTTFT([]int{500}, []int{200, 210}, 6, nil),
		withTTFT([]int{900}, []int{203, 213}, 0, map[protocol.Rule]int64{protocol.RAbort: 6}), HopExpectation{Metric: measure.TimeToFirstToken})
	if !o.Pass() {
		t.Fatalf("failed: %v", o.Failures)
	}
	if o.DirectPlain.Count != 2 || o.OverheadP50() < 2700 || o.OverheadP50() > 3300 {
		t.Errorf("ttft over %d streams, overhead p50 %d µs; want 2 streams, ~3 ms", o.DirectPlain.Count, o.OverheadP50())
	}
	if r := o.Report("portkey"); !strings.Contains(r, "portkey TTFT overhead: p50 +") {
		t.Errorf("report:\n%s", r)
	}
}
