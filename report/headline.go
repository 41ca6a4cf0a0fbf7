package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/measure"
)

// headlineMetrics are the latencies the headline shows, in order; an overhead's row only when
// the run recorded it.
var headlineMetrics = []measure.Metric{measure.FirstChunk, measure.FirstChunkOverhead, measure.TimeToFirstToken, measure.FirstTokenOverhead,
	measure.InterTokenLatency, measure.CancelLatency}

// headlineWorstKeys is how many scenario × dialect keys the headline lists by TTFC p99.
const headlineWorstKeys = 5

// Headline is the block every rendering of a run opens with (console, report.md and
// report.html), computed once so they never disagree.
type Headline struct {
	Verdict                    string // "PASS" or "FAIL"
	Reasons, Allowed, Warnings []string
	Lines                      [][2]string // a name and its text: outcomes, errors, …
	Latency                    Table       // over every scenario and dialect
	Worst                      Table       // the keys of highest TTFC p99, worst first
}

// NewHeadline computes r's headline.
func NewHeadline(r *measure.Run) Headline {
	s := &r.Summary
	h := Headline{
		Verdict:  BoolText(s.Verdict.Pass, "PASS", "FAIL"),
		Reasons:  s.Verdict.Reasons,
		Allowed:  s.Verdict.Allowed,
		Warnings: s.Verdict.Warnings,
	}
	c := s.Counters
	h.Lines = [][2]string{
		{"outcomes", fmt.Sprintf("%s (%d sessions started)", OutcomeLine(c), c.SessionsStarted)},
		{"errors", errorsLine(c)},
		{"violations", violationsLine(s)},
		{"leaks", leaksLine(s)},
	}
	if len(s.Processes) > 0 {
		h.Lines = append(h.Lines, [2]string{"cpu", cpuLine(s)})
	}
	h.Latency = headlineLatency(r)
	h.Worst = worstKeys(r)
	return h
}

// cpuLine is the cores each process used during the load, the saturated ones named.
func cpuLine(s *measure.Summary) string {
	var parts, saturated []string
	for _, p := range s.Processes {
		parts = append(parts, fmt.Sprintf("%s %.2f", p.Name, p.Cores))
		if p.Saturated {
			saturated = append(saturated, p.Name)
		}
	}
	text := fmt.Sprintf("cores used: %s", strings.Join(parts, ", "))
	if s.MachineCores > 0 {
		text += fmt.Sprintf(" (of %d)", s.MachineCores)
	}
	return text + BoolText(len(saturated) > 0, "; saturated: "+strings.Join(saturated, ", "), "; none saturated")
}

// errorsLine counts the sessions with an error outcome, their share and the outcomes.
func errorsLine(c measure.Counters) string {
	n := c.Errors()
	if n == 0 {
		return fmt.Sprintf("0 of %d sessions", c.SessionsStarted)
	}
	var parts []string
	for _, o := range measure.Outcomes() {
		if k := c.Outcomes[o]; k > 0 && o.IsError() {
			parts = append(parts, fmt.Sprintf("%s %d", o, k))
		}
	}
	return fmt.Sprintf("%d of %d sessions (%s): %s", n, c.SessionsStarted, measure.Pct(c.ErrorRate()), strings.Join(parts, ", "))
}

