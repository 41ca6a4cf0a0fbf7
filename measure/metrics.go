package measure

import (
	"slices"
	"time"
)

// Metric is a stable latency metric name used in reports, thresholds and hlog tags.
type Metric string

// The latency metrics a run records (all in microseconds).
const (
	Connect          Metric = "connect"        // TCP/HTTP connection established
	Headers          Metric = "headers"        // request sent → response headers
	FirstEvent       Metric = "first_event"    // → first SSE event of any kind
	FirstChunk       Metric = "ttfc"           // → first answer chunk (thinking does not count)
	FirstThinking    Metric = "first_thinking" // → first thinking frame
	ChunkGap         Metric = "chunk_gap"      // between consecutive answer chunks
	StreamDuration   Metric = "duration"       // request → end of stream
	CancelLatency    Metric = "cancel"         // client abort → provider saw the client go away (mock record)
	ToolCancelSettle Metric = "tool_cancel"    // compose stop request → first running tool settled (cancelled) on the stream
	StopLatency      Metric = "stop"           // compose stop request sent → stopped terminal
	StartLag         Metric = "start_lag"      // open loop: actual start − intended start

	// Token-level metrics, named as AIPerf, GuideLLM and vllm bench serve name them. Tokens
	// come from the ground truth (the script's tokenizer counts what each frame carries) or,
	// without it, from the provider wire's usage report (loadgen documents the estimate).
	TimeToFirstToken      Metric = "ttft"                // request → first frame carrying a thinking or answer token
	TimeToFirstOutput     Metric = "ttfo"                // request → first frame carrying an answer token (reasoning excluded)
	InterTokenLatency     Metric = "itl"                 // per token: a frame carrying k tokens after a gap g records k values of g/k
	TimePerOutputToken    Metric = "tpot"                // per session: (last token frame − first token frame) / (tokens − 1)
	StreamTokensPerSecond Metric = "stream_tokens_per_s" // per session: output tokens / stream duration, recorded in milli-tokens/s (see RateScale)
	GeneratorLag          Metric = "generator_lag"       // how late the generator's own 10 ms timer woke (its scheduling lag)

	// The target's own latency: a session's measured value less the value its script
	// scheduled (the mock's delay before that frame), so the figure is what the runtime, the
	// network and the mock's serving added, not the scenario's thinking time. Recorded only for
	// sessions whose script says when the frame was due (loadgen/overhead.go); a measured value
	// under the scripted one records 0.
	FirstChunkOverhead Metric = "ttfc.overhead" // ttfc − the scripted ttfc
	FirstTokenOverhead Metric = "ttft.overhead" // ttft − the scripted ttft
)

// RateScale is how rate metrics (StreamTokensPerSecond) are stored in histograms that hold
// integers: value = tokens/s × RateScale, so 1 stored unit is 0.001 tokens/s and the
// histogram's 1 µs .. 1 h range holds 0.001 .. 3.6 million tokens/s. A summary's *_us fields
// of such a metric are therefore milli-tokens/s; IsRate tells readers which metrics these are.
const RateScale = 1000

// MaxRate is the largest stored rate (3.6 million tokens/s, the histogram's top). A stream
// faster than that (a short burst: a gateway that buffers a whole answer, a scaled-down test)
// records at MaxRate rather than as an out-of-range error, which would fail the run for a
// figure no SLO can be about.
const MaxRate = int64(time.Hour / time.Microsecond)

// IsRate tells whether m's histogram holds a rate (×RateScale) rather than microseconds.
func (m Metric) IsRate() bool { return m == StreamTokensPerSecond }

// Overhead is the overhead metric of a scripted latency (ttfc → ttfc.overhead), and ok false
// for a metric the script does not schedule.
func (m Metric) Overhead() (Metric, bool) {
	switch m {
	case FirstChunk:
		return FirstChunkOverhead, true
	case TimeToFirstToken:
		return FirstTokenOverhead, true
	}
	return "", false
}

// Metrics lists every known metric in report order.
var metricOrder = []Metric{Connect, Headers, FirstEvent, FirstChunk, FirstChunkOverhead, FirstThinking, ChunkGap,
	TimeToFirstToken, FirstTokenOverhead, TimeToFirstOutput, InterTokenLatency, TimePerOutputToken, StreamTokensPerSecond,
	StreamDuration, CancelLatency, ToolCancelSettle, StopLatency, StartLag, GeneratorLag}

// AllMetrics returns every known metric in report order (a fresh slice each call).
func AllMetrics() []Metric { return slices.Clone(metricOrder) }

// Rank orders metrics for display: known metrics in report order, unknown ones after, by name.
func (m Metric) Rank() int {
	if i := slices.Index(metricOrder, m); i >= 0 {
		return i
	}
	return len(metricOrder)
}
