package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// measuresRun is a run with two compose measures: child_ttfd (latency, 100..300 ms) and
// children_per_run (a count, 3 per run).
func measuresRun(t *testing.T) *measure.Run {
	t.Helper()
	h := measure.NewHistograms()
	for _, ms := range []protocol.Measure{
		{Name: "child_ttfd", Kind: protocol.MeasureLatency, Duration: 100 * time.Millisecond},
		{Name: "child_ttfd", Kind: protocol.MeasureLatency, Duration: 300 * time.Millisecond},
		{Name: "children_per_run", Kind: protocol.MeasureCount, Count: 3},
		{Name: "children_per_run", Kind: protocol.MeasureCount, Count: 3},
	} {
		if err := h.Record(measure.Key{Metric: measure.Metric(ms.Name), Scenario: "swarm-depth2", Dialect: "compose"}, measure.MeasureValue(ms)); err != nil {
			t.Fatal(err)
		}
	}
	r := &measure.Run{Histograms: h}
	r.Summary.Metrics = measure.Summarize(h)
	r.Summary.Measures = []measure.MeasureInfo{{Name: "child_ttfd", Kind: measure.MeasureKindLatency}, {Name: "children_per_run", Kind: measure.MeasureKindCount}}
	return r
}

// TestMeasureThresholds: gate expressions on dialect measures, read by their kind.
func TestMeasureThresholds(t *testing.T) {
	t.Parallel()
	r := measuresRun(t)
	for _, tc := range []struct {
		expr   string
		pass   bool
		detail string // in the failure's detail
	}{
		// A latency measure against a duration.
		{"child_ttfd.p99<500ms", true, ""},
		// ...that fails.
		{"child_ttfd.p99<200ms", false, ""},
		// The NAME_STAT spelling.
		{"child_ttfd_p99<500ms", true, ""},
		// Scoped like a latency.
		{"child_ttfd{scenario=swarm-depth2}.max<=301ms", true, ""},
		// A count against a number.
		{"children_per_run.max<=3", true, ""},
		// ...that fails.
		{"children_per_run.min>=4", false, ""},
		// A count with a duration limit says how to write it.
		{"children_per_run.max<=3ms", false, "write its limit as a number"},
		// A measure the run did not record fails, naming those it did.
		{"approval_rtt.p99<1s", false, "measures: child_ttfd, children_per_run"},
	} {
		th, err := ParseThreshold(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		c := th.Evaluate(r, "threshold")
		if c.Pass != tc.pass || !strings.Contains(c.Detail, tc.detail) {
			t.Errorf("%s: pass %t (%s; %s), want %t with %q", tc.expr, c.Pass, c.Value, c.Detail, tc.pass, tc.detail)
		}
	}
	for _, bad := range []string{"Child-TTFD.p99<1s", "childttfd.p99<1s", "child_ttfd<1s", "child_ttfd.p99<soon"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("%s: parsed, want an error", bad)
		}
	}
}
