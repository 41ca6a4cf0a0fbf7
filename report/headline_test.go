package report_test

import (
	"html"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/report"
)

// TestHeadlineSameEverywhere: the console summary, report.md and report.html open with the
// same headline (verdict and reasons, outcomes, errors, violations, leaks, the latency table
// with p95 read from the histograms, the worst keys), before the per-key detail.
func TestHeadlineSameEverywhere(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 21, Leak: true, HTTPErrors: 4, Violations: map[protocol.Rule]int64{protocol.RConverge: 3}})
	r.Summary.Verdict.Warnings = []string{"the generator was overloaded"}
	r.Summary.Processes = []measure.ProcessLoad{{Name: "generator", Cores: 0.4}, {Name: "mock", Cores: 0.5}, {Name: "runtime", Cores: 1.02, Saturated: true}}
	r.Summary.MachineCores = 2
	h := report.NewHeadline(r)
	if l := h.Lines[len(h.Lines)-1]; l[0] != "cpu" || l[1] != "cores used: generator 0.40, mock 0.50, runtime 1.02 (of 2); saturated: runtime" {
		t.Errorf("last headline line %q: want the cores each process used, the saturated one named", l)
	}

	merged, _ := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk })
	if got := h.Latency.Rows[0]; got[0] != "ttfc" || got[3] != formatMS(merged.ValueAtQuantile(95)) {
		t.Errorf("ttfc row %q: want p95 %s ms from the merged histograms", got, formatMS(merged.ValueAtQuantile(95)))
	}
	if got := h.Latency.Rows[1]; got[0] != "ttfc.overhead" || got[1] != "1800" {
		t.Errorf("second latency row %q: want ttfc.overhead, next to ttfc, over its 1800 values", got)
	}
	toolOver, _ := r.Summary.Metric(measure.Key{Metric: measure.FirstChunkOverhead, Scenario: "tool-loop", Dialect: "sim-chat"})
	if got, want := h.Worst.Rows[0], strconv.FormatFloat(float64(toolOver.P99)/1000, 'f', 1, 64); got[len(got)-1] != want {
		t.Errorf("worst key %q: want tool-loop's ttfc.overhead p99 (%s ms) in its last column", got, want)
	}
	if len(h.Worst.Rows) != 4 || h.Worst.Rows[0][0] != "tool-loop" {
		t.Errorf("worst keys %q: want the fixture's 4 keys, tool-loop (the slowest TTFC) first", h.Worst.Rows)
	}

	dir := renderRun(t, r)
	var console strings.Builder
	if err := report.WriteSummary(&console, r, report.SavedTally(r)); err != nil {
		t.Fatal(err)
	}
	md := readFile(t, dir, report.MarkdownFile)
	page := readFile(t, dir, report.HTMLFile)
	outs := map[string]string{"console": console.String(), "report.md": string(md), "report.html": html.UnescapeString(string(page))}
	for name, out := range outs {
		want := []string{"erdict: FAIL", "the generator was overloaded"}
		for _, l := range h.Lines {
			want = append(want, l[1])
		}
		for _, row := range append(h.Latency.Rows, h.Worst.Rows...) {
			want = append(want, row...)
		}
		at := 0
		for _, w := range want {
			i := strings.Index(out, w)
			if i < 0 {
				t.Errorf("%s lacks the headline's %q", name, w)
				continue
			}
			at = max(at, i)
		}
		if detail := strings.Index(out, "plain-answer"); detail < 0 || strings.Index(out, "Worst keys") > detail {
			t.Errorf("%s: the worst keys are not the first place a key appears", name)
		}
		if perKey := strings.Index(out, "Latency by scenario and dialect"); perKey >= 0 && perKey < at {
			t.Errorf("%s: the per-key table comes before the end of the headline", name)
		}
	}
	for _, want := range []string{"outcomes: completed 1666, scripted_error 30, aborted 300, http_error 4 (503×4) ERROR (2000 sessions started)",
		"errors: 4 of 2000 sessions (0.200%): http_error 4", "violations: 3: R-converge 3",
		"leaks: 1 over tolerance: runtime streambench_open_streams 0 → 40 (tolerance 0) (3 gauges checked: runtime 2, mock 1)"} {
		if !strings.Contains(outs["console"], want) {
			t.Errorf("console lacks %q:\n%s", want, outs["console"])
		}
	}
}