// violationsLine counts the violations, by rule, most frequent first; allowed rules marked.
func violationsLine(s *measure.Summary) string {
	total := s.TotalViolations()
	if total == 0 {
		return "0"
	}
	var parts []string
	for _, r := range s.RulesByCount() {
		if n := s.Violations[r]; n > 0 {
			p := fmt.Sprintf("%s %d", r, n)
			if slices.Contains(s.Config.Allow, r) {
				p += " (allowed)"
			}
			parts = append(parts, p)
		}
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
}

// leaksLine says what the leak check compared, found over tolerance and could not check.
func leaksLine(s *measure.Summary) string {
	if len(s.Leaks) == 0 && len(s.LeaksNotChecked) == 0 {
		return "no leak check in this run"
	}
	sources, gauges := leakSources(s.Leaks)
	var per, over []string
	for _, src := range sources {
		per = append(per, fmt.Sprintf("%s %d", src, len(gauges[src])))
	}
	for _, l := range s.Leaks {
		if !l.OK {
			over = append(over, fmt.Sprintf("%s %s %s → %s (tolerance %s)", l.Source, l.Name, float(l.Before), float(l.After), float(l.Tolerance)))
		}
	}
	checked := fmt.Sprintf("%d gauges checked: %s", len(s.Leaks), strings.Join(per, ", "))
	var text string
	switch {
	case len(s.Leaks) == 0:
		text = "no gauge compared"
	case len(over) == 0:
		text = "none (" + checked + ")"
	default:
		text = fmt.Sprintf("%d over tolerance: %s (%s)", len(over), strings.Join(over, "; "), checked)
	}
	if len(s.LeaksNotChecked) > 0 {
		var nc []string
		for _, n := range s.LeaksNotChecked {
			nc = append(nc, notCheckedWhat(n))
		}
		text += "; not checked: " + strings.Join(nc, ", ")
	}
	return text
}

// headlineMS formats microseconds as milliseconds for the headline: three decimals below a
// millisecond (an ITL of 12 µs is 0.012, not 0.0), one above.
func headlineMS(us int64) string {
	if us < 1000 {
		return strconv.FormatFloat(float64(us)/1000, 'f', 3, 64)
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 1, 64)
}

// headlineLatency is each headline metric over every key; without histograms, its worst key's.
func headlineLatency(r *measure.Run) Table {
	s := &r.Summary
	withP95 := r.Histograms != nil
	t := Table{Title: "Latency, all scenarios and dialects (ms; itl is per token: AIPerf's and GuideLLM's ITL is our tpot, " +
		"vllm bench serve's and inference-perf's our chunk_gap)", Header: []string{"metric", "count", "p50", "p95", "p99"}, Right: []bool{false, true, true, true, true}}
	if !withP95 {
		t.Title = "Latency, the worst scenario × dialect key of each metric (ms; no histograms, so no p95)"
		t.Header = []string{"metric", "count", "p50", "p99"}
		t.Right = t.Right[:4]
	}
	for _, m := range headlineMetrics {
		if isOverhead(m) && !recorded(s, m) {
			continue // no script said when frames were due (an endpoint, no ground truth)
		}
		if withP95 {
			merged, _ := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == m })
			if merged.TotalCount() == 0 {
				t.Rows = append(t.Rows, []string{string(m), "0", "-", "-", "-"})
				continue
			}
			t.Rows = append(t.Rows, []string{string(m), Count(merged.TotalCount()), headlineMS(merged.ValueAtQuantile(50)),
				headlineMS(merged.ValueAtQuantile(95)), headlineMS(merged.ValueAtQuantile(99))})
			continue
		}
		var worst measure.MetricSummary
		for _, ms := range s.Metrics {
			if ms.Metric == m && ms.Count > 0 && ms.P99 >= worst.P99 {
				worst = ms
			}
		}
		if worst.Count == 0 {
			t.Rows = append(t.Rows, []string{string(m), "0", "-", "-"})
			continue
		}
		t.Rows = append(t.Rows, []string{string(m), Count(worst.Count), headlineMS(worst.P50), headlineMS(worst.P99)})
	}
	return t
}

func isOverhead(m measure.Metric) bool {
	return m == measure.FirstChunkOverhead || m == measure.FirstTokenOverhead
}

func recorded(s *measure.Summary, m measure.Metric) bool {
	return slices.ContainsFunc(s.Metrics, func(ms measure.MetricSummary) bool { return ms.Metric == m && ms.Count > 0 })
}

