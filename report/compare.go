package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/measure"
)

// CompareRow is one measured quantity in two runs.
type CompareRow struct {
	Name       string // e.g. "ttfc p99 plain-answer/sim-chat" or "error rate"
	Unit       string // "ms", "%" or "" for counts
	A, B       float64
	HasA, HasB bool  // recorded in that run
	NA, NB     int64 // the values behind a histogram's statistic
	// stat is a histogram row's statistic; "volume" for a counter of how much was played.
	stat string
}

// Change is (B−A)/A in percent; NaN when either side is missing or A is zero.
func (r CompareRow) Change() float64 {
	if !r.HasA || !r.HasB || r.A == 0 {
		return math.NaN()
	}
	return (r.B - r.A) / r.A * 100
}

// Comparison is two runs side by side, A the reference and B the candidate.
type Comparison struct {
	A, B          string // run IDs, marked "(INCOMPLETE)" for a snapshot
	Rows          []CompareRow
	WorkloadDiffs []string // measure.WorkloadDiffs: the changes are not like for like
	Notes         []string // what an incomplete run's figures cover
}

// compareStats are the latency statistics a comparison shows per histogram.
var compareStats = []string{"p50", "p90", "p95", "p99", "p99.9", "max"}

// Compare lines up every metric of a and b, over every key then per key, then the counters.
func Compare(a, b *measure.Run) Comparison {
	c := Comparison{A: a.Summary.RunID, B: b.Summary.RunID, WorkloadDiffs: measure.WorkloadDiffs(&a.Summary, &b.Summary)}
	for _, x := range []struct {
		id   *string
		role string
		s    *measure.Summary
	}{{&c.A, "A", &a.Summary}, {&c.B, "B", &b.Summary}} {
		if banner := IncompleteBanner(x.s); banner != "" {
			*x.id += " (INCOMPLETE)"
			c.Notes = append(c.Notes, x.role+": "+banner)
		}
	}
	byKey := func(r *measure.Run) map[measure.Key]measure.MetricSummary {
		m := map[measure.Key]measure.MetricSummary{}
		for _, s := range r.Summary.Metrics {
			m[s.Key] = s
		}
		return m
	}
	// histogram adds the statistics and the count of m in both runs; name has a %s for each.
	histogram := func(name string, m measure.Metric, ma, mb measure.MetricSummary, okA, okB bool) {
		for _, st := range compareStats {
			c.Rows = append(c.Rows, CompareRow{Name: fmt.Sprintf(name, st), Unit: BoolText(m.IsRate(), "tokens/s", "ms"),
				A: ma.Stat(st) / 1000, B: mb.Stat(st) / 1000, HasA: okA, HasB: okB, NA: ma.Count, NB: mb.Count, stat: st})
		}
		c.Rows = append(c.Rows, CompareRow{Name: fmt.Sprintf(name, "count"), A: float64(ma.Count), B: float64(mb.Count), HasA: okA, HasB: okB, stat: "count"})
	}
	ao, bo := mergedByMetric(a), mergedByMetric(b)
	for _, m := range measure.AllMetrics() {
		ma, okA := ao[m]
		mb, okB := bo[m]
		if okA || okB {
			histogram(string(m)+" %s (all)", m, ma, mb, okA, okB)
		}
	}
	am, bm := byKey(a), byKey(b)
	keys := slices.Concat(slices.Collect(maps.Keys(am)), slices.Collect(maps.Keys(bm)))
	slices.SortFunc(keys, measure.Key.Compare)
	for _, k := range slices.Compact(keys) {
		ma, okA := am[k]
		mb, okB := bm[k]
		histogram(string(k.Metric)+" %s "+k.Scenario+"/"+k.Dialect, k.Metric, ma, mb, okA, okB)
	}
	// A "volume" counter follows the workload: it is not ranked among the largest changes.
	count := func(name, unit, stat string, get func(*measure.Summary) float64) {
		c.Rows = append(c.Rows, CompareRow{Name: name, Unit: unit, A: get(&a.Summary), B: get(&b.Summary), HasA: true, HasB: true, stat: stat})
	}
	count("sessions started", "", "volume", func(s *measure.Summary) float64 { return float64(s.Counters.SessionsStarted) })
	count("sessions ok", "", "volume", func(s *measure.Summary) float64 { return float64(s.Counters.SessionsOK) })
	count("errors (error outcomes)", "", "", func(s *measure.Summary) float64 { return float64(s.Counters.Errors()) })
	count("error rate", "%", "", func(s *measure.Summary) float64 { return s.Counters.ErrorRate() * 100 })
	count("frames", "", "volume", func(s *measure.Summary) float64 { return float64(s.Counters.Frames) })
	count("violations", "", "", func(s *measure.Summary) float64 { return float64(s.TotalViolations()) })
	count("leaks over tolerance", "", "", func(s *measure.Summary) float64 { return float64(s.FailedLeaks()) })
	if a.Summary.Tokens != nil || b.Summary.Tokens != nil {
		tokens := func(name, unit string, get func(*measure.TokenSummary) float64) {
			row := CompareRow{Name: name, Unit: unit, HasA: a.Summary.Tokens != nil, HasB: b.Summary.Tokens != nil}
			if row.HasA {
				row.A = get(a.Summary.Tokens)
			}
			if row.HasB {
				row.B = get(b.Summary.Tokens)
			}
			c.Rows = append(c.Rows, row)
		}
		tokens("output tokens/s", "tokens/s", func(t *measure.TokenSummary) float64 { return t.OutputTokensPerSecond })
		tokens("goodput", "%", func(t *measure.TokenSummary) float64 { return t.Goodput.Share * 100 })
	}
	return c
}

