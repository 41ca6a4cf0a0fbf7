package interop

import (
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/aisdk"
)

func TestJudgeRoute(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		cancels    int
		violations map[protocol.Rule]int64
		errors     int64
		wantFail   string // "" passes
		known      Known
	}{
		// A route that cancels: clean, cancel latencies measured.
		{"cancelling route", 6, nil, 0, "", Known{}},
		// Aborts never reached the mock: nothing proves the route cancels.
		{"no cancel measured", 0, nil, 0, "no cancel latency measured", Known{}},
		// A route whose model is not the mock: no cancel latency to measure.
		{"no mock", 0, nil, 0, "", Known{NoMock: true}},
		// R-abort fails a route (unlike a gateway, it is meant to cancel).
		{"R-abort", 5, map[protocol.Rule]int64{protocol.RAbort: 1}, 0, "violations: R-abort×1", Known{}},
		// Any content rule broken fails.
		{"content rule", 6, map[protocol.Rule]int64{aisdk.RText: 2}, 0, "violations: R-aisdk-text×2", Known{}},
		// Unscripted transport errors fail.
		{"errors", 6, nil, 3, "3 sessions with an error outcome", Known{}},
		// A known error outcome is reported and passes; only that outcome.
		{"known outcome", 6, nil, 3, "", Known{Outcomes: []measure.Outcome{measure.OutcomeTransportError}}},
		{"other known outcome", 6, nil, 3, "3 sessions with an error outcome", Known{Outcomes: []measure.Outcome{measure.OutcomeTruncated}}},
		// A known finding is reported and passes; another rule still fails beside it.
		{"known", 6, map[protocol.Rule]int64{agui.RRun: 9}, 0, "", Known{Rules: []protocol.Rule{agui.RRun}}},
		{"known and another", 6, map[protocol.Rule]int64{agui.RRun: 9, agui.RContent: 1}, 0, "violations: R-agui-content×1", Known{Rules: []protocol.Rule{agui.RRun}}},
	} {
		run := fakeRun(t, []int{200}, c.cancels, c.violations)
		run.Summary.Counters.Outcomes[measure.OutcomeTransportError] = c.errors
		o := JudgeRoute(run, c.known)
		if len(c.known.Rules) > 0 && c.violations[c.known.Rules[0]] > 0 && !strings.Contains(o.Report("route"), "known findings (reported, not failing; docs/INTEROP.md): "+string(c.known.Rules[0])) {
			t.Errorf("%s: the report does not name the known finding:\n%s", c.name, o.Report("route"))
		}
		if len(c.known.Outcomes) > 0 && c.wantFail == "" && !strings.Contains(o.Report("route"), string(c.known.Outcomes[0])+"×") {
			t.Errorf("%s: the report does not name the known outcome:\n%s", c.name, o.Report("route"))
		}
		checkFailures(t, c.name, o.Failures, c.wantFail)
	}
}

// TestJudgeRouteReport: the cancel quantiles are merged over every scenario and printed.
func TestJudgeRouteReport(t *testing.T) {
	t.Parallel()
	run := fakeRun(t, []int{200}, 0, nil)
	for i, d := range []time.Duration{time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond} {
		sc := []string{"abort-mid-answer", "stop-mid-answer", "abort-during-tool"}[i]
		if err := run.Histograms.Record(measure.Key{Metric: measure.CancelLatency, Scenario: sc, Dialect: "ai-sdk"}, d); err != nil {
			t.Fatal(err)
		}
	}
	o := JudgeRoute(run, Known{})
	if !o.Pass() || o.Cancel.Count != 3 {
		t.Fatalf("failed %v over %d cancels, want a pass over 3", o.Failures, o.Cancel.Count)
	}
	if r := o.Report("ai-sdk-route"); !strings.Contains(r, "3 aborts measured of 10 aborted or stopped: p50 2.0 ms, p99 40.0 ms, max 40.0 ms") || !strings.HasSuffix(r, "PASS\n") {
		t.Errorf("report:\n%s", r)
	}
}
