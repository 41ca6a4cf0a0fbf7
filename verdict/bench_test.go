package verdict_test

import (
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/verdict"
)

// BenchmarkGate measures evaluating thresholds (histograms merged per check) and a regression.
func BenchmarkGate(b *testing.B) {
	run := fixture.Run(b, fixture.Options{Seed: 1})
	base := fixture.Run(b, fixture.Options{Seed: 2, TTFCShift: time.Millisecond})
	var cfg verdict.Config
	for _, e := range []string{"ttfc.p99<300ms", "gap.p99<=50ms", "errors<0.1%", "violations==0", "leaks==0"} {
		t, err := verdict.ParseThreshold(e)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Thresholds = append(cfg.Thresholds, t)
	}
	g, _ := verdict.ParseRegression("ttfc.p99=10%")
	cfg.Regressions, cfg.Baseline = []verdict.Regression{g}, base
	b.ReportAllocs()
	for b.Loop() {
		if _, err := verdict.Judge(run, cfg); err != nil {
			b.Fatal(err)
		}
	}
}