func mergedByMetric(r *measure.Run) map[measure.Metric]measure.MetricSummary {
	out := map[measure.Metric]measure.MetricSummary{}
	for _, s := range measure.SummarizeOverall(r.Histograms) {
		out[s.Metric] = s
	}
	return out
}

func (r CompareRow) cell(v float64, has bool) string {
	if !has {
		return "—"
	}
	switch r.Unit {
	case "ms":
		return strconv.FormatFloat(v, 'f', 3, 64) + " ms"
	case "%":
		return strconv.FormatFloat(v, 'f', 3, 64) + "%"
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

func (r CompareRow) changeCell() string {
	ch := r.Change()
	switch {
	case math.IsNaN(ch) && r.HasA && r.HasB && r.A == r.B:
		return "0.0%"
	case math.IsNaN(ch) && r.HasA && r.HasB && r.A == 0:
		return "from 0"
	case math.IsNaN(ch):
		return "n/a"
	default:
		return fmt.Sprintf("%+.1f%%", ch)
	}
}

// everyMetric is every row of the comparison.
func (c Comparison) everyMetric() Table {
	t := Table{Title: "Every metric", Header: []string{"metric", "A: " + c.A, "B: " + c.B, "change"}, Right: []bool{false, true, true, true}}
	for _, r := range c.Rows {
		t.Rows = append(t.Rows, []string{r.Name, r.cell(r.A, r.HasA), r.cell(r.B, r.HasB), r.changeCell()})
	}
	return t
}

// compareLargest is how many changes the comparison's summary lists.
const compareLargest = 10

// compareMinSamples is how many values a statistic needs in both runs to be ranked: the
// percentiles of a handful of values move by chance.
const compareMinSamples = 30

// rankedStats are the statistics ranked (max and p99.9 are single values).
var rankedStats = []string{"p50", "p90", "p99"}

// Largest returns the n ranked rows that changed most, largest |change| (from 0: first) first.
func (c Comparison) Largest(n int) []CompareRow {
	type ranked struct {
		row CompareRow
		mag float64
	}
	var rs []ranked
	for _, r := range c.Rows {
		if !r.HasA || !r.HasB || r.A == r.B {
			continue
		}
		if r.stat != "" && (!slices.Contains(rankedStats, r.stat) || r.NA < compareMinSamples || r.NB < compareMinSamples) {
			continue
		}
		mag := math.Inf(1)
		if r.A != 0 {
			mag = math.Abs(r.Change())
		}
		rs = append(rs, ranked{r, mag})
	}
	slices.SortStableFunc(rs, func(x, y ranked) int { return cmp.Compare(y.mag, x.mag) }) // ties in row order
	out := make([]CompareRow, 0, min(n, len(rs)))
	for _, r := range rs[:min(n, len(rs))] {
		out = append(out, r.row)
	}
	return out
}

func (c Comparison) largestTable() Table {
	rows := c.Largest(compareLargest)
	t := Table{Title: fmt.Sprintf("Largest changes (the %d largest of: p50, p90 and p99 with at least %d values in both runs; errors, violations, leaks, tokens/s, goodput)", compareLargest, compareMinSamples),
		Header: []string{"metric", "A: " + c.A, "B: " + c.B, "change", "values A → B"}, Right: []bool{false, true, true, true, true}}
	for _, r := range rows {
		n := BoolText(r.stat != "", fmt.Sprintf("%d → %d", r.NA, r.NB), "")
		t.Rows = append(t.Rows, []string{r.Name, r.cell(r.A, r.HasA), r.cell(r.B, r.HasB), r.changeCell(), n})
	}
	return t
}

// WriteText prints the comparison for a terminal.
func (c Comparison) WriteText(w io.Writer) error { return c.write(w, textStyle) }

// WriteMarkdown prints the comparison as GitHub Markdown.
func (c Comparison) WriteMarkdown(w io.Writer) { _ = c.write(w, markdownStyle) } // Markdown writes no error of its own

func (c Comparison) write(w io.Writer, st style) error {
	fmt.Fprintf(w, st.compare, st.cell(c.A), st.cell(c.B))
	for _, n := range c.Notes {
		fmt.Fprintf(w, st.compareNote, st.cell(n))
	}
	if len(c.WorkloadDiffs) > 0 {
		warning := "the two runs' workloads differ, so their figures are not like for like: " + strings.Join(c.WorkloadDiffs, "; ")
		fmt.Fprintf(w, st.warning, st.cell(warning))
	}
	fmt.Fprint(w, st.between)
	if lt := c.largestTable(); len(lt.Rows) > 0 {
		if err := st.table(w, lt); err != nil {
			return err
		}
	} else {
		fmt.Fprint(w, st.none(lt.Title))
	}
	fmt.Fprint(w, st.between)
	return st.table(w, c.everyMetric())
}