// TestHeadlineWithoutHistograms: a run read without its histograms has no p95 and no merged
// figure, so the headline leaves the p95 column out and says its figures are the worst key's.
func TestHeadlineWithoutHistograms(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 22})
	r.Histograms = nil
	h := report.NewHeadline(r)
	if strings.Contains(strings.Join(h.Latency.Header, " "), "p95") || strings.Contains(strings.Join(h.Worst.Header, " "), "p95") {
		t.Errorf("p95 without histograms: %q, %q", h.Latency.Header, h.Worst.Header)
	}
	if !strings.Contains(h.Latency.Title, "worst") {
		t.Errorf("latency title %q does not say the figures are the worst key's", h.Latency.Title)
	}
	var ttfc measure.MetricSummary
	for _, m := range r.Summary.Metrics {
		if m.Metric == measure.FirstChunk && m.P99 > ttfc.P99 {
			ttfc = m
		}
	}
	if got := h.Latency.Rows[0]; got[0] != "ttfc" || got[3] != formatMS(ttfc.P99) {
		t.Errorf("ttfc row %q, want the worst key's p99 %s", got, formatMS(ttfc.P99))
	}
	// A metric nobody recorded is a row of dashes, not a missing row.
	r = fixture.Run(t, fixture.Options{Seed: 22})
	var cancel []string
	for _, row := range report.NewHeadline(&measure.Run{Summary: r.Summary, Histograms: measure.NewHistograms()}).Latency.Rows {
		if row[0] == "cancel" {
			cancel = row
		}
	}
	if len(cancel) == 0 || cancel[1] != "0" || cancel[2] != "-" {
		t.Errorf("cancel with no samples: %q", cancel)
	}
}

// formatMS is the headline's millisecond format: three decimals below 1 ms, one above.
func formatMS(us int64) string {
	if us < 1000 {
		return strconv.FormatFloat(float64(us)/1000, 'f', 3, 64)
	}
	return strconv.FormatFloat(float64(us)/1000, 'f', 1, 64)
}

// TestHeadlineWorstKeysNeedSamples: a key of a few sessions is not ranked by a p99 that is its
// maximum: with keys of enough sessions it is left out (the title says how many), and when
// every key is small they are listed with no p95 or p99.
func TestHeadlineWorstKeysNeedSamples(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 23})
	var small string
	for i := range r.Summary.Metrics {
		m := &r.Summary.Metrics[i]
		if m.Metric == measure.FirstChunk && small == "" {
			// The slowest key on paper, from 3 sessions.
			m.Count, m.P99, small = 3, m.P99*100, m.Scenario
		}
	}
	h := report.NewHeadline(r)
	for _, row := range h.Worst.Rows {
		if row[0] == small {
			t.Errorf("a 3-session key ranked among the worst: %q", row)
		}
	}
	if !strings.Contains(h.Worst.Title, "not ranked: 1 key(s) of fewer than 20 sessions") {
		t.Errorf("title %q: want it to say a small key was left out", h.Worst.Title)
	}
	for i := range r.Summary.Metrics {
		r.Summary.Metrics[i].Count = min(r.Summary.Metrics[i].Count, 5)
	}
	h = report.NewHeadline(r)
	if len(h.Worst.Rows) == 0 || !strings.Contains(h.Worst.Title, "no tail percentiles") {
		t.Fatalf("all keys small: rows %q, title %q", h.Worst.Rows, h.Worst.Title)
	}
	for _, row := range h.Worst.Rows {
		if row[4] != "-" || row[5] != "-" {
			t.Errorf("small key %q shows a p95 or p99", row)
		}
	}
}
