package loadgen

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
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

// TestEngineMetricsBesideTTFC: with EngineMetricsURL, the engine's gauges are read while the
// load runs, kept in the summary on the run's clock beside ttfc over time, and rendered (a
// table, panels under ttfc over time), the URL's credentials redacted, and no read comes once
// the run returned; an endpoint that is not Prometheus text is a warning naming it, never a
// failed run.
func TestEngineMetricsBesideTTFC(t *testing.T) {
	t.Parallel()
	lib := fixedLibrary(t, 10)
	st := newStackOf(t, lib, testScale)
	var reads atomic.Int64
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "vllm:num_requests_waiting{model_name=\"m\"} %d\nvllm:kv_cache_usage_perc 0.5\n", reads.Add(1))
	}))
	defer engine.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>\n") }))
	defer html.Close()

	for _, c := range []struct {
		url     string
		warning string
	}{{strings.Replace(engine.URL, "://", "://bob:s3cretpw@", 1) + "/metrics", ""}, {html.URL, "engine metrics: every read of " + html.URL + " failed (last: not Prometheus text"}} {
		cfg := st.config(mixOf(t, []string{"fixed"}, optedInNone()), 2, 0)
		cfg.Library, cfg.NoLeakCheck, cfg.EngineMetricsURL = lib, true, c.url
		cfg.Duration = 2500 * time.Millisecond
		run := runLoad(t, cfg)
		e := run.Summary.Engine
		if !run.Summary.Verdict.Pass || e == nil || e.URL != RedactURL(c.url) || strings.Contains(fmt.Sprint(run.Summary), "s3cretpw") {
			t.Fatalf("%s: pass %v, engine %+v:\n%s", c.url, run.Summary.Verdict.Pass, e, describe(run))
		}
		warned := slices.ContainsFunc(run.Summary.Verdict.Warnings, func(w string) bool { return c.warning != "" && strings.HasPrefix(w, c.warning) })
		if c.warning != "" {
			if !warned || len(e.Series) != 0 {
				t.Fatalf("%s: warnings %q, series %+v; want %q and none", c.url, run.Summary.Verdict.Warnings, e.Series, c.warning)
			}
			continue
		}
		if len(e.Series) != 2 || e.Series[0].Name != "vllm:num_requests_waiting" || len(e.Series[0].Points) < 2 || e.Failed != 0 {
			t.Fatalf("engine %+v, want two gauges read at least twice", e)
		}
		pts := e.Series[0].Points
		for i := 1; i < len(pts); i++ {
			if pts[i].Value <= pts[i-1].Value || pts[i].Ms <= pts[i-1].Ms || pts[i].Ms > cfg.Duration.Milliseconds()+5000 {
				t.Fatalf("points %+v, want one per read, in order, within the run", pts)
			}
		}
		n := reads.Load()
		time.Sleep(1500 * time.Millisecond)
		if reads.Load() != n {
			t.Errorf("the engine was read after the run returned")
		}
		var md bytes.Buffer
		report.WriteMarkdown(&md, run)
		if !strings.Contains(md.String(), "Engine gauges") || !strings.Contains(md.String(), "vLLM requests waiting") {
			t.Fatalf("the report has no engine table:\n%s", md.String())
		}
	}
}
