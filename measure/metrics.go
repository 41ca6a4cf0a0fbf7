package measure

import (
	"slices"
	"time"
)

// Metric is a metric's name, as every output and threshold spells it; Registry declares each.
type Metric string

// The metrics recorded as histograms per scenario × dialect.
const (
	Connect          Metric = "connect"
	Headers          Metric = "headers"
	FirstEvent       Metric = "first_event"
	FirstChunk       Metric = "ttfc"
	FirstThinking    Metric = "first_thinking"
	ChunkGap         Metric = "chunk_gap"
	StreamDuration   Metric = "duration"
	CancelLatency    Metric = "cancel"
	ToolCancelSettle Metric = "tool_cancel"
	StopLatency      Metric = "stop"
	StartLag         Metric = "start_lag"

	// Token metrics, named as AIPerf, GuideLLM and vllm bench serve name them.
	TimeToFirstToken      Metric = "ttft"
	TimeToFirstOutput     Metric = "ttfo"
	InterTokenLatency     Metric = "itl"
	TimePerOutputToken    Metric = "tpot"
	StreamTokensPerSecond Metric = "stream_tokens_per_s"
	GeneratorLag          Metric = "generator_lag"

	// The target's own latency: the measured value less the scripted delay before that
	// frame (0 when under it), for sessions whose script says when the frame was due.
	FirstChunkOverhead Metric = "ttfc.overhead"
	FirstTokenOverhead Metric = "ttft.overhead"
)

// The run's figures that are not histograms.
const (
	TokensPerSecond Metric = "tokens_per_s"
	GoodputSessions Metric = "goodput"
	Errors          Metric = "errors"
	ByOutcome       Metric = "outcome"
	Failed          Metric = "failed"
	Violations      Metric = "violations"
	Leaks           Metric = "leaks"
	DroppedStarts   Metric = "dropped_starts"
	OpenStreams     Metric = "open_streams"
	SessionsStarted Metric = "sessions_started"
	Frames          Metric = "frames"
	Draining        Metric = "draining"
)

// Kind is what a metric's values are: how they are held, their unit, how a limit is written.
type Kind int

// Metric kinds.
const (
	KindLatency        Kind = iota + 1 // a histogram of microseconds per scenario × dialect
	KindRate                           // a histogram of a per-session rate per scenario × dialect, tokens/s × RateScale
	KindThroughput                     // the run's aggregate tokens/s
	KindSessions                       // a count of sessions: a limit is a share of them (%) or a count
	KindCount                          // a count
	KindGauge                          // a level served live, never judged
	KindDialectMeasure                 // a dialect's own measure (dialect.go), µs or a count; never in the registry
)

// Histogram tells whether the kind is held in histograms, whose thresholds name a statistic.
func (k Kind) Histogram() bool {
	return k == KindLatency || k == KindRate || k == KindDialectMeasure
}

// Unit is how the kind's values are counted, as the docs and gate --help write it.
func (k Kind) Unit() string {
	return [...]string{KindLatency: "µs", KindRate: "tokens/s × 1000", KindThroughput: "tokens/s", KindSessions: "sessions",
		KindCount: "count", KindGauge: "level", KindDialectMeasure: "µs or count"}[k]
}

// String is the kind's name in the docs' tables.
func (k Kind) String() string {
	return [...]string{KindLatency: "latency", KindRate: "rate", KindThroughput: "throughput", KindSessions: "sessions",
		KindCount: "count", KindGauge: "gauge", KindDialectMeasure: "dialect measure"}[k]
}

// Def declares one metric once, for every output, threshold, --help and docs/METRICS.md.
type Def struct {
	Name       Metric
	Alias      Metric // a second spelling a threshold accepts (gap for chunk_gap)
	Kind       Kind
	Scopes     []string // the {KEY=VALUE} keys a threshold may narrow it by
	Doc        string   // what it measures, in one line
	Example    string   // a threshold on it (gate --help); empty when no threshold can name it
	PerSession bool     // a session has one value of it, which a goodput SLO can name
	Overhead   Metric   // its target's own part (ttfc → ttfc.overhead), judged instead when recorded
	Live       string   // its Prometheus series under load --metrics-addr; empty when not served
}

