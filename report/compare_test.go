package report_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	a := fixture.Run(t, fixture.Options{Seed: 8})
	b := fixture.Run(t, fixture.Options{Seed: 8, TTFCShift: 100 * time.Millisecond, HTTPErrors: 10})
	b.Summary.RunID = "fixture-2"
	// a metric only B recorded
	if err := b.Histograms.Record(measure.Key{Metric: measure.StopLatency, Scenario: "stop", Dialect: "compose"}, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	b.Summary.Metrics = measure.Summarize(b.Histograms)
	c := report.Compare(a, b)
	find := func(name string) report.CompareRow {
		for _, r := range c.Rows {
			if r.Name == name {
				return r
			}
		}
		t.Fatalf("no row %q", name)
		return report.CompareRow{}
	}
	ttfc := find("ttfc p50 plain-answer/sim-chat")
	if ch := ttfc.Change(); ch < 100 || ch > 150 { // ~80 ms → ~180 ms
		t.Errorf("ttfc p50 change = %.1f%%, want about +125%%", ch)
	}
	if all := find("ttfc p50 (all)"); all.Change() < 50 {
		t.Errorf("merged ttfc p50 change = %.1f%%, want a clear increase", all.Change())
	}
	if gap := find("chunk_gap p99 plain-answer/sim-chat"); gap.Change() != 0 {
		t.Errorf("chunk gap is identical in both runs, change = %v", gap.Change())
	}
	if stop := find("stop p99 stop/compose"); stop.HasA || !stop.HasB || !math.IsNaN(stop.Change()) {
		t.Errorf("stop row = %+v, want only B", stop)
	}
	if errs := find("errors (error outcomes)"); errs.A != 0 || errs.B != 10 {
		t.Errorf("errors row = %+v", errs)
	}
	// A rate metric is compared in tokens/s, not ms; the aggregate figures have rows of their own.
	if rate := find("stream_tokens_per_s p50 (all)"); rate.Unit != "tokens/s" || rate.A < 50 || rate.A > 300 {
		t.Errorf("per-stream rate row = %+v, want about 118 tokens/s", rate)
	}
	if tps := find("output tokens/s"); tps.A != 2400 || tps.Unit != "tokens/s" {
		t.Errorf("output tokens/s row = %+v, want 2400", tps)
	}
	if g := find("goodput"); g.Unit != "%" || g.B >= g.A {
		t.Errorf("goodput row = %+v, want B (10 more HTTP errors) below A", g)
	}
	var text, md bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	c.WriteMarkdown(&md)
	for _, want := range []string{"A: fixture-1", "B: fixture-2", "ttfc p99 tool-loop/sim-chat", "—", "n/a"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text comparison lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| metric | A: fixture-1 | B: fixture-2 | change |") {
		t.Errorf("markdown comparison header wrong:\n%s", md.String())
	}
}

