package loadgen

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
)

// fixedLibrary is a library of one scenario, "fixed": a constant 400 ms ttft, then tokens
// tokens 20 ms apart.
func fixedLibrary(t *testing.T, tokens int) *scenarios.Library {
	t.Helper()
	dir := t.TempDir()
	doc := fmt.Sprintf("name: fixed\ntiming:\n  ttft: 400ms\n  itl: 20ms\nturns:\n  - text: {tokens: %d}\n", tokens)
	if err := os.WriteFile(filepath.Join(dir, "fixed.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := scenarios.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// TestOverheadIsMeasuredLessScripted: in a seeded run against the reference runtime, the
// ttfc.overhead and ttft.overhead histograms hold exactly each session's measured ttfc less its
// scripted one, worked out here from the scenario alone (a constant 400 ms ttft at the test's
// time scale) and each session's own ttfc, as the run reported it.
func TestOverheadIsMeasuredLessScripted(t *testing.T) {
	t.Parallel()
	lib := fixedLibrary(t, 20)
	scripted := time.Duration(float64(400*time.Millisecond) * testScale)
	st := newStackOf(t, lib, testScale)
	cfg := st.config(mixOf(t, []string{"fixed"}, optedInNone()), 4, 24)
	cfg.Library, cfg.NoLeakCheck = lib, true
	want := measure.NewHistograms()
	var mu sync.Mutex
	cfg.Outputs = append(cfg.Outputs, LatencyFunc(func(l session.Latencies) {
		if l.TimeToFirstChunk == 0 {
			return
		}
		over := max(l.TimeToFirstChunk-scripted, 0)
		mu.Lock()
		defer mu.Unlock()
		for _, m := range []measure.Metric{measure.FirstChunkOverhead, measure.FirstTokenOverhead} {
			if err := want.Record(measure.Key{Metric: m, Scenario: l.Scenario, Dialect: l.Dialect}, over); err != nil {
				t.Error(err)
			}
		}
	}))
	run := runLoad(t, cfg)
	if !run.Summary.Verdict.Pass {
		t.Fatalf("the run failed:\n%s", describe(run))
	}
	for _, m := range []measure.Metric{measure.FirstChunkOverhead, measure.FirstTokenOverhead} {
		got, n := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == m })
		exp, _ := want.Merged(func(k measure.Key) bool { return k.Metric == m })
		if n == 0 || got.TotalCount() != 24 || !got.Equals(exp) {
			t.Errorf("%s: %d values (p50 %d µs, max %d µs), want the 24 sessions' ttfc − %v (p50 %d µs, max %d µs)",
				m, got.TotalCount(), got.ValueAtQuantile(50), got.Max(), scripted, exp.ValueAtQuantile(50), exp.Max())
		}
	}
	ttfc, _ := run.Summary.OverallMetric(measure.FirstChunk)
	over, ok := run.Summary.OverallMetric(measure.FirstChunkOverhead)
	if !ok || ttfc.Count != over.Count || ttfc.Min < scripted.Microseconds() {
		t.Errorf("overall ttfc %+v and its overhead %+v: want one overhead per ttfc, every ttfc at or after the scripted %v", ttfc, over, scripted)
	}
}
