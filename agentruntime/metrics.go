package agentruntime

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// servedDialects are the client dialects the runtime serves (its routes in Server.routes), by
// the names their packages give them: the "dialect" metric label.
func servedDialects() []string {
	return []string{simchat.Name, simcanvas.Name, compose.Name, langgraph.Name}
}

// metrics are the runtime's Prometheus metrics, on a registry of its own so that several
// runtimes in one process (tests, benchmarks) never collide.
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
	// MetricCanvasResumableOpen counts resumable canvas executions held (reconnect.go): back
	// to zero once every reconnect ended or its window expired.
	MetricCanvasResumableOpen = "streambench_runtime_canvas_resumable_open"
)

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		clientStreamsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: MetricClientStreamsOpen, Help: "Client streams currently open, by dialect.",
		}, []string{"dialect"}),
		clientStreamsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricClientStreamsStarted, Help: "Client streams opened, by dialect.",
		}, []string{"dialect"}),
		clientAborts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricClientAborts, Help: "Client streams that ended because the client went away, by dialect.",
		}, []string{"dialect"}),
		providerInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricProviderStreams, Help: "Provider requests and streams currently open.",
		}),
		providerRequests: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streambench_runtime_provider_requests_total", Help: "Provider turns requested.",
		}),
		providerErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricProviderErrors, Help: "Provider turns that failed (HTTP error, mid-stream error or transport error).",
		}),
		toolsRunning: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricToolsRunning, Help: "Simulated tools currently running.",
		}),
		toolsSettled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streambench_runtime_tools_settled_total", Help: "Simulated tools settled, by status.",
		}, []string{"status"}),
		toolsCancelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricToolsCancelled, Help: "Simulated tools that settled as cancelled (client gone, stop or shutdown).",
		}),
		resetsSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricResetsSent, Help: "chunk_reset frames sent (sim-chat and sim-canvas).",
		}),
		slowClientsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricSlowClientsDropped, Help: "Client streams dropped because the client accepted no bytes for the idle timeout.",
		}),
		runsStopped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "streambench_runtime_runs_stopped_total", Help: "Compose runs ended by a stop request.",
		}),
		badRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "streambench_runtime_bad_requests_total", Help: "Requests rejected before streaming, by HTTP status.",
		}, []string{"status"}),
		canvasResumable: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: MetricCanvasResumableOpen, Help: "Resumable canvas executions held: running, or kept for a reconnect after their client dropped.",
		}),
	}
	m.registry.MustRegister(
		m.clientStreamsOpen, m.clientStreamsTotal, m.clientAborts, m.providerInFlight,
		m.providerRequests, m.providerErrors, m.toolsRunning, m.toolsSettled, m.toolsCancelled,
		m.resetsSent, m.slowClientsDropped, m.runsStopped, m.badRequests, m.canvasResumable,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: MetricGoroutines, Help: "Goroutines in the runtime process.",
		}, func() float64 { return float64(runtime.NumGoroutine()) }),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Pre-create the per-dialect series so a scrape before any traffic shows zeros, which is
	// what a leak check compares against.
	for _, d := range servedDialects() {
		m.clientStreamsOpen.WithLabelValues(d)
		m.clientStreamsTotal.WithLabelValues(d)
		m.clientAborts.WithLabelValues(d)
	}
	return m
}