// Judged tells whether a threshold can name the metric.
func (d Def) Judged() bool { return d.Example != "" }

var byKey = []string{"scenario", "dialect"}

// registry is every metric, in report order: the histograms first.
var registry = []Def{
	{Name: Connect, Kind: KindLatency, Scopes: byKey, Example: "connect.p99<50ms", Doc: "TCP/HTTP connection established"},
	{Name: Headers, Kind: KindLatency, Scopes: byKey, Example: "headers.p99<200ms", PerSession: true, Doc: "request sent → response headers"},
	{Name: FirstEvent, Kind: KindLatency, Scopes: byKey, Example: "first_event.p99<300ms", PerSession: true, Doc: "request → first SSE event of any kind"},
	{Name: FirstChunk, Kind: KindLatency, Scopes: byKey, Example: "ttfc.p99<300ms", PerSession: true, Overhead: FirstChunkOverhead, Live: "streambench_time_to_first_chunk_seconds", Doc: "time to first chunk: request → first answer chunk (thinking does not count; ttfo is the first answer token)"},
	{Name: FirstChunkOverhead, Kind: KindLatency, Scopes: byKey, Example: "ttfc.overhead.p99<50ms", PerSession: true, Doc: "the target's own time to first chunk: ttfc less the scripted ttfc (the mock's scheduled delay), for sessions whose script says when it was due"},
	{Name: FirstThinking, Kind: KindLatency, Scopes: byKey, Example: "first_thinking.p99<300ms", Doc: "request → first thinking frame"},
	{Name: ChunkGap, Alias: "gap", Kind: KindLatency, Scopes: byKey, Example: "gap.p99<=50ms", Live: "streambench_chunk_gap_seconds", Doc: "gap between consecutive answer chunks (within a turn)"},
	{Name: TimeToFirstToken, Kind: KindLatency, Scopes: byKey, Example: "ttft.p99<500ms", PerSession: true, Overhead: FirstTokenOverhead, Doc: "time to first token: request → first frame carrying a thinking or answer token"},
	{Name: FirstTokenOverhead, Kind: KindLatency, Scopes: byKey, Example: "ttft.overhead.p99<50ms", PerSession: true, Doc: "the target's own time to first token: ttft less the scripted ttft"},
	{Name: TimeToFirstOutput, Kind: KindLatency, Scopes: byKey, Example: "ttfo.p99<800ms", PerSession: true, Doc: "time to first output token: request → first frame carrying an answer token (reasoning excluded)"},
	{Name: InterTokenLatency, Kind: KindLatency, Scopes: byKey, Example: "itl.p99<50ms", Doc: "inter-token latency, per token: a frame carrying k tokens after a gap g records k values of g/k"},
	{Name: TimePerOutputToken, Kind: KindLatency, Scopes: byKey, Example: "tpot.p50<20ms", PerSession: true, Doc: "time per output token, per session: (last token frame − first token frame) / (tokens − 1)"},
	{Name: StreamTokensPerSecond, Kind: KindRate, Scopes: byKey, Example: "stream_tokens_per_s.p50>=20", PerSession: true, Doc: "output tokens/s of each stream: tokens / stream duration"},
	{Name: StreamDuration, Kind: KindLatency, Scopes: byKey, Example: "duration.p99<10s", PerSession: true, Doc: "request → end of stream (e2e)"},
	{Name: CancelLatency, Kind: KindLatency, Scopes: byKey, Example: "cancel.p99<100ms", Doc: "client abort → the provider saw the client go away (joined from the mock's records)"},
	{Name: ToolCancelSettle, Kind: KindLatency, Scopes: byKey, Example: "tool_cancel.p99<500ms", Doc: "compose stop during a tool → the tool settled cancelled on the stream"},
	{Name: StopLatency, Kind: KindLatency, Scopes: byKey, Example: "stop.p99<500ms", Doc: "compose stop request → stopped terminal"},
	{Name: StartLag, Kind: KindLatency, Scopes: byKey, Example: "start_lag.p99<10ms", Doc: "open loop: actual start − intended start"},
	{Name: GeneratorLag, Kind: KindLatency, Scopes: byKey, Doc: "how late the generator's own 10 ms timer woke (its scheduling lag, not the target's)"},
	{Name: TokensPerSecond, Kind: KindThroughput, Example: "tokens_per_s>=1000", Doc: "aggregate output tokens/s: every session's tokens over the measured wall time"},
	{Name: GoodputSessions, Kind: KindSessions, Example: "goodput>=99%", Doc: "sessions that succeeded and met every goodput SLO (load --goodput-slo, a mix's goodputSLOs), of those judged (ended ok or failed)"},
	{Name: Errors, Kind: KindSessions, Example: "errors<0.1%", Live: "streambench_errors_total", Doc: "sessions with an error outcome (every outcome but completed, scripted_error, aborted)"},
	{Name: ByOutcome, Kind: KindSessions, Example: "outcome.in_band_error<1%", Live: "streambench_sessions_total", Doc: "sessions ended, by outcome (" + OutcomeNames() + ")"},
	{Name: Failed, Kind: KindSessions, Example: "failed<1%", Doc: "sessions failed by an error outcome or a protocol violation (the user's view; what breaks first at capacity)"},
	{Name: Violations, Kind: KindCount, Scopes: []string{"rule"}, Example: "violations{rule=R-converge}<5", Live: "streambench_violations_total", Doc: "protocol violations (streams × rules broken), by rule"},
	{Name: Leaks, Kind: KindCount, Example: "leaks==0", Doc: "leak-check gauges over their tolerance"},
	{Name: DroppedStarts, Kind: KindCount, Example: "dropped_starts<10", Doc: "open loop: scheduled sessions never started at --max-inflight"},
	{Name: SessionsStarted, Kind: KindCount, Live: "streambench_sessions_started_total", Doc: "sessions started"},
	{Name: Frames, Kind: KindCount, Live: "streambench_frames_total", Doc: "SSE frames received"},
	{Name: OpenStreams, Kind: KindGauge, Live: "streambench_open_streams", Doc: "streams open now (updated once a second)"},
	{Name: Draining, Kind: KindGauge, Live: "streambench_draining", Doc: "1 once no new session starts and in-flight ones are finishing"},
}

