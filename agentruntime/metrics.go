package agentruntime

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// metrics are the runtime's Prometheus metrics, on a registry of its own.
type metrics struct {
	registry *prometheus.Registry

	clientStreamsOpen  *prometheus.GaugeVec
	clientStreamsTotal *prometheus.CounterVec
	clientAborts       *prometheus.CounterVec
	providerInFlight   prometheus.Gauge
	providerRequests   prometheus.Counter
	providerErrors     prometheus.Counter
	toolsRunning       prometheus.Gauge
	toolsSettled       *prometheus.CounterVec
	toolsCancelled     prometheus.Counter
	resetsSent         prometheus.Counter
	slowClientsDropped prometheus.Counter
	runsStopped        prometheus.Counter
	badRequests        *prometheus.CounterVec
	canvasResumable    prometheus.Gauge // reconnect.go
}

// Metric names are part of the runtime's contract with the load generator's leak check.
const (
	MetricClientStreamsOpen    = "streambench_runtime_client_streams_open"
	MetricProviderStreams      = "streambench_runtime_provider_streams_in_flight"
	MetricToolsRunning         = "streambench_runtime_tools_running"
	MetricToolsCancelled       = "streambench_runtime_tools_cancelled_total"
	MetricResetsSent           = "streambench_runtime_resets_sent_total"
	MetricProviderErrors       = "streambench_runtime_provider_errors_total"
	MetricSlowClientsDropped   = "streambench_runtime_slow_clients_dropped_total"
	MetricGoroutines           = "streambench_runtime_goroutines"
	MetricClientAborts         = "streambench_runtime_client_aborts_total"
	MetricClientStreamsStarted = "streambench_runtime_client_streams_total"
	MetricCanvasResumableOpen  = "streambench_runtime_canvas_resumable_open"
)

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	auto := promauto.With(reg)
	counter := func(name, help string) prometheus.Counter {
		return auto.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return auto.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	counterVec := func(name, help, label string) *prometheus.CounterVec {
		return auto.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	m := &metrics{
		registry: reg,
		clientStreamsOpen: auto.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricClientStreamsOpen, Help: "Client streams currently open, by dialect.",
		}, []string{"dialect"}),
		clientStreamsTotal: counterVec(MetricClientStreamsStarted, "Client streams opened, by dialect.", "dialect"),
		clientAborts:       counterVec(MetricClientAborts, "Client streams that ended because the client went away, by dialect.", "dialect"),
		providerInFlight:   gauge(MetricProviderStreams, "Provider requests and streams currently open."),
		providerRequests:   counter("streambench_runtime_provider_requests_total", "Provider turns requested."),
		providerErrors:     counter(MetricProviderErrors, "Provider turns that failed (HTTP error, mid-stream error or transport error)."),
		toolsRunning:       gauge(MetricToolsRunning, "Simulated tools currently running."),
		toolsSettled:       counterVec("streambench_runtime_tools_settled_total", "Simulated tools settled, by status.", "status"),
		toolsCancelled:     counter(MetricToolsCancelled, "Simulated tools that settled as cancelled (client gone, stop or shutdown)."),
		resetsSent:         counter(MetricResetsSent, "chunk_reset frames sent (sim-chat and sim-canvas)."),
		slowClientsDropped: counter(MetricSlowClientsDropped, "Client streams dropped because the client accepted no bytes for the idle timeout."),
		runsStopped:        counter("streambench_runtime_runs_stopped_total", "Compose runs ended by a stop request."),
		badRequests:        counterVec("streambench_runtime_bad_requests_total", "Requests rejected before streaming, by HTTP status.", "status"),
		canvasResumable:    gauge(MetricCanvasResumableOpen, "Resumable canvas executions held: running, or kept for a reconnect after their client dropped."),
	}
	auto.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricGoroutines, Help: "Goroutines in the runtime process."},
		func() float64 { return float64(runtime.NumGoroutine()) })
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// A scrape before any traffic shows the zeros a leak check compares against.
	for _, d := range []string{simchat.Name, simcanvas.Name, compose.Name, langgraph.Name} { // the served dialects
		m.clientStreamsOpen.WithLabelValues(d)
		m.clientStreamsTotal.WithLabelValues(d)
		m.clientAborts.WithLabelValues(d)
	}
	return m
}
