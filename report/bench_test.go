package report_test

import (
	"testing"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// BenchmarkRender measures re-rendering a run (5 figures as PNG and SVG, HTML, Markdown).
func BenchmarkRender(b *testing.B) {
	dir := b.TempDir()
	if err := measure.WriteRun(dir, fixture.Run(b, fixture.Options{Seed: 1})); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := report.Render(dir); err != nil {
			b.Fatal(err)
		}
	}
}
