package report_test

import (
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// BenchmarkRender measures re-rendering a run (5 figures as PNG and SVG, HTML, Markdown).
func BenchmarkRender(b *testing.B) {
	dir := b.TempDir()
	if err := measure.WriteRun(dir, fixtureRun(b, runOptions{seed: 1})); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := report.Render(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGate measures evaluating thresholds (histograms merged per check) and a regression.
func BenchmarkGate(b *testing.B) {
	run := fixtureRun(b, runOptions{seed: 1})
	base := fixtureRun(b, runOptions{seed: 2, ttfcShift: time.Millisecond})
	var cfg report.GateConfig
	for _, e := range []string{"ttfc.p99<300ms", "gap.p99<=50ms", "errors<0.1%", "violations==0", "leaks==0"} {
		t, err := report.ParseThreshold(e)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Thresholds = append(cfg.Thresholds, t)
	}
	g, _ := report.ParseRegression("ttfc.p99=10%")
	cfg.Regressions, cfg.Baseline = []report.Regression{g}, base
	b.ReportAllocs()
	for b.Loop() {
		if _, err := report.Gate(run, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
