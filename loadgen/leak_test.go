package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
)

// runtimeWithMetrics is a valid sim-chat runtime whose /metrics answers the first scrape (the
// baseline) with pages[0] and every later one with the last page (no pages: no /metrics route, 404).
func runtimeWithMetrics(t *testing.T, pages ...string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/", oddSimChat(t))
	var scrapes atomic.Int64
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if len(pages) == 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(pages[min(scrapes.Add(1), int64(len(pages)))-1]))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// leakRun plays a short valid load against srv with the leak check on; self says whether it
// also reads the generator's own goroutines and descriptors, which are every parallel test's
// (only a test that runs alone may).
func leakRun(t *testing.T, srv *httptest.Server, grace time.Duration, self bool) *measure.Summary {
	t.Helper()
	run, err := Run(context.Background(), withDialects(Config{
		Target: srv.URL, Mix: oddMix(t), MixName: "odd", Clients: 2, Sessions: 6, LeakGrace: grace,
		noSelfLeakGauges: !self,
	}))
	if err != nil {
		t.Fatalf("a run must not fail to start over its leak check: %v", err)
	}
	s := &run.Summary
	if s.Counters.SessionsOK != 6 || s.TotalViolations() != 0 {
		t.Fatalf("the load itself failed: counters %+v, violations %v", s.Counters, s.Violations)
	}
	return s
}

// runtimeLeaks returns the runtime's compared gauges by name.
func runtimeLeaks(s *measure.Summary) map[string]measure.Leak {
	out := map[string]measure.Leak{}
	for _, l := range s.Leaks {
		if l.Source == "runtime" {
			out[l.Name] = l
		}
	}
	return out
}

// runtimeNotChecked returns what of the runtime's was not checked, in order.
func runtimeNotChecked(s *measure.Summary) []measure.LeakNotChecked {
	var out []measure.LeakNotChecked
	for _, n := range s.LeaksNotChecked {
		if n.Source == "runtime" {
			out = append(out, n)
		}
	}
	return out
}

// TestLeakCheckRuntimeWithoutMetrics: a runtime with no /metrics is "not checked", named with
// its reason, and the run passes (the generator's own gauges are still checked). Not
// parallel: the generator's gauges are this process's.
func TestLeakCheckRuntimeWithoutMetrics(t *testing.T) {
	s := leakRun(t, runtimeWithMetrics(t), 2*time.Second, true)
	if len(runtimeLeaks(s)) != 0 {
		t.Errorf("runtime gauges compared without a /metrics: %+v", s.Leaks)
	}
	if nc := runtimeNotChecked(s); len(nc) == 0 || !strings.Contains(nc[0].Reason, "404") {
		t.Errorf("runtime not reported as not checked (404): %+v", s.LeaksNotChecked)
	}
	if !slices.ContainsFunc(s.Leaks, func(l measure.Leak) bool { return l.Source == "generator" }) {
		t.Errorf("the generator's own gauges were not checked: %+v", s.Leaks)
	}
	if !s.Verdict.Pass {
		t.Errorf("run failed because the runtime has no /metrics: %v", s.Verdict.Reasons)
	}
}

// TestLeakCheckUnreadableMetrics: a /metrics that is not Prometheus text is not checked either.
func TestLeakCheckUnreadableMetrics(t *testing.T) {
	t.Parallel()
	srv := runtimeWithMetrics(t, "<html>a dashboard</html>\n")
	s := leakRun(t, srv, 2*time.Second, false)
	if nc := runtimeNotChecked(s); len(nc) == 0 || !strings.Contains(nc[0].Reason, "not Prometheus text") {
		t.Errorf("runtime not reported as unreadable: %+v", s.LeaksNotChecked)
	}
	if !s.Verdict.Pass {
		t.Errorf("run failed because the runtime's /metrics is unreadable: %v", s.Verdict.Reasons)
	}
}

// TestLeakCheckNodeHandlesGrow: a Node runtime whose handles and descriptors grew by 200 over
// the run fails the run, naming the gauge.
func TestLeakCheckNodeHandlesGrow(t *testing.T) {
	t.Parallel()
	before, after := readFixture(t, "node-before.prom"), readFixture(t, "node-after-leaked.prom")
	srv := runtimeWithMetrics(t, before, after)
	s := leakRun(t, srv, 300*time.Millisecond, false)
	got := runtimeLeaks(s)
	for _, name := range []string{"nodejs_active_handles_total", "process_open_fds"} {
		if l, ok := got[name]; !ok || l.OK || l.Delta != 200 {
			t.Errorf("%s: %+v, want a leak of 200", name, l)
		}
	}
	if l := got["nodejs_active_resources_total"]; !l.OK {
		t.Errorf("resources did not grow but were reported: %+v", l)
	}
	if s.Verdict.Pass || !slices.ContainsFunc(s.Verdict.Reasons, func(r string) bool { return strings.Contains(r, "runtime nodejs_active_handles_total grew by 200") }) {
		t.Errorf("verdict does not fail naming the gauge: pass %v, %v", s.Verdict.Pass, s.Verdict.Reasons)
	}
}

// TestLeakCheckNodeStable: the same runtime with its gauges back at the baseline is clean, and
// every Node gauge it exports was compared.
func TestLeakCheckNodeStable(t *testing.T) {
	t.Parallel()
	before := readFixture(t, "node-before.prom")
	srv := runtimeWithMetrics(t, before)
	s := leakRun(t, srv, 2*time.Second, false)
	got := runtimeLeaks(s)
	for _, name := range []string{"process_open_fds", "nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"} {
		if l, ok := got[name]; !ok || !l.OK {
			t.Errorf("%s: compared %v, %+v; want compared and ok", name, ok, l)
		}
	}
	if len(runtimeNotChecked(s)) > 0 {
		t.Errorf("runtime partly not checked: %+v", s.LeaksNotChecked)
	}
	if !s.Verdict.Pass {
		t.Errorf("verdict failed on a stable runtime: %v", s.Verdict.Reasons)
	}
}

// TestLeakCheckGaugeComesAndGoes: a gauge only in the baseline, or only after the load, has no
// pair to compare: it is not checked, by name, and the run passes.
func TestLeakCheckGaugeComesAndGoes(t *testing.T) {
	t.Parallel()
	srv := runtimeWithMetrics(t, "# TYPE go_goroutines gauge\ngo_goroutines 10\n# TYPE old_open_things gauge\nold_open_things 1\n",
		"# TYPE go_goroutines gauge\ngo_goroutines 10\n# TYPE new_open_things gauge\nnew_open_things 5\n")
	s := leakRun(t, srv, 2*time.Second, false)
	var names []string
	for _, n := range runtimeNotChecked(s) {
		names = append(names, n.Name+": "+n.Reason)
	}
	if len(names) != 2 || !strings.HasPrefix(names[0], "old_open_things: gone after the load") || !strings.HasPrefix(names[1], "new_open_things: absent before the load") {
		t.Errorf("not checked %q, want old_open_things gone and new_open_things absent before", names)
	}
	if l, ok := runtimeLeaks(s)["go_goroutines"]; !ok || !l.OK {
		t.Errorf("go_goroutines: %+v, want compared and ok", l)
	}
	if !s.Verdict.Pass {
		t.Errorf("verdict failed: %v", s.Verdict.Reasons)
	}
}

// readFixture reads a Prometheus text fixture of the leakcheck package.
func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("leakcheck", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
