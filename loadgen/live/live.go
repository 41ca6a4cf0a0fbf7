// Package live exposes a run as Prometheus metrics while it runs (load --metrics-addr): an
// Exporter that is one of the run's outputs (loadgen.Output: session ends, progress, latencies).
package live

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// Exporter exposes a run as Prometheus metrics while it runs (`load --metrics-addr`), so a run of
// many shards on a cluster can be watched in Grafana: open streams, sessions by outcome,
// violations by rule, and time-to-first-chunk and chunk-gap histograms by dialect. The run's
// results stay the record of truth (HdrHistograms, exact); these are for watching.
//
// It is one of the run's outputs (Attach), fed never from the per-frame path: the counters and
// open streams come from the once-a-second progress, outcomes and violations from each
// session's end, TTFT once per session and chunk gaps in the batches of 8 the recorder
// already flushes. Prometheus histograms observe with atomics, so no lock is taken either.
// Every metric is on the Exporter's own registry, none on the global one. Safe for concurrent use.
type Exporter struct {
	registry   *prometheus.Registry
	last       atomic.Pointer[loadgen.Progress]
	sessions   *prometheus.CounterVec
	violations *prometheus.CounterVec
	firstChunk *prometheus.HistogramVec
	chunkGap   *prometheus.HistogramVec
}

// Live metric names, as the Grafana dashboard (deploy/grafana/streambench.json) queries them.
const (
	OpenStreams      = "streambench_open_streams"
	SessionsStarted  = "streambench_sessions_started_total"
	Sessions         = "streambench_sessions_total"
	Violations       = "streambench_violations_total"
	Errors           = "streambench_errors_total"
	Frames           = "streambench_frames_total"
	Draining         = "streambench_draining"
	TimeToFirstChunk = "streambench_time_to_first_chunk_seconds"
	ChunkGap         = "streambench_chunk_gap_seconds"
)

// Histogram buckets in seconds. Time to first chunk spans a fast mock (tens of ms) to a
// queueing runtime (tens of s); chunk gaps sit around a token's pacing (20 tokens/s is 50 ms),
// with the tail a stall makes.
var (
	firstChunkBuckets = []float64{.01, .025, .05, .1, .2, .3, .5, .75, 1, 1.5, 2.5, 5, 10, 30, 60}
	chunkGapBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .075, .1, .15, .25, .5, 1, 2.5, 5, 15}
)

// New makes the metrics on a registry of their own, with the Go runtime's and the
// process's collectors (memory and CPU per pod are what sizes a shard).
func New() *Exporter {
	l := &Exporter{registry: prometheus.NewRegistry()}
	l.sessions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Sessions, Help: "Sessions ended, by outcome (completed, scripted_error, aborted, in_band_error, http_error, transport_error, decode_error, truncated, stalled, over_time, cut).",
	}, []string{"outcome"})
	l.violations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: Violations, Help: "Protocol violations, by rule.",
	}, []string{"rule"})
	l.firstChunk = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: TimeToFirstChunk, Help: "Time from a measured session's intended start to its first answer chunk, observed at the session's end.",
		Buckets: firstChunkBuckets,
	}, []string{"dialect"})
	l.chunkGap = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: ChunkGap, Help: "Gaps between answer chunks within a turn of measured sessions.",
		Buckets: chunkGapBuckets,
	}, []string{"dialect"})
	progress := func(name, help string, counter bool, v func(loadgen.Progress) float64) prometheus.Collector {
		read := func() float64 {
			if p := l.last.Load(); p != nil {
				return v(*p)
			}
			return 0
		}
		if counter {
			return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, read)
		}
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read)
	}
	l.registry.MustRegister(
		l.sessions, l.violations, l.firstChunk, l.chunkGap,
		progress(OpenStreams, "Streams open now (updated once a second).", false, func(p loadgen.Progress) float64 { return float64(p.Active) }),
		progress(SessionsStarted, "Sessions started.", true, func(p loadgen.Progress) float64 { return float64(p.Started) }),
		progress(Errors, "Sessions with an error outcome (every outcome but completed, scripted_error, aborted).", true, func(p loadgen.Progress) float64 { return float64(p.Errors) }),
		progress(Frames, "SSE frames received.", true, func(p loadgen.Progress) float64 { return float64(p.Frames) }),
		progress(Draining, "1 once no new session starts and in-flight ones are finishing.", false, func(p loadgen.Progress) float64 {
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

// Attach adds the Exporter to cfg's outputs (loadgen.Config.Outputs), after the ones already
// there.
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
	for _, v := range e.Violations {
		l.violations.WithLabelValues(string(v.Rule)).Inc()
	}
}

// Progress keeps the run's latest progress for the open streams and the counters
// (loadgen.ProgressOutput).
func (l *Exporter) Progress(p loadgen.Progress) { l.last.Store(&p) }

// Latencies observes a session's time to first chunk or a batch of its chunk gaps
// (loadgen.LatencyOutput): one label lookup per call, an atomic observation per value.
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

// Serve serves an Exporter added to cfg's outputs (Attach) on addr until stop, which closes the
// server (call it after the run). It returns the address it listens on; a server error after
// the start goes to logf.
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
