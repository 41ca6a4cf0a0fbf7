package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/streambench/streambench/measure"
)

// isDialectMeasure tells whether m is one of the run's dialect measures, which the latency
// tables leave to their own (a count's histogram holds counts, not µs).
func isDialectMeasure(s *measure.Summary, m measure.Metric) bool {
	_, ok := s.Measure(string(m))
	return ok
}

// measureValue formats a statistic of a dialect measure: ms, or the count.
func measureValue(count bool, v float64) string { return BoolText(count, float(v), measure.Ms(v)) }

// measuresTable lists every dialect measure over every key, then per key.
func measuresTable(r *measure.Run) Table {
	s := &r.Summary
	t := Table{
		Title:  "Dialect measures (latency in ms, count as is)",
		Header: []string{"measure", "kind", "scenario", "dialect", "samples", "min", "p50", "p90", "p95", "p99", "max", "mean"},
		Right:  []bool{false, false, false, false, true, true, true, true, true, true, true, true},
	}
	row := func(info measure.MeasureInfo, scenario, dialect string, m measure.MetricSummary) {
		c := info.Kind == measure.MeasureKindCount
		f := func(v int64) string { return measureValue(c, float64(v)) }
		t.Rows = append(t.Rows, []string{info.Name, info.Kind, scenario, dialect, Count(m.Count),
			f(m.Min), f(m.P50), f(m.P90), f(m.P95), f(m.P99), f(m.Max), measureValue(c, m.Mean)})
	}
	for _, info := range s.Measures {
		if all, n := overall(r, measure.Metric(info.Name)); r.Histograms != nil && n > 0 {
			row(info, "(all)", "(all)", all)
		}
		for _, m := range s.Metrics {
			if string(m.Metric) == info.Name {
				row(info, m.Scenario, m.Dialect, m)
			}
		}
	}
	return t
}

// writeMeasures prints each dialect measure's p50 and p99 over every key.
func writeMeasures(w io.Writer, run *measure.Run) {
	s := &run.Summary
	var parts []string
	for _, info := range s.Measures {
		st, n := overall(run, measure.Metric(info.Name))
		if n == 0 && run.Histograms != nil {
			continue
		}
		if info.Kind == measure.MeasureKindCount {
			parts = append(parts, fmt.Sprintf("%s p50 %d p99 %d", info.Name, st.P50, st.P99))
		} else {
			parts = append(parts, fmt.Sprintf("%s p50 %.1fms p99 %.1fms", info.Name, float64(st.P50)/1000, float64(st.P99)/1000))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "measures: %s\n", strings.Join(parts, ", "))
	}
}
