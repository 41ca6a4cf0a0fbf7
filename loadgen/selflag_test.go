package loadgen

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
)

// TestOverloadWarning: the verdict's warning names each sign of an overloaded generator, and
// is empty when it kept up.
func TestOverloadWarning(t *testing.T) {
	t.Parallel()
	lagOf := func(ms ...int64) *hdrhistogram.Histogram {
		h := measure.NewHistogram()
		for _, v := range ms {
			_ = h.RecordValue(v * 1000)
		}
		return h
	}
	for _, tc := range []struct {
		name     string
		lag      *hdrhistogram.Histogram
		counters measure.Counters
		want     []string // substrings of the warning; nil = no warning
	}{
		// lag well under the bound, no late starts: it kept up
		{"quiet", lagOf(0, 1, 1, 2), measure.Counters{SessionsStarted: 100}, nil},
		// no lag samples at all (a run shorter than one tick) and a closed loop: nothing to say
		{"no samples", lagOf(), measure.Counters{}, nil},
		// its own timer woke 40 ms late: the generator was starved of CPU
		{"lag", lagOf(40, 40, 40), measure.Counters{SessionsStarted: 100}, []string{"the generator was overloaded", "scheduling lag p99 was 40ms"}},
		// 1 in 10 open-loop starts late: it could not keep its schedule
		{"late starts", lagOf(1), measure.Counters{SessionsStarted: 100, LateStarts: 10}, []string{"the generator was overloaded", "10 of 100 sessions (10.0%) started late"}},
		// exactly at the late-start bound: still keeping up
		{"late at bound", lagOf(1), measure.Counters{SessionsStarted: 100, LateStarts: 1}, nil},
		// both signs at once are both named
		{"both", lagOf(50), measure.Counters{SessionsStarted: 10, LateStarts: 5}, []string{"lag p99 was 50ms", "5 of 10 sessions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := overloadWarning(tc.lag, tc.counters)
			if tc.want == nil {
				if got != "" {
					t.Errorf("warning %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("warning %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

// lagRun runs a few short sessions through an in-process stack and returns the run.
func lagRun(t *testing.T) *measure.Run {
	t.Helper()
	st := newStack(t, testScale)
	cfg := st.config(mixOf(t, []string{"plain-answer"}, optedInAll()), 2, 6)
	cfg.NoLeakCheck, cfg.RuntimeMetricsURL = true, "-"
	return runLoad(t, cfg)
}

// TestGeneratorLagOverloaded saturates this process's only P with busy goroutines during a run:
// the generator_lag histogram shows the probe woke late and the verdict warns that the
// generator was overloaded, without failing the run. Not parallel: GOMAXPROCS is
// process-wide, and the busy goroutines would slow every other test.
func TestGeneratorLagOverloaded(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	stop := make(chan struct{})
	var busy sync.WaitGroup
	deadline := time.Now().Add(30 * time.Second) // bounded even if the run hangs
	for range 4 {
		busy.Add(1)
		go func() {
			defer busy.Done()
			for time.Now().Before(deadline) {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	run := lagRun(t)
	close(stop)
	busy.Wait()

	h := run.Histograms.Get(generatorLagKey)
	if h == nil || h.TotalCount() == 0 {
		t.Fatalf("no %s histogram in %v", measure.GeneratorLag, run.Histograms.Keys())
	}
	if p99 := time.Duration(h.ValueAtQuantile(99)) * time.Microsecond; p99 <= OverloadLag {
		t.Errorf("generator_lag p99 %v with 4 busy goroutines on one P, want over %v", p99, OverloadLag)
	}
	v := run.Summary.Verdict
	if len(v.Warnings) != 1 || !strings.Contains(v.Warnings[0], "the generator was overloaded: its scheduling lag p99") {
		t.Errorf("verdict warnings %q, want the overload warning", v.Warnings)
	}
	if !v.Pass {
		t.Errorf("verdict %+v: an overloaded generator is a warning, not a failure of the target", v)
	}
	if _, ok := run.Summary.Metric(generatorLagKey); !ok {
		t.Errorf("summary metrics lack %v", generatorLagKey)
	}
}

// TestGeneratorLagQuiet: a run on an idle process records generator_lag and warns of nothing.
// Not parallel: the other tests' load in this process would be lag this test did not cause.
// The machine itself may be busy (it is shared): then the lag is real and the warning must
// name it, so the test still checks that the warning follows the lag.
func TestGeneratorLagQuiet(t *testing.T) {
	run := lagRun(t)
	h := run.Histograms.Get(generatorLagKey)
	if h == nil || h.TotalCount() == 0 {
		t.Fatalf("no %s histogram in %v", measure.GeneratorLag, run.Histograms.Keys())
	}
	v := run.Summary.Verdict
	if !v.Pass {
		t.Errorf("verdict %+v, want a pass", v)
	}
	if p99 := time.Duration(h.ValueAtQuantile(99)) * time.Microsecond; p99 > OverloadLag {
		t.Logf("the machine was busy: generator_lag p99 %v", p99)
		if len(v.Warnings) != 1 {
			t.Errorf("lag p99 %v over %v but warnings %q: want the overload warning", p99, OverloadLag, v.Warnings)
		}
		return
	}
	if len(v.Warnings) != 0 {
		t.Errorf("verdict warnings %q on a quiet run, want none", v.Warnings)
	}
}