// TestCompareSummaryFirst: compare opens with a warning when the workloads differ and the
// largest changes (a counter from 0 first, then percentiles of well-sampled histograms, never
// max, p99.9, a histogram's count or the volume played), before every metric.
func TestCompareSummaryFirst(t *testing.T) {
	t.Parallel()
	a := fixture.Run(t, fixture.Options{Seed: 9})
	b := fixture.Run(t, fixture.Options{Seed: 9, TTFCShift: 100 * time.Millisecond, HTTPErrors: 10})
	b.Summary.RunID = "fixture-2"
	b.Summary.Config.Clients = 1000
	b.Summary.Config.Duration = time.Minute
	c := report.Compare(a, b)
	if want := []string{"clients 500 → 1000", "duration 30s → 1m0s"}; strings.Join(c.WorkloadDiffs, "|") != strings.Join(want, "|") {
		t.Errorf("workload diffs %q, want %q", c.WorkloadDiffs, want)
	}
	top := c.Largest(10)
	if len(top) != 10 || top[0].Name != "errors (error outcomes)" {
		t.Fatalf("largest changes %+v: want 10, the errors (0 → 10) first", top)
	}
	sawTTFC := false
	for _, r := range top {
		for _, bad := range []string{" max ", " p99.9 ", " count "} {
			if strings.Contains(r.Name+" ", bad) {
				t.Errorf("ranked %q: max, p99.9 and counts are not ranked", r.Name)
			}
		}
		if r.Name == "sessions started" || r.Name == "sessions ok" || r.Name == "frames" {
			t.Errorf("ranked %q: the volume played follows the workload", r.Name)
		}
		if r.NA > 0 && (r.NA < 30 || r.NB < 30) {
			t.Errorf("ranked %q on %d/%d values", r.Name, r.NA, r.NB)
		}
		sawTTFC = sawTTFC || strings.HasPrefix(r.Name, "ttfc ")
	}
	if !sawTTFC {
		t.Errorf("the +100 ms TTFC is not among the largest changes: %+v", top)
	}
	var text, md bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	c.WriteMarkdown(&md)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		w, l, e := strings.Index(out, "clients 500 → 1000"), strings.Index(out, "Largest changes"), strings.Index(out, "Every metric")
		if w < 0 || l < w || e < l {
			t.Errorf("%s: want the workload warning, then the largest changes, then every metric:\n%s", name, out[:min(len(out), 2000)])
		}
		if !strings.Contains(out, "from 0") {
			t.Errorf("%s: the errors' change from 0 is not shown as such", name)
		}
	}
	if same := report.Compare(a, a); len(same.WorkloadDiffs) != 0 || len(same.Largest(10)) != 0 {
		t.Errorf("a run against itself: diffs %q, largest %+v", same.WorkloadDiffs, same.Largest(10))
	}
}

// TestComparePlots: compare --plot's figures draw both runs (or sets) and write PNG or SVG by
// the file's extension; two runs with nothing in common to plot, or another extension, are errors.
func TestComparePlots(t *testing.T) {
	t.Parallel()
	a := fixture.Run(t, fixture.Options{Seed: 8})
	b := fixture.Run(t, fixture.Options{Seed: 8, TTFCShift: 100 * time.Millisecond})
	dir := t.TempDir()
	f, err := report.CompareFigure(a, b)
	if err != nil {
		t.Fatal(err)
	}
	sets := []measure.Repeats{measure.NewRepeats([]*measure.Summary{&a.Summary, &a.Summary}), measure.NewRepeats([]*measure.Summary{&b.Summary})}
	repeats := report.CompareRepeatsFigure(sets[0], sets[1])
	for name, fig := range map[string]report.Figure{"runs.png": f, "runs.svg": f, "repeats.png": repeats, "repeats.SVG": repeats} {
		path := filepath.Join(dir, name)
		if err := fig.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if strings.HasSuffix(name, ".png") && !bytes.HasPrefix(b, []byte("\x89PNG")) || strings.HasSuffix(strings.ToLower(name), ".svg") && !bytes.Contains(b, []byte("<svg")) {
			t.Fatalf("%s is not what its extension says", name)
		}
	}
	if err := f.WriteFile(filepath.Join(dir, "x.jpg")); err == nil || !strings.Contains(err.Error(), "want a .png or .svg") {
		t.Fatalf("x.jpg: %v", err)
	}
	empty := &measure.Run{Histograms: measure.NewHistograms()}
	if _, err := report.CompareFigure(empty, empty); err == nil || !strings.Contains(err.Error(), "nothing to plot") {
		t.Fatalf("two empty runs: %v", err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "repeats.SVG"))
	wants := []string{">A<", ">B<", "share of A&#39;s median"}
	for _, f := range sets[0].Figures {
		wants = append(wants, ">"+f.Figure+"<")
	}
	if len(wants) < 5 {
		t.Fatalf("the fixture's repeats have %d figures: nothing to draw", len(wants)-3)
	}
	for _, want := range wants {
		if !strings.Contains(string(svg), want) {
			t.Errorf("repeats.SVG has no %q", want)
		}
	}
	svg, _ = os.ReadFile(filepath.Join(dir, "runs.svg"))
	for _, want := range []string{"ttft", "ttfc", "chunk_gap", "duration", ">A n=", ">B n=", "fixture-1"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("runs.svg has no %q", want)
		}
	}
}
