package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/streambench/streambench/measure"
)

// A leak check compares resource gauges before the load and after it drained. It reads every
// gauge a process exports whose name says it counts live things (goroutines, open, active,
// in-flight, running, queued) so it works against any runtime that exports such gauges, plus
// the generator's own goroutines and file descriptors.

// leakSource is one process whose gauges the check reads.
type leakSource struct {
	name string // "runtime", "mock" or "generator"
	url  string // Prometheus text endpoint; "" for the generator itself
}

// gauges is one reading: metric name → value summed over label sets.
type gauges map[string]float64

// leakWords select the gauges worth comparing.
var leakWords = [...]string{"goroutines", "open", "active", "inflight", "in_flight", "running", "queue"}

func isLeakGauge(name string) bool {
	if strings.Contains(name, "max_") || strings.HasSuffix(name, "_limit") {
		return false
	}
	for _, w := range leakWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// parseGauges reads the Prometheus text format and keeps the leak-relevant gauges.
func parseGauges(text string) (gauges, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	out := gauges{}
	for name, f := range fams {
		if f.GetType() != dto.MetricType_GAUGE || !isLeakGauge(name) {
			continue
		}
		var sum float64
		for _, m := range f.GetMetric() {
			sum += m.GetGauge().GetValue()
		}
		out[name] = sum
	}
	return out, nil
}

// scrape reads one source.
func (r *runner) scrape(ctx context.Context, src leakSource) (gauges, error) {
	if src.url == "" {
		return r.selfGauges(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%s metrics: %w", src.name, err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s metrics: GET %s: %w", src.name, src.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s metrics: GET %s: HTTP %d", src.name, src.url, resp.StatusCode)
	}
	var b strings.Builder
	if _, err := io.Copy(&b, io.LimitReader(resp.Body, 8<<20)); err != nil {
		return nil, fmt.Errorf("%s metrics: GET %s: %w", src.name, src.url, err)
	}
	g, err := parseGauges(b.String())
	if err != nil {
		return nil, fmt.Errorf("%s metrics: GET %s: parse Prometheus text: %w", src.name, src.url, err)
	}
	return g, nil
}

// selfGauges reads the generator's own goroutines and open file descriptors (connections).
func (r *runner) selfGauges() gauges {
	g := gauges{"go_goroutines": float64(runtime.NumGoroutine())}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		g["process_open_fds"] = float64(len(fds))
	}
	return g
}

// tolerance is how much a gauge may grow over a run without counting as a leak. Stream, tool
// and queue gauges must return exactly to their baseline. Goroutines and descriptors may keep a
// little: pooled idle connections between the runtime and the provider stay open (a handful of
// goroutines each) and scale with the run's peak concurrency.
func (r *runner) tolerance(src, name string) float64 {
	if strings.Contains(name, "goroutines") || strings.Contains(name, "fds") {
		if src == "generator" {
			return 8
		}
		return 16 + r.cfg.LeakPerStream*float64(r.peakActive.Load())
	}
	return 0
}

// leakSources lists what the check reads.
func (r *runner) leakSources() []leakSource {
	var out []leakSource
	if r.cfg.RuntimeMetricsURL != "-" {
		out = append(out, leakSource{name: "runtime", url: r.cfg.RuntimeMetricsURL})
	}
	if r.cfg.MockURL != "" {
		out = append(out, leakSource{name: "mock", url: strings.TrimSuffix(r.cfg.MockURL, "/") + "/metrics"})
	}
	return append(out, leakSource{name: "generator"})
}

// ErrLeakBaseline is returned (wrapped) by Run when a leak check source cannot be read before
// the load: the run does not start, since its leak check could not be judged.
var ErrLeakBaseline = errors.New("leak check baseline")

// leakBaseline reads every source before the load. A source that cannot be read is an error:
// the user asked for the check (NoLeakCheck turns it off).
func (r *runner) leakBaseline(ctx context.Context) (map[string]gauges, error) {
	out := map[string]gauges{}
	for _, src := range r.leakSources() {
		g, err := r.scrape(ctx, src)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrLeakBaseline, err)
		}
		out[src.name] = g
	}
	return out, nil
}

// leakCheck reads every source again until each delta is within tolerance or LeakGrace has
// passed, and returns one Leak per compared gauge.
func (r *runner) leakCheck(ctx context.Context, before map[string]gauges) ([]measure.Leak, error) {
	if t, ok := r.client.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections() // our idle keep-alive connections are not the target's leak
	}
	deadline := time.Now().Add(r.cfg.LeakGrace)
	for {
		var leaks []measure.Leak
		clean := true
		for _, src := range r.leakSources() {
			after, err := r.scrape(ctx, src)
			if err != nil {
				return nil, fmt.Errorf("leak check after the load: %w", err)
			}
			names := make([]string, 0, len(before[src.name]))
			for n := range before[src.name] {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				b, a := before[src.name][n], after[n]
				l := measure.Leak{Source: src.name, Name: n, Before: b, After: a, Delta: a - b, Tolerance: r.tolerance(src.name, n)}
				l.OK = l.Delta <= l.Tolerance
				clean = clean && l.OK
				leaks = append(leaks, l)
			}
		}
		if clean || time.Now().After(deadline) {
			return leaks, nil
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return leaks, nil
		}
	}
}
