package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/fixture"
)

// TestMeasuresReport: the report shows dialect measures in their own table, a count as a
// count, and leaves them out of the latency tables.
func TestMeasuresReport(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteMarkdown(&b, fixture.Measures(t))
	md := b.String()
	if !strings.Contains(md, "| children_per_run | count | (all) | (all) | 2 | 3 | 3 | 3 | 3 | 3 | 3 |") {
		t.Errorf("no dialect measures row for children_per_run as a count:\n%s", md)
	}
	if !strings.Contains(md, "| child_ttfd | latency | swarm-depth2 | compose | 2 | 99.968 |") {
		t.Errorf("no per-key row for child_ttfd in ms:\n%s", md)
	}
	if strings.Contains(md, "| children_per_run | swarm-depth2 |") {
		t.Errorf("children_per_run is in a latency table:\n%s", md)
	}
	var s bytes.Buffer
	writeMeasures(&s, fixture.Measures(t))
	if got := s.String(); !strings.Contains(got, "children_per_run p50 3 p99 3") || !strings.Contains(got, "child_ttfd p50 100.0ms") {
		t.Errorf("summary line %q", got)
	}
}
