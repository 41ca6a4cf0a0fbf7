package verdict

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/fixture"
)

// TestMeasureThresholds: gate expressions on dialect measures, read by their kind.
func TestMeasureThresholds(t *testing.T) {
	t.Parallel()
	r := fixture.Measures(t)
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
		c := th.evaluate(r, "threshold", &relaxed{})
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
