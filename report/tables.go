// Package report turns a run's saved results into what people read: plots, report.html,
// report.md, a comparison of two runs and the CI gate; its kit (Figure, NewPlot, LineStyle, the
// ticks, Table) draws the sweep's report too. Its output is a function of the saved run alone
// (no current time, sorted keys).
package report

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/streambench/streambench/measure"
)

// Table is one table, rendered the same as text, Markdown and HTML.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Right  []bool // numeric columns, right-aligned in Markdown and HTML
}

func ms(us int64) string { return measure.Ms(float64(us)) }

// Count formats a count.
func Count(v int64) string { return strconv.FormatInt(v, 10) }

func float(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// BoolText is yes when b holds, else no.
func BoolText(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

// runTable is the run's settings.
func runTable(s *measure.Summary) Table {
	c := s.Config
	rows := [][]string{
		{"run", s.RunID},
		{"verdict", BoolText(s.Verdict.Pass, "PASS", "FAIL")},
		{"started", s.Started.UTC().Format(time.RFC3339)},
		{"duration", s.Ended.Sub(s.Started).Round(time.Millisecond).String()},
	}
	add := func(name, v string) {
		if v != "" && v != "0" {
			rows = append(rows, []string{name, v})
		}
	}
	if s.Incomplete {
		add("incomplete", "yes: a snapshot "+s.Ended.Sub(s.Started).Round(time.Second).String()+" into the run (killed, or still running)")
	}
	if s.Interrupted {
		add("interrupted", "yes (stopped before the planned end)")
	}
	add("target", c.Target)
	add("dialects", strings.Join(c.Dialects, ", "))
	add("clients", strconv.Itoa(c.Clients))
	if c.Rate > 0 {
		add("rate", float(c.Rate)+"/s "+c.Arrival)
	}
	add("max in-flight", strconv.Itoa(c.MaxInflight))
	add("stages", c.Stages)
	if c.Duration > 0 {
		add("planned duration", c.Duration.String())
	}
	add("sessions", Count(c.Sessions))
	if c.Warmup > 0 {
		add("warmup", c.Warmup.String())
	}
	if c.ThinkTime > 0 {
		add("think time", c.ThinkTime.String())
	}
	add("mix", c.Mix)
	add("seed", strconv.FormatUint(c.Seed, 10))
	add("faults", strings.Join(c.Faults, ", "))
	add("http", BoolText(c.HTTP2, "HTTP/2 (h2c)", ""))
	add("thresholds", strings.Join(c.Thresholds, ", "))
	add("allowed rules", measure.JoinNames(c.Allow))
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		add(k, c.Extra[k])
	}
	e := s.Environment
	add("environment", strings.TrimSpace(fmt.Sprintf("%s %s/%s, %d CPUs", e.GoVersion, e.OS, e.Arch, e.CPUs)))
	add("git revision", e.GitRevision)
	add("host", e.Hostname)
	return Table{Title: "Run", Header: []string{"setting", "value"}, Rows: rows}
}

func metricsTable(s *measure.Summary) Table {
	t := Table{
		Title:  "Latency by scenario and dialect (ms)",
		Header: []string{"metric", "scenario", "dialect", "count", "min", "p50", "p90", "p95", "p99", "p99.9", "max", "mean"},
		Right:  []bool{false, false, false, true, true, true, true, true, true, true, true, true},
	}
	metrics := slices.Clone(s.Metrics)
	slices.SortStableFunc(metrics, func(a, b measure.MetricSummary) int { return a.Key.Compare(b.Key) })
	for _, m := range metrics {
		if isDialectMeasure(s, m.Metric) {
			continue // measures.go
		}
		t.Rows = append(t.Rows, append([]string{metricLabel(m.Metric), m.Scenario, m.Dialect}, statCells(m)...))
	}
	return t
}

// statCells are m's count and statistics in ms, as the latency tables show them.
func statCells(m measure.MetricSummary) []string {
	return []string{Count(m.Count), ms(m.Min), ms(m.P50), ms(m.P90), ms(m.P95), ms(m.P99), ms(m.P999), ms(m.Max), measure.Ms(m.Mean)}
}

// overviewMetricsTable is each metric over every scenario and dialect.
func overviewMetricsTable(r *measure.Run) Table {
	t := Table{
		Title:  "Latency overview (ms, all scenarios and dialects merged)",
		Header: []string{"metric", "count", "min", "p50", "p90", "p95", "p99", "p99.9", "max", "mean"},
		Right:  []bool{false, true, true, true, true, true, true, true, true, true},
	}
	for _, s := range measure.SummarizeOverall(r.Histograms) {
		if isDialectMeasure(&r.Summary, s.Metric) {
			continue // measures.go
		}
		t.Rows = append(t.Rows, append([]string{metricLabel(s.Metric)}, statCells(s)...))
	}
	return t
}

// metricLabel names a metric in the latency tables; a rate's, shown ÷1000 as µs are, says
// tokens/s.
func metricLabel(m measure.Metric) string {
	return BoolText(m.IsRate(), string(m)+" (tokens/s)", string(m))
}

func tokensTable(s *measure.Summary) Table {
	t := Table{Title: "Tokens and goodput", Header: []string{"figure", "value"}, Right: []bool{false, true}}
	tk := s.Tokens
	if tk == nil {
		return t
	}
	row := func(name, v string) { t.Rows = append(t.Rows, []string{name, v}) }
	row("output tokens (thinking and answer)", Count(tk.OutputTokens))
	row("output tokens/s (aggregate, over the measured wall time)", strconv.FormatFloat(tk.OutputTokensPerSecond, 'f', 1, 64))
	row("requests/s (completed sessions, over the measured wall time)", strconv.FormatFloat(tk.RequestsPerSecond, 'f', 2, 64))
	if tk.Estimated {
		row("estimated output tokens (no usage report: counted with "+tk.EstimatedMethod()+")", fmt.Sprintf("%s of %s sessions", Count(tk.EstimatedTokens), Count(tk.EstimatedSessions)))
	}
	g := tk.Goodput
	row("goodput SLOs (per session)", cmp.Or(strings.Join(g.SLOs, ", "), "none given: every successful session"))
	row("goodput sessions (succeeded, every SLO met)", fmt.Sprintf("%d of %d judged", g.Sessions, g.Judged))
	row("goodput share", measure.Pct(g.Share))
	row("goodput sessions/s", strconv.FormatFloat(g.PerSecond, 'f', 2, 64))
	return t
}

func countersTable(s *measure.Summary) Table {
	c := s.Counters
	t := Table{Title: "Counters", Header: []string{"counter", "value"}, Right: []bool{false, true}}
	row := func(name, v string) { t.Rows = append(t.Rows, []string{name, v}) }
	row("sessions started", Count(c.SessionsStarted))
	row("sessions ok", Count(c.SessionsOK))
	row("sessions failed (error outcome or violation)", Count(c.SessionsFailed))
	for _, o := range measure.Outcomes() {
		if n := c.Outcomes[o]; n > 0 || o == measure.OutcomeCompleted {
			name := "outcome " + string(o)
			if o.IsError() {
				name += " (error)"
			}
			row(name, Count(n))
		}
	}
	for _, code := range slices.Sorted(maps.Keys(c.HTTPErrors)) {
		row(fmt.Sprintf("http_error: HTTP %d", code), Count(c.HTTPErrors[code]))
	}
	row("errors (sessions with an error outcome)", Count(c.Errors()))
	row("error rate", measure.Pct(c.ErrorRate()))
	row("frames", Count(c.Frames))
	row("bytes", Count(c.Bytes))
	row("late starts", Count(c.LateStarts))
	row("dropped starts", Count(c.DroppedStarts))
	row("record errors", Count(c.RecordErrors))
	row("violations", Count(s.TotalViolations()))
	return t
}

func violationsTable(s *measure.Summary) Table {
	t := Table{Title: "Violations by rule", Header: []string{"rule", "count", "verdict"}, Right: []bool{false, true, false}}
	for _, r := range s.RulesByCount() {
		if s.Violations[r] > 0 {
			t.Rows = append(t.Rows, []string{string(r), Count(s.Violations[r]), BoolText(slices.Contains(s.Config.Allow, r), "allowed (known finding)", "FAIL")})
		}
	}
	return t
}

// providerTable is the mock's provider requests and retries per scenario, and their total.
func providerTable(s *measure.Summary) Table {
	t := Table{Title: "Provider requests (the mock's records)", Header: []string{"scenario", "sessions", "requests", "requests/session", "retries", "retried after HTTP"},
		Right: []bool{false, true, true, true, true, false}}
	row := func(p measure.ProviderRequests) {
		per := "-"
		if p.Sessions > 0 {
			per = strconv.FormatFloat(float64(p.Requests)/float64(p.Sessions), 'f', 2, 64)
		}
		t.Rows = append(t.Rows, []string{p.Scenario, Count(p.Sessions), Count(p.Requests), per, Count(p.Retries), measure.RetriesText(p.RetriesByStatus)})
	}
	for _, p := range s.ProviderRequests {
		row(p)
	}
	total := measure.TotalProviderRequests(s.ProviderRequests)
	total.Scenario = "(all)"
	row(total)
	return t
}

func leaksTable(s *measure.Summary) Table {
	t := Table{Title: "Leak check", Header: []string{"source", "gauge", "before", "after", "delta", "tolerance", "verdict"},
		Right: []bool{false, false, true, true, true, true, false}}
	for _, l := range s.Leaks {
		t.Rows = append(t.Rows, []string{l.Source, l.Name, float(l.Before), float(l.After), float(l.Delta),
			float(l.Tolerance), BoolText(l.OK, "ok", "LEAK")})
	}
	for _, n := range s.LeaksNotChecked {
		t.Rows = append(t.Rows, []string{n.Source, cmp.Or(n.Name, "(all)"), "", "", "", "", "not checked: " + n.Reason})
	}
	return t
}

func samplesTable(samples []measure.ViolationSample) Table {
	t := Table{Title: "Violation samples", Header: []string{"rule", "session", "scenario", "dialect", "seed", "frames", "detail"},
		Right: []bool{false, false, false, false, true, true, false}}
	for _, v := range samples {
		t.Rows = append(t.Rows, []string{string(v.Rule), v.Session, v.Scenario, v.Dialect,
			strconv.FormatUint(v.Seed, 10), strconv.Itoa(len(v.Frames)), measure.Clip(v.Detail, maxReportDetailBytes)})
	}
	return t
}

// MarkdownCell escapes what would break a GitHub table cell or line. Markdown is read raw too,
// so only what GitHub would render as HTML is escaped ('<' opening a tag, '&' an entity):
// "ttfc.p99<300ms" stays as written.
func MarkdownCell(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		next := byte(0)
		if i+1 < len(s) {
			next = s[i+1]
		}
		switch c := s[i]; {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '|':
			b.WriteString(`\|`)
		case c == '\r' || c == '\n':
			b.WriteByte(' ')
		case c == '<' && (isASCIILetter(next) || next == '/' || next == '!' || next == '?'):
			b.WriteString("&lt;")
		case c == '&' && (isASCIILetter(next) || next == '#'):
			b.WriteString("&amp;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// WriteMarkdown writes t as a GitHub-flavoured table under a heading of the given level ("##");
// an empty table becomes a "None." line.
func (t Table) WriteMarkdown(w io.Writer, level string) {
	if t.Title != "" {
		fmt.Fprintf(w, "%s %s\n\n", level, t.Title)
	}
	if len(t.Rows) == 0 {
		fmt.Fprint(w, "None.\n\n")
		return
	}
	cells := func(row []string) {
		fmt.Fprint(w, "|")
		for _, c := range row {
			fmt.Fprintf(w, " %s |", MarkdownCell(c))
		}
		fmt.Fprint(w, "\n")
	}
	cells(t.Header)
	fmt.Fprint(w, "|")
	for i := range t.Header {
		fmt.Fprint(w, BoolText(t.IsRight(i), "---:|", "---|"))
	}
	fmt.Fprint(w, "\n")
	for _, r := range t.Rows {
		cells(r)
	}
	fmt.Fprint(w, "\n")
}

// IsRight reports whether column i is numeric (right-aligned), for an HTML template.
func (t Table) IsRight(i int) bool { return i < len(t.Right) && t.Right[i] }

// WriteText writes t aligned in columns for a terminal.
func (t Table) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if t.Title != "" {
		fmt.Fprintf(tw, "%s\n", t.Title)
	}
	fmt.Fprintln(tw, strings.Join(t.Header, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
