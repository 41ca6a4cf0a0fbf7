package mockprovider

import (
	"sync"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// metrics are the mock's Prometheus series, on a registry of one Server's own.
type metrics struct {
	registry        *prometheus.Registry
	activeStreams   prometheus.Gauge
	queueDepth      prometheus.Gauge
	started         *prometheus.CounterVec
	completed       *prometheus.CounterVec
	clientCancelled *prometheus.CounterVec
	providerErrors  *prometheus.CounterVec
	httpErrors      *prometheus.CounterVec
	queuedSeconds   prometheus.Histogram
	tokensSent      prometheus.Counter
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	auto := promauto.With(reg)
	gauge := func(name, help string) prometheus.Gauge {
		return auto.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return auto.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		registry:        reg,
		activeStreams:   gauge("streambench_mock_active_streams", "Requests currently being played (admitted by the capacity model)."),
		queueDepth:      gauge("streambench_mock_queue_depth", "Requests waiting for a stream slot."),
		started:         counterVec("streambench_mock_streams_started_total", "Requests admitted and started, by wire.", "wire"),
		completed:       counterVec("streambench_mock_streams_completed_total", "Requests whose turn was played to its end, by wire.", "wire"),
		clientCancelled: counterVec("streambench_mock_client_cancelled_total", "Requests whose client went away before the turn ended (queued or streaming), by wire.", "wire"),
		providerErrors: counterVec("streambench_mock_provider_errors_injected_total",
			"Scripted provider faults injected, by wire and kind (http-429, http-500, http-503, midstream).", "wire", "kind"),
		httpErrors: counterVec("streambench_mock_http_errors_total",
			"Requests answered with an HTTP error, by wire and status (bad input, faults, full queue).", "wire", "status"),
		queuedSeconds: auto.NewHistogram(prometheus.HistogramOpts{
			Name:    "streambench_mock_queued_seconds",
			Help:    "Time requests waited for a stream slot (only requests that had to wait).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		tokensSent: auto.NewCounter(prometheus.CounterOpts{
			Name: "streambench_mock_tokens_sent_total", Help: "Tokens sent in streamed frames and non-streamed responses.",
		}),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Pacing error is recorded in microseconds, from 1 µs to 10 minutes at 3 significant digits.
const (
	pacingMinMicros = 1
	pacingMaxMicros = 600_000_000
	pacingSigFigs   = 3
	pacingShards    = 16
)

// pacingRecorder collects pacing errors into HdrHistograms sharded by request sequence number,
// so a shard's lock is almost never contended; a snapshot merges them. Safe for concurrent use.
type pacingRecorder struct {
	shards [pacingShards]pacingShard
}

type pacingShard struct {
	mu         sync.Mutex
	hist       *hdrhistogram.Histogram
	outOfRange int64    // counts values beyond the histogram's range, so none is lost silently.
	_          [40]byte // keep shards on separate cache lines
}

func newPacingRecorder() *pacingRecorder {
	p := &pacingRecorder{}
	for i := range p.shards {
		p.shards[i].hist = hdrhistogram.New(pacingMinMicros, pacingMaxMicros, pacingSigFigs)
	}
	return p
}

// record adds one pacing error (µs, negative clamped to 0) to shard key.
func (p *pacingRecorder) record(key uint64, micros int64) {
	if micros < 0 {
		micros = 0
	}
	s := &p.shards[key%pacingShards]
	s.mu.Lock()
	if err := s.hist.RecordValue(micros); err != nil {
		s.outOfRange++
	}
	s.mu.Unlock()
}

// snapshot merges the shards and returns the out-of-range count; with clear, it empties each as
// it takes it, so no value is counted twice or lost.
func (p *pacingRecorder) snapshot(clear bool) (*hdrhistogram.Histogram, int64) {
	out := hdrhistogram.New(pacingMinMicros, pacingMaxMicros, pacingSigFigs)
	var lost int64
	for i := range p.shards {
		s := &p.shards[i]
		s.mu.Lock()
		lost += out.Merge(s.hist) + s.outOfRange
		if clear {
			s.hist.Reset()
			s.outOfRange = 0
		}
		s.mu.Unlock()
	}
	return out, lost
}
