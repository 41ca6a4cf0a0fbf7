// Package live exposes a run as Prometheus metrics while it runs (load --metrics-addr).
package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// Exporter is one of a run's outputs, as the registry names them (measure.Def.Live); it is fed
// never from the per-frame path and observes with atomics. Safe for concurrent use.
type Exporter struct {
	registry   *prometheus.Registry
	last       atomic.Pointer[loadgen.Progress]
	sessions   *prometheus.CounterVec
	violations *prometheus.CounterVec
	firstChunk *prometheus.HistogramVec
	chunkGap   *prometheus.HistogramVec
}

// Histogram buckets in seconds: ttfc from a fast mock to a queueing runtime, chunk gaps around
// a token's pacing to a stall.
var (
	firstChunkBuckets = []float64{.01, .025, .05, .1, .2, .3, .5, .75, 1, 1.5, 2.5, 5, 10, 30, 60}
	chunkGapBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .075, .1, .15, .25, .5, 1, 2.5, 5, 15}
)

// opts are m's series name and help as the registry declares them, help followed by more.
func opts(m measure.Metric, more string) (name, help string) {
	d := m.Def()
	return d.Live, strings.ToUpper(d.Doc[:1]) + d.Doc[1:] + more + "."
}

// New makes the metrics on a registry of their own, with the Go runtime's and the process's
// collectors (memory and CPU per pod size a shard).
func New() *Exporter {
	l := &Exporter{registry: prometheus.NewRegistry()}
	counters := func(m measure.Metric, label string) *prometheus.CounterVec {
		name, help := opts(m, "")
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	histograms := func(m measure.Metric, buckets []float64) *prometheus.HistogramVec {
		name, help := opts(m, ": seconds, by dialect, of measured sessions (observed at a session's end, or in the recorder's batches)")
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, []string{"dialect"})
	}
	l.sessions, l.violations = counters(measure.ByOutcome, "outcome"), counters(measure.Violations, "rule")
	l.firstChunk, l.chunkGap = histograms(measure.FirstChunk, firstChunkBuckets), histograms(measure.ChunkGap, chunkGapBuckets)
	progress := func(m measure.Metric, v func(loadgen.Progress) float64) prometheus.Collector {
		read := func() float64 {
			if p := l.last.Load(); p != nil {
				return v(*p)
			}
			return 0
		}
		name, help := opts(m, "")
		if m.Def().Kind == measure.KindGauge {
			return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read)
		}
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, read)
	}
	l.registry.MustRegister(
		l.sessions, l.violations, l.firstChunk, l.chunkGap,
		progress(measure.OpenStreams, func(p loadgen.Progress) float64 { return float64(p.Active) }),
		progress(measure.SessionsStarted, func(p loadgen.Progress) float64 { return float64(p.Started) }),
		progress(measure.Errors, func(p loadgen.Progress) float64 { return float64(p.Errors) }),
		progress(measure.Frames, func(p loadgen.Progress) float64 { return float64(p.Frames) }),
		progress(measure.Draining, func(p loadgen.Progress) float64 {
			if p.Draining {
				return 1
			}
			return 0
		}),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Every outcome from zero, so rate() has a series before the first of each kind.
	for _, o := range measure.Outcomes() {
		l.sessions.WithLabelValues(string(o))
	}
	return l
}

// Attach adds the Exporter to cfg's outputs.
func (l *Exporter) Attach(cfg *loadgen.Config) { cfg.Outputs = append(cfg.Outputs, l) }

// The Exporter takes session ends, progress and latencies, never snapshots.
var (
	_ loadgen.SessionEndOutput = (*Exporter)(nil)
	_ loadgen.ProgressOutput   = (*Exporter)(nil)
	_ loadgen.LatencyOutput    = (*Exporter)(nil)
)

// SessionEnded counts a session's outcome and its violations (loadgen.SessionEndOutput).
func (l *Exporter) SessionEnded(e loadgen.SessionEnd) {
	l.sessions.WithLabelValues(string(e.Outcome)).Inc()
	l.LateViolation(e)
}

// LateViolation counts a violation found after its session ended (loadgen.LateViolationOutput).
func (l *Exporter) LateViolation(e loadgen.SessionEnd) {
	for _, v := range e.Violations {
		l.violations.WithLabelValues(string(v.Rule)).Inc()
	}
}

// Progress keeps the run's latest progress (loadgen.ProgressOutput).
func (l *Exporter) Progress(p loadgen.Progress) { l.last.Store(&p) }

// Latencies observes a session's time to first chunk or chunk gaps (loadgen.LatencyOutput).
func (l *Exporter) Latencies(v session.Latencies) {
	if v.TimeToFirstChunk > 0 {
		l.firstChunk.WithLabelValues(v.Dialect).Observe(v.TimeToFirstChunk.Seconds())
	}
	if len(v.ChunkGaps) == 0 {
		return
	}
	h := l.chunkGap.WithLabelValues(v.Dialect)
	for _, g := range v.ChunkGaps {
		h.Observe(g.Seconds())
	}
}

// Path is where Handler serves the metrics.
const Path = "/metrics"

// Handler serves GET /metrics in the Prometheus exposition format, and 404 elsewhere.
func (l *Exporter) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET "+Path, promhttp.HandlerFor(l.registry, promhttp.HandlerOpts{Registry: l.registry, Timeout: 10 * time.Second}))
	return mux
}

// Serve serves an Exporter attached to cfg on addr until stop; a later error goes to logf.
func Serve(addr string, cfg *loadgen.Config, logf func(format string, args ...any)) (listening string, stop func(), err error) {
	live := New()
	live.Attach(cfg)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: live.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("metrics server: %v\n", err)
		}
	}()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
