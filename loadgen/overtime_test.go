package loadgen

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
)

// TestLatencyOverTimeShowsASlowdown: a target whose provider adds 300 ms before every
// response once the run is 1.5 s old shows it in the series of latency over time: the windows
// after the switch have a p50 of at least the added delay, above the first window's, for ttfc
// and for its overhead (the script is the same throughout). The run's overall p50 could not
// say when.
func TestLatencyOverTimeShowsASlowdown(t *testing.T) {
	t.Parallel()
	lib := fixedLibrary(t, 10)
	// The provider slows down: past the switch, every request waits before the mock serves it,
	// so the runtime's first chunk comes that much after the script's time.
	const added = 300 * time.Millisecond
	var once sync.Once
	var first time.Time
	slowing := func(mock http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				once.Do(func() { first = time.Now() })
				if time.Since(first) > 1500*time.Millisecond {
					time.Sleep(added)
				}
			}
			mock.ServeHTTP(w, r)
		})
	}
	st := newStackWrapped(t, lib, testScale, slowing)

	cfg := st.config(mixOf(t, []string{"fixed"}, optedInNone()), 4, 0)
	cfg.Library, cfg.NoLeakCheck = lib, true
	cfg.Duration = 3500 * time.Millisecond
	run := runLoad(t, cfg)
	if run.Summary.Counters.SessionsStarted == 0 || run.Summary.Counters.Errors() > 0 {
		t.Fatalf("the run did not play cleanly:\n%s", describe(run))
	}
	for _, m := range []measure.Metric{measure.FirstChunk, measure.FirstChunkOverhead} {
		s, ok := run.Summary.LatencyOverTime(m)
		if !ok || s.WindowMs != 1000 || len(s.Windows) < 3 {
			t.Fatalf("%s over time: %+v, want at least 3 windows of 1 s", m, s)
		}
		early := s.Windows[0]
		if early.StartMs != 0 {
			t.Fatalf("%s: first window %+v, want the run's first second", m, early)
		}
		var n int64
		for _, w := range s.Windows {
			n += w.Count
			if w.StartMs < 2000 {
				continue // before the switch, or the window it falls in
			}
			if w.P50 < added.Microseconds() || w.P50 <= early.P50 {
				t.Errorf("%s: window at %d ms has p50 %d µs, want at least the added %v and above the first window's %d µs",
					m, w.StartMs, w.P50, added, early.P50)
			}
		}
		if overall, _ := run.Summary.OverallMetric(m); n != overall.Count {
			t.Errorf("%s: the windows hold %d values, the run %d", m, n, overall.Count)
		}
	}
}
