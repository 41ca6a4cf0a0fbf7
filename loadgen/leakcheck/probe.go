// Package leakcheck compares the resource gauges of a runtime, the mock and the generator before
// a load and after it drained: a run's own check (Probe's Baseline, then Check), or a sharded
// run's one (TakeBaseline, then Verify).
package leakcheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/streambench/streambench/loadgen/engine"
	"github.com/streambench/streambench/measure"
)

// The check reads any runtime's Prometheus text: the common client libraries' resource gauges
// and every other gauge whose name says it counts live things. What it cannot read is reported
// as not checked, never as a failure: a runtime the check cannot read is not a leaking one.

// gauges is one reading: metric name → value summed over label sets.
type gauges map[string]float64

// knownLeakGauges are the resource gauges Prometheus clients export, of any declared type.
var knownLeakGauges = map[string]toleranceClass{
	"process_open_fds":              pooled, // the process collector of Go, Node (prom-client), Python, Java clients
	"go_goroutines":                 pooled, // Go client (not go_threads: Go never ends its threads, so it only grows)
	"nodejs_active_handles_total":   pooled, // prom-client: libuv handles (sockets, timers, servers)
	"nodejs_active_requests_total":  pooled, // prom-client: libuv requests (fs, dns) in flight
	"nodejs_active_resources_total": pooled, // prom-client: what keeps the event loop alive
	"jvm_threads_current":           pooled, // Java simpleclient hotspot
	"jvm_threads_live_threads":      pooled, // Micrometer
	"http_server_active_requests":   exact,  // OpenTelemetry's http.server.active_requests
}

// leakWords select the other gauges worth comparing.
var leakWords = [...]string{"goroutines", "open", "active", "inflight", "in_flight", "running", "queue"}

// notCountSuffixes mark gauges of a size, a duration or a time, not a count of live things.
var notCountSuffixes = [...]string{"_seconds", "_bytes", "_ratio", "_timestamp", "_info", "_limit"}

// toleranceClass says how much a gauge may grow over a run.
type toleranceClass int

const (
	exact  toleranceClass = iota // streams, tools, queues: back to the baseline exactly
	pooled                       // descriptors, goroutines, threads, handles: pools keep some
)

// leakGaugeClass reports whether name (a gauge of the given type) is compared, and how.
func leakGaugeClass(name string, typ dto.MetricType) (toleranceClass, bool) {
	if c, ok := knownLeakGauges[name]; ok {
		return c, typ == dto.MetricType_GAUGE || typ == dto.MetricType_UNTYPED
	}
	if typ != dto.MetricType_GAUGE || strings.Contains(name, "max_") {
		return exact, false
	}
	for _, s := range notCountSuffixes {
		if strings.HasSuffix(name, s) {
			return exact, false
		}
	}
	for _, w := range leakWords {
		if strings.Contains(name, w) {
			return pooledByName(name), true
		}
	}
	return exact, false
}

// pooledByName reports the tolerance class of a gauge the word match selected: what pools
// keep (goroutines, descriptors, threads, Node's handles), or anything else, exact.
func pooledByName(name string) toleranceClass {
	for _, w := range [...]string{"goroutines", "fds", "threads", "handles"} {
		if strings.Contains(name, w) {
			return pooled
		}
	}
	if strings.HasPrefix(name, "nodejs_active_") {
		return pooled
	}
	return exact
}

// gaugesOf keeps the leak-relevant gauges of fams.
func gaugesOf(fams map[string]*dto.MetricFamily) gauges {
	out := gauges{}
	for name, f := range fams {
		if _, ok := leakGaugeClass(name, f.GetType()); !ok {
			continue
		}
		var sum float64
		for _, m := range f.GetMetric() {
			if f.GetType() == dto.MetricType_UNTYPED {
				sum += m.GetUntyped().GetValue()
			} else {
				sum += m.GetGauge().GetValue()
			}
		}
		if math.IsNaN(sum) || math.IsInf(sum, 0) {
			continue
		}
		out[name] = sum
	}
	return out
}

// Probe is what a leak check needs: how to read the sources and how much they may keep.
type Probe struct {
	Client     *http.Client
	RuntimeURL string        // the runtime's Prometheus endpoint; "" or "-": not read
	MockURL    string        // the mock's base URL, whose /metrics is read; "": not read
	PerStream  float64       // the pooled tolerance per peak open stream
	Grace      time.Duration // how long Check waits for the gauges to settle
	Self       bool          // read the generator's own gauges too
	Peak       func() int64  // peak open streams, for the pooled tolerance
}