// worstKeys lists the keys with the highest TTFC p99, worst first (ties by key).
func worstKeys(r *measure.Run) Table {
	s := &r.Summary
	withP95 := r.Histograms != nil
	t := Table{Title: fmt.Sprintf("Worst keys by ttfc p99 (the top %d scenario × dialect keys, ms)", headlineWorstKeys),
		Header: []string{"scenario", "dialect", "count", "ttfc p50", "p95", "p99"}, Right: []bool{false, false, true, true, true, true, true}}
	if !withP95 {
		t.Header = []string{"scenario", "dialect", "count", "ttfc p50", "p99"}
	}
	overhead := recorded(s, measure.FirstChunkOverhead)
	if overhead {
		t.Header = append(t.Header, "ttfc.overhead p99")
	}
	t.Right = t.Right[:len(t.Header)]
	var keys []measure.MetricSummary
	for _, m := range s.Metrics {
		if m.Metric == measure.FirstChunk && m.Count > 0 {
			keys = append(keys, m)
		}
	}
	// A tail percentile of a handful of samples is their maximum: keys under minLineSamples
	// rank only when no key has enough, and show no tail.
	enough := slices.DeleteFunc(slices.Clone(keys), func(m measure.MetricSummary) bool { return m.Count < minLineSamples })
	switch {
	case len(enough) > 0 && len(enough) < len(keys):
		t.Title += fmt.Sprintf("; not ranked: %d key(s) of fewer than %d sessions", len(keys)-len(enough), minLineSamples)
		keys = enough
	case len(enough) == 0 && len(keys) > 0:
		t.Title += fmt.Sprintf("; every key has fewer than %d sessions: no tail percentiles", minLineSamples)
	}
	slices.SortStableFunc(keys, func(a, b measure.MetricSummary) int { return cmp.Or(cmp.Compare(b.P99, a.P99), a.Key.Compare(b.Key)) })
	for _, m := range keys[:min(len(keys), headlineWorstKeys)] {
		tail := m.Count >= minLineSamples
		row := []string{m.Scenario, m.Dialect, Count(m.Count), headlineMS(m.P50)}
		if withP95 {
			p95 := "-"
			if hist := r.Histograms.Get(m.Key); tail && hist != nil && hist.TotalCount() > 0 {
				p95 = headlineMS(hist.ValueAtQuantile(95))
			}
			row = append(row, p95)
		}
		row = append(row, BoolText(tail, headlineMS(m.P99), "-"))
		if overhead {
			o, ok := s.Metric(measure.Key{Metric: measure.FirstChunkOverhead, Scenario: m.Scenario, Dialect: m.Dialect})
			row = append(row, BoolText(tail && ok && o.Count > 0, headlineMS(o.P99), "-"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// style is how a headline or a comparison is written: for a terminal, or as Markdown.
type style struct {
	verdict, reason, note, line, gap, between string // the headline's formats, and between blocks
	compare, compareNote, warning             string // the comparison's
	none                                      func(title string) string
	cell                                      func(string) string
	table                                     func(io.Writer, Table) error
}

var (
	textStyle = style{verdict: "verdict: %s\n", reason: "  - %s\n", note: "  %s\n", line: "%s: %s\n", between: "\n",
		compare: "compare: A = %s (the reference), B = %s\n", compareNote: "%s\n", warning: "WARNING: %s\n",
		none: func(string) string { return "Largest changes: none (no ranked figure changed)\n" },
		cell: func(s string) string { return s }, table: func(w io.Writer, t Table) error { return t.WriteText(w) }}
	markdownStyle = style{verdict: "**Verdict: %s**\n\n", reason: "- %s\n", note: "- %s\n", line: "- **%s**: %s\n", gap: "\n",
		compare: "## Comparison: %s → %s\n\n", compareNote: "> **%s**\n\n", warning: "> **Warning:** %s\n\n",
		none: func(title string) string { return "### " + title + "\n\nNone: no ranked figure changed.\n\n" },
		cell: MarkdownCell, table: func(w io.Writer, t Table) error { t.WriteMarkdown(w, "###"); return nil }}
)

// write writes the headline in style st.
func (h Headline) write(w io.Writer, st style) error {
	fmt.Fprintf(w, st.verdict, h.Verdict)
	for _, r := range h.Reasons {
		fmt.Fprintf(w, st.reason, st.cell(r))
	}
	if len(h.Allowed) > 0 {
		fmt.Fprintf(w, st.note, st.cell("allowed (known findings, not failing the run): "+strings.Join(h.Allowed, ", ")))
	}
	for _, warning := range h.Warnings {
		fmt.Fprintf(w, st.note, st.cell("warning (not failing the run): "+warning))
	}
	if len(h.Reasons)+len(h.Allowed)+len(h.Warnings) > 0 {
		fmt.Fprint(w, st.gap)
	}
	for _, l := range h.Lines {
		fmt.Fprintf(w, st.line, l[0], st.cell(l[1]))
	}
	fmt.Fprint(w, "\n")
	if err := st.table(w, h.Latency); err != nil || len(h.Worst.Rows) == 0 {
		return err
	}
	fmt.Fprint(w, st.between)
	return st.table(w, h.Worst)
}
