package report

import (
	"bytes"
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
	if err := h.Record(measure.Key{Metric: measure.FirstChunk, Scenario: "swarm-depth2", Dialect: "compose"}, 250*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	r := &measure.Run{Histograms: h}
	r.Summary.Metrics = measure.Summarize(h)
	r.Summary.Measures = []measure.MeasureInfo{{Name: "child_ttfd", Kind: measure.MeasureKindLatency}, {Name: "children_per_run", Kind: measure.MeasureKindCount}}
	return r
}

// TestMeasuresReport: the report shows dialect measures in their own table, a count as a
// count, and leaves them out of the latency tables.
func TestMeasuresReport(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	WriteMarkdown(&b, measuresRun(t))
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
	writeMeasures(&s, measuresRun(t))
	if got := s.String(); !strings.Contains(got, "children_per_run p50 3 p99 3") || !strings.Contains(got, "child_ttfd p50 100.0ms") {
		t.Errorf("summary line %q", got)
	}
}