// scrape reads one source (URL "": the generator itself); an error is why it is not checked.
func (p *Probe) scrape(ctx context.Context, src SourceReading) (gauges, error) {
	if src.URL == "" { // the generator's own goroutines and open file descriptors
		g := gauges{"go_goroutines": float64(runtime.NumGoroutine())}
		if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
			g["process_open_fds"] = float64(len(fds))
		}
		return g, nil
	}
	if _, err := url.Parse(src.URL); err != nil {
		return nil, fmt.Errorf("metrics URL %q: %w", src.URL, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fams, err := engine.Fetch(ctx, p.Client, src.URL, nil)
	if errors.Is(err, engine.StatusError(http.StatusNotFound)) {
		return nil, fmt.Errorf("no metrics: GET %s: HTTP 404", src.URL)
	} else if err != nil {
		return nil, fmt.Errorf("GET %s: %w", src.URL, err)
	}
	return gaugesOf(fams), nil
}

// tolerance is how much a gauge may grow without counting as a leak: none for exact gauges; a
// little for pooled ones, as idle connections to the provider stay open, in proportion to the
// run's peak concurrency.
func (p *Probe) tolerance(src, name string) float64 {
	if c, _ := leakGaugeClass(name, dto.MetricType_GAUGE); c != pooled {
		return 0
	}
	if src == "generator" {
		return 8
	}
	var peak int64
	if p.Peak != nil {
		peak = p.Peak()
	}
	return 16 + p.PerStream*float64(peak)
}

// sources lists what the check reads, without gauges.
func (p *Probe) sources() []SourceReading {
	var out []SourceReading
	if p.RuntimeURL != "-" && p.RuntimeURL != "" {
		out = append(out, SourceReading{Source: "runtime", URL: p.RuntimeURL})
	}
	if p.MockURL != "" {
		out = append(out, SourceReading{Source: "mock", URL: strings.TrimSuffix(p.MockURL, "/") + "/metrics"})
	}
	if p.Self {
		out = append(out, SourceReading{Source: "generator"})
	}
	return out
}

// Reading is what a probe read before the load.
type Reading struct {
	sources    []SourceReading
	notChecked []measure.LeakNotChecked
}

// Baseline reads every source before the load; one unread or without gauges is not checked.
func (p *Probe) Baseline(ctx context.Context) *Reading {
	b := &Reading{}
	for _, src := range p.sources() {
		g, err := p.scrape(ctx, src)
		switch {
		case err != nil:
			b.notChecked = append(b.notChecked, measure.LeakNotChecked{Source: src.Source, Reason: err.Error()})
		case len(g) == 0:
			b.notChecked = append(b.notChecked, measure.LeakNotChecked{Source: src.Source,
				Reason: fmt.Sprintf("%s exports no gauge of live resources (looked for %s and gauges named *open*, *active*, *in_flight*, *running*, *queue*, *goroutines*)", src.URL, strings.Join(slices.Sorted(maps.Keys(knownLeakGauges)), ", "))})
		default:
			src.Gauges = g
			b.sources = append(b.sources, src)
		}
	}
	return b
}

// Check reads every baseline source again until each delta is within tolerance or the grace
// has passed, and returns one Leak per compared gauge and what it could not compare.
func (p *Probe) Check(ctx context.Context, before *Reading) ([]measure.Leak, []measure.LeakNotChecked) {
	if t, ok := p.Client.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections() // our idle keep-alive connections are not the target's leak
	}
	deadline := time.Now().Add(p.Grace)
	for {
		var leaks []measure.Leak
		notChecked := slices.Clone(before.notChecked)
		clean := true
		for _, src := range before.sources {
			after, err := p.scrape(ctx, src)
			if err != nil {
				clean = false // perhaps a moment's hiccup: read again until the grace ends
				notChecked = append(notChecked, measure.LeakNotChecked{Source: src.Source, Lost: true,
					Reason: "read before the load, unreadable after it (it died or restarted?): " + err.Error()})
				continue
			}
			for _, n := range slices.Sorted(maps.Keys(src.Gauges)) {
				b := src.Gauges[n]
				a, ok := after[n]
				if !ok {
					notChecked = append(notChecked, measure.LeakNotChecked{Source: src.Source, Name: n,
						Reason: fmt.Sprintf("gone after the load (was %g before it)", b)})
					continue
				}
				l := measure.Leak{Source: src.Source, Name: n, Before: b, After: a, Delta: a - b, Tolerance: p.tolerance(src.Source, n)}
				l.OK = l.Delta <= l.Tolerance
				clean = clean && l.OK
				leaks = append(leaks, l)
			}
			for _, n := range slices.Sorted(maps.Keys(after)) {
				if _, ok := src.Gauges[n]; !ok {
					notChecked = append(notChecked, measure.LeakNotChecked{Source: src.Source, Name: n,
						Reason: fmt.Sprintf("absent before the load (%g after it): no baseline", after[n])})
				}
			}
		}
		if clean || time.Now().After(deadline) {
			return leaks, notChecked
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return leaks, notChecked
		}
	}
}