// Registry returns every metric's declaration, in report order (a fresh slice).
func Registry() []Def { return slices.Clone(registry) }

// Lookup returns the metric named name (or by its alias).
func Lookup(name string) (Def, bool) {
	i := slices.IndexFunc(registry, func(d Def) bool { return string(d.Name) == name || (d.Alias != "" && string(d.Alias) == name) })
	if i < 0 {
		return Def{}, false
	}
	return registry[i], true
}

// Def is m's declaration; a Def of its name alone when undeclared (a dialect measure).
func (m Metric) Def() Def {
	if d, ok := Lookup(string(m)); ok && d.Name == m {
		return d
	}
	return Def{Name: m}
}

// Live is m's Prometheus series under load --metrics-addr ("" when not served).
func (m Metric) Live() string { return m.Def().Live }

// RateScale is how rate metrics are stored in integer histograms: tokens/s × RateScale, so
// the 1 µs .. 1 h range holds 0.001 .. 3.6 million tokens/s (the *_us fields are milli-tokens/s).
const RateScale = 1000

// MaxRate is the largest stored rate: a faster burst records at it, not as a record error.
const MaxRate = int64(time.Hour / time.Microsecond)

// IsRate tells whether m's histogram holds a rate (×RateScale) rather than microseconds.
func (m Metric) IsRate() bool { return m.Def().Kind == KindRate }

// Metrics lists the metrics keep accepts, in report order.
func Metrics(keep func(Def) bool) []Metric {
	var out []Metric
	for _, d := range registry {
		if keep(d) {
			out = append(out, d.Name)
		}
	}
	return out
}

// AllMetrics returns every metric recorded as histograms, in report order.
func AllMetrics() []Metric { return Metrics(func(d Def) bool { return d.Kind.Histogram() }) }

// Rank orders metrics for display: known metrics in report order, unknown ones after, by name.
func (m Metric) Rank() int {
	if i := slices.IndexFunc(registry, func(d Def) bool { return d.Name == m }); i >= 0 {
		return i
	}
	return len(registry)
}

// SessionSLOMetricNames lists the metrics a goodput SLO can name, comma-separated.
func SessionSLOMetricNames() string {
	return JoinNames(Metrics(func(d Def) bool { return d.PerSession }))
}
