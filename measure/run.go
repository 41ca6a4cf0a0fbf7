package measure

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/protocol"
)

// SchemaVersion is the summary.json schema this package writes and reads. Version 2 counts
// every session by its outcome (Counters.Outcomes) and records what the verdict quotes
// (Summary.Judging); version 1 results are refused with a message that says so.
const SchemaVersion = 2

// Counters are a run's event counts. Once the run has drained, the Outcomes add up to
// SessionsStarted.
type Counters struct {
	SessionsStarted int64 `json:"sessions_started"`
	// Outcomes counts the sessions by how they ended (Outcome; only those that occurred).
	Outcomes map[Outcome]int64 `json:"outcomes"`
	// SessionsOK counts sessions that ended completed or as their scripted error and broke no
	// rule; SessionsFailed those with an error outcome or a protocol violation. An aborted
	// session that broke no rule is neither (the client left on purpose).
	SessionsOK     int64 `json:"sessions_ok"`
	SessionsFailed int64 `json:"sessions_failed"`
	// FailedByRules counts the failed sessions whose only failure was protocol violations, by
	// the rules they broke (sorted, comma-separated: "R-abort,R-terminal"), so a gate that
	// allows rules can leave out the sessions that failed by allowed rules alone.
	FailedByRules map[string]int64 `json:"sessions_failed_by_rules,omitempty"`
	// HTTPErrors counts the http_error sessions by status code.
	HTTPErrors    map[int]int64 `json:"http_errors,omitempty"`
	Frames        int64         `json:"frames"`
	Bytes         int64         `json:"bytes"`
	LateStarts    int64         `json:"late_starts"`    // open loop: sessions started after their intended time
	DroppedStarts int64         `json:"dropped_starts"` // open loop: sessions never started (max in-flight)
	RecordErrors  int64         `json:"record_errors"`  // latencies outside the histogram range
	// OutputTokens is every thinking and answer token of the sessions and conversation turns
	// that ended after the warm-up (from the ground truth, or the usage report without it).
	OutputTokens int64 `json:"output_tokens"`
	// EstimatedTokens are the OutputTokens counted from the text because the session had
	// neither ground truth nor a usage report; EstimatedTokenSessions the sessions they came
	// from, and EstimatedBy those sessions by how they were counted: "tiktoken cl100k_base"
	// (a model tokenizer over the session's whole text, the provider wires) or "words"
	// (whitespace-delimited, the scenario tokenizer: the other dialects).
	EstimatedTokens        int64            `json:"estimated_tokens,omitempty"`
	EstimatedTokenSessions int64            `json:"estimated_token_sessions,omitempty"`
	EstimatedBy            map[string]int64 `json:"estimated_by,omitempty"`
	// GoodputSessions counts the judged sessions (those that ended after the warm-up, not
	// aborted on purpose or cut) that succeeded and met every per-session SLO
	// (Tokens.Goodput.SLOs); GoodputJudged counts the judged ones.
	GoodputSessions int64 `json:"goodput_sessions"`
	GoodputJudged   int64 `json:"goodput_judged"`
	// TurnRequests counts the conversation turns (load --conversations) that completed before
	// their conversation's last: each is a request of its own, measured like a session's, while
	// a conversation is one session with one outcome, its last request's (or its failed one's).
	TurnRequests int64 `json:"turn_requests,omitempty"`
	// WarmupRequests counts the completed requests that ended in the warm-up: requests/s counts
	// those that ended after it, as output tokens and goodput do.
	WarmupRequests int64 `json:"warmup_requests,omitempty"`
}

// CompletedRequests is the requests that completed: the completed sessions, and the
// conversation turns that completed before their conversation's last (TurnRequests).
func (c Counters) CompletedRequests() int64 { return c.Outcomes[OutcomeCompleted] + c.TurnRequests }

// HTTPStatuses lists the http_error sessions by status, as STATUS×COUNT ("503×10, 500×2",
// statuses in order); "" when there are none.
func (c Counters) HTTPStatuses() string {
	var st []string
	for _, code := range slices.Sorted(maps.Keys(c.HTTPErrors)) {
		st = append(st, fmt.Sprintf("%d×%d", code, c.HTTPErrors[code]))
	}
	return strings.Join(st, ", ")
}

// Outcome is how many sessions ended with o.
func (c Counters) Outcome(o Outcome) int64 { return c.Outcomes[o] }

// TokenSummary is the run's aggregate token figures (summary.json "tokens"); the per-session
// and per-token distributions are the ttft, ttfo, itl, tpot and stream_tokens_per_s metrics.
type TokenSummary struct {
	OutputTokens int64 `json:"output_tokens"`
	// OutputTokensPerSecond is OutputTokens over the measured wall time (Ended − Started −
	// warm-up): the aggregate throughput AIPerf and GuideLLM call output token throughput.
	OutputTokensPerSecond float64 `json:"output_tokens_per_s"`
	// RequestsPerSecond is the completed requests that ended after the warm-up
	// (Counters.CompletedRequests − WarmupRequests) over the same wall time: the request throughput of vllm bench serve and GuideLLM (one request per
	// session on an endpoint, one per turn of a conversation).
	RequestsPerSecond float64 `json:"requests_per_s"`
	// Estimated marks OutputTokens (and every token metric: tpot, itl, tokens/s) as estimated
	// in part: EstimatedSessions sessions had no usage report and no ground truth, and their
	// EstimatedTokens were counted from the text, not reported by the server; EstimatedWith
	// says how (Counters.EstimatedBy's methods, e.g. "tiktoken cl100k_base", or "words").
	Estimated         bool    `json:"estimated,omitempty"`
	EstimatedTokens   int64   `json:"estimated_tokens,omitempty"`
	EstimatedSessions int64   `json:"estimated_sessions,omitempty"`
	EstimatedWith     string  `json:"estimated_with,omitempty"`
	Goodput           Goodput `json:"goodput"`
}

// Goodput is how many sessions succeeded and met every per-session SLO, as a share of the
// judged sessions and as a rate over the run's wall time. With no SLO given it is the
// successful sessions.
type Goodput struct {
	SLOs      []string `json:"slos,omitempty"` // as given, e.g. "ttft<500ms"
	Sessions  int64    `json:"sessions"`
	Judged    int64    `json:"judged"`
	Share     float64  `json:"share"` // Sessions / Judged (0 when none was judged)
	PerSecond float64  `json:"per_s"`
}

// EstimatedWith names the methods of by (Counters.EstimatedBy), the most used first, each
// with its share of the sessions when there are several: "tiktoken cl100k_base", or
// "tiktoken cl100k_base (5 sessions), words (2 sessions)"; "" when none.
func EstimatedWith(by map[string]int64) string {
	methods := slices.Collect(maps.Keys(by))
	slices.SortFunc(methods, func(a, b string) int { return cmp.Or(cmp.Compare(by[b], by[a]), cmp.Compare(a, b)) })
	if len(methods) < 2 {
		return strings.Join(methods, "")
	}
	parts := make([]string, len(methods))
	for i, m := range methods {
		parts[i] = fmt.Sprintf("%s (%d sessions)", m, by[m])
	}
	return strings.Join(parts, ", ")
}

// EstimatedMethod is how the estimated tokens were counted (EstimatedWith): "words" for
// results written before the field, when words were the only method.
func (t *TokenSummary) EstimatedMethod() string { return cmp.Or(t.EstimatedWith, "words") }

// NewTokenSummary derives the aggregate figures from the counters over a run of wall time d.
func NewTokenSummary(c Counters, slos []string, d time.Duration) *TokenSummary {
	t := &TokenSummary{OutputTokens: c.OutputTokens, Goodput: Goodput{SLOs: slos, Sessions: c.GoodputSessions, Judged: c.GoodputJudged},
		Estimated: c.EstimatedTokenSessions > 0, EstimatedTokens: c.EstimatedTokens, EstimatedSessions: c.EstimatedTokenSessions,
		EstimatedWith: EstimatedWith(c.EstimatedBy)}
	if secs := d.Seconds(); secs > 0 {
		t.OutputTokensPerSecond = float64(c.OutputTokens) / secs
		t.RequestsPerSecond = float64(c.CompletedRequests()-c.WarmupRequests) / secs
		t.Goodput.PerSecond = float64(c.GoodputSessions) / secs
	}
	if c.GoodputJudged > 0 {
		t.Goodput.Share = float64(c.GoodputSessions) / float64(c.GoodputJudged)
	}
	return t
}

// Errors is the number of sessions whose outcome is an error (Outcome.IsError).
func (c Counters) Errors() int64 { return c.ErrorsExcept(nil) }

// ErrorsExcept is Errors without the outcomes listed (those a threshold judges by name).
func (c Counters) ErrorsExcept(except []Outcome) int64 {
	var n int64
	for o, k := range c.Outcomes {
		if o.IsError() && !slices.Contains(except, o) {
			n += k
		}
	}
	return n
}

// FailedExcept is SessionsFailed without the sessions that failed only by allowed rules.
func (c Counters) FailedExcept(allowed []protocol.Rule) int64 {
	n := c.SessionsFailed
	for rules, k := range c.FailedByRules {
		if !slices.ContainsFunc(strings.Split(rules, ","), func(r string) bool { return !slices.Contains(allowed, protocol.Rule(r)) }) {
			n -= k
		}
	}
	return n
}

// ErrorRate is Errors over sessions started (0 when none started).
func (c Counters) ErrorRate() float64 {
	if c.SessionsStarted == 0 {
		return 0
	}
	return float64(c.Errors()) / float64(c.SessionsStarted)
}

// Leak is one resource compared before the load and after it drained.
type Leak struct {
	Source    string  `json:"source"` // "runtime", "mock" or "generator"
	Name      string  `json:"name"`   // metric name, e.g. go_goroutines
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	Delta     float64 `json:"delta"`
	Tolerance float64 `json:"tolerance"`
	OK        bool    `json:"ok"` // Delta within Tolerance
}

// ProcessLoad is the CPU one process of the system under test, or the generator, used while
// the load ran: how the run tells a target that was slow from a machine that was saturated.
type ProcessLoad struct {
	// Name is "mock", "runtime" or "generator"; several joined with "+" when they are one
	// process (run --in-process).
	Name       string  `json:"name"`
	CPUSeconds float64 `json:"cpu_seconds"`
	// Cores is CPUSeconds over the load's wall time: 1.0 is one core busy all along.
	Cores float64 `json:"cores"`
	// Saturated marks the process the run found saturated (Summary.Verdict says why).
	Saturated bool `json:"saturated,omitempty"`
}

// LeakNotChecked is a process, or one gauge of it, that the leak check could not compare, and
// why (no /metrics, an unreadable one, a gauge with no baseline). It is reported and does not
// fail a run (a runtime the check cannot read is not judged, neither clean nor leaking), except
// when Lost: a process read before the load and unreadable after it died or restarted, which
// fails the leaks check.
type LeakNotChecked struct {
	Source string `json:"source"`         // "runtime", "mock" or "generator"
	Name   string `json:"name,omitempty"` // the gauge; empty when the whole source was not read
	Reason string `json:"reason"`
	Lost   bool   `json:"lost,omitempty"` // read before the load, unreadable after it
}

// TimelinePoint is one second of a run.
type TimelinePoint struct {
	Second     int   `json:"second"` // since the run started
	Active     int64 `json:"active"` // streams open at the end of the second
	Started    int64 `json:"started"`
	Completed  int64 `json:"completed"`
	Frames     int64 `json:"frames"`
	Errors     int64 `json:"errors"`
	Violations int64 `json:"violations"`
}

// ViolationSample is one offending stream kept with its frames so a user can see what went wrong.
type ViolationSample struct {
	Session  string        `json:"session"`
	Scenario string        `json:"scenario"`
	Dialect  string        `json:"dialect"`
	Seed     uint64        `json:"seed"`
	Rule     protocol.Rule `json:"rule"`
	Detail   string        `json:"detail"`
	Frames   []string      `json:"frames"` // the raw frames of the stream (bounded by the generator)
}

// Environment is where a run ran.
type Environment struct {
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUs        int    `json:"cpus"`
	GitRevision string `json:"git_revision,omitempty"`
	Hostname    string `json:"hostname,omitempty"`
	Target      string `json:"target,omitempty"` // the runtime's base URL
}

// Config is the workload a run was asked for, recorded so a report says what was measured and a
// gate can read the mix file's thresholds.
type Config struct {
	Target      string        `json:"target,omitempty"`
	Dialects    []string      `json:"dialects,omitempty"`
	Clients     int           `json:"clients,omitempty"`      // closed loop: virtual users
	Rate        float64       `json:"rate,omitempty"`         // open loop: sessions per second
	Arrival     string        `json:"arrival,omitempty"`      // open loop: "constant" or "poisson"
	MaxInflight int           `json:"max_inflight,omitempty"` // open loop cap
	Stages      string        `json:"stages,omitempty"`       // as given, e.g. "30s:1000,60s:1000,10s:0"
	Duration    time.Duration `json:"-"`
	Sessions    int64         `json:"sessions,omitempty"`
	Warmup      time.Duration `json:"-"`
	ThinkTime   time.Duration `json:"-"`
	Mix         string        `json:"mix,omitempty"` // mix name or file
	Seed        uint64        `json:"seed"`
	Faults      []string      `json:"faults,omitempty"`
	HTTP2       bool          `json:"http2,omitempty"`
	// Thresholds are gate expressions from the mix file (e.g. "ttfc.p99<300ms"); the gate
	// applies them in addition to its command-line thresholds.
	Thresholds []string `json:"thresholds,omitempty"`
	// Allow lists known findings (from the mix file's allow: or load --allow): violations of
	// these rules are still counted and shown, as allowed, but fail neither the run nor the gate.
	Allow []protocol.Rule `json:"allow,omitempty"`
	// Extra holds any other setting worth recording, by flag name.
	Extra map[string]string `json:"extra,omitempty"`
}

// configJSON carries Config's durations as readable strings ("30s") instead of nanoseconds.
type configJSON struct {
	configAlias
	Duration  string `json:"duration,omitempty"`
	Warmup    string `json:"warmup,omitempty"`
	ThinkTime string `json:"think_time,omitempty"`
}

type configAlias Config

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// MarshalJSON writes durations as Go duration strings.
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(configJSON{
		configAlias: configAlias(c),
		Duration:    durationText(c.Duration),
		Warmup:      durationText(c.Warmup),
		ThinkTime:   durationText(c.ThinkTime),
	})
}

// UnmarshalJSON reads durations written by MarshalJSON.
func (c *Config) UnmarshalJSON(b []byte) error {
	var cj configJSON
	if err := json.Unmarshal(b, &cj); err != nil {
		return err
	}
	*c = Config(cj.configAlias)
	for _, f := range []struct {
		name string
		text string
		dst  *time.Duration
	}{{"duration", cj.Duration, &c.Duration}, {"warmup", cj.Warmup, &c.Warmup}, {"think_time", cj.ThinkTime, &c.ThinkTime}} {
		if f.text == "" {
			continue
		}
		d, err := time.ParseDuration(f.text)
		if err != nil {
			return fmt.Errorf("config.%s: %w", f.name, err)
		}
		*f.dst = d
	}
	return nil
}

// MetricSummary is one histogram's statistics, in microseconds.
type MetricSummary struct {
	Key
	Count int64   `json:"count"`
	Min   int64   `json:"min_us"`
	P50   int64   `json:"p50_us"`
	P90   int64   `json:"p90_us"`
	P95   int64   `json:"p95_us"`
	P99   int64   `json:"p99_us"`
	P999  int64   `json:"p999_us"`
	Max   int64   `json:"max_us"`
	Mean  float64 `json:"mean_us"`
}

// Stat is the statistic named name, as thresholds and reports name them: min, p50, p90, p95,
// p99, p99.9, max or mean (0 for another name).
func (m MetricSummary) Stat(name string) float64 {
	return map[string]float64{"min": float64(m.Min), "p50": float64(m.P50), "p90": float64(m.P90), "p95": float64(m.P95),
		"p99": float64(m.P99), "p99.9": float64(m.P999), "max": float64(m.Max), "mean": m.Mean}[name]
}

// Verdict is the run's own pass/fail, with a reason per failure.
type Verdict struct {
	Pass    bool     `json:"pass"`
	Reasons []string `json:"reasons,omitempty"`
	// Allowed lists the violations of allowed rules (Config.Allow) that did not fail the run,
	// as RULE×COUNT, so a known finding is shown rather than dropped.
	Allowed []string `json:"allowed,omitempty"`
	// Warnings qualify the figures without failing the run: e.g. the generator was overloaded,
	// so its latencies include its own delay.
	Warnings []string `json:"warnings,omitempty"`
}

// Summary is summary.json: everything about a run except the raw histograms, timeline and samples.
type Summary struct {
	Schema      int       `json:"schema"` // SchemaVersion
	RunID       string    `json:"run_id"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	Interrupted bool      `json:"interrupted"` // stopped by Ctrl-C before the planned end
	// Incomplete marks a snapshot: results written while the run went on (Config.Snapshot
	// in package loadgen), whose figures cover the run from Started up to Ended. The final
	// write clears it, so a run directory whose summary still says so belongs to a run that
	// was killed (or is still running).
	Incomplete  bool            `json:"incomplete,omitempty"`
	Config      Config          `json:"config"`
	Environment Environment     `json:"environment"`
	Metrics     []MetricSummary `json:"metrics"`
	// Overall is each metric over every scenario and dialect (scenario and dialect empty):
	// the histograms of Metrics merged, in report order. WriteRun and ReadRun compute it from
	// the histograms when it is empty (runs recorded before it).
	Overall []MetricSummary `json:"overall,omitempty"`
	// OverTime is the time to first chunk and token (and their overhead) as percentiles per
	// window of the run (Windows), so a reader sees when the tail came; nil in runs recorded
	// before it and in runs merged from shards (percentiles do not add).
	OverTime   []LatencySeries         `json:"latency_over_time,omitempty"`
	Counters   Counters                `json:"counters"`
	Violations map[protocol.Rule]int64 `json:"violations"`
	Leaks      []Leak                  `json:"leaks"`
	// LeaksNotChecked are the sources and gauges the leak check could not compare.
	LeaksNotChecked []LeakNotChecked `json:"leaks_not_checked,omitempty"`
	// ProviderRequests are the provider requests and retries the mock saw, per scenario
	// (sorted); nil when the run did not name the mock (--mock).
	ProviderRequests []ProviderRequests `json:"provider_requests,omitempty"`
	// Processes is the CPU each local process used during the load (the generator always;
	// the mock and the runtime when their /metrics report it); nil in runs recorded before it.
	// MachineCores is the generator machine's core count they are measured against.
	Processes    []ProcessLoad `json:"processes,omitempty"`
	MachineCores int           `json:"machine_cores,omitempty"`
	// Tokens is the aggregate token throughput and goodput (nil in runs recorded before it).
	Tokens *TokenSummary `json:"tokens,omitempty"`
	// Measures lists the dialect measures (protocol.Measurer) the run recorded, with their
	// kinds; their statistics are in Metrics under their names (dialect.go).
	Measures []MeasureInfo `json:"measures,omitempty"`
	// Shard is set in the results of one shard of a sharded run (load --shard I/N); Shards
	// in a run merged from shards (streambench merge), one entry per shard.
	Shard  *ShardInfo     `json:"shard,omitempty"`
	Shards []ShardFigures `json:"shards,omitempty"`
	// Replays is what the violation samples cost after the load (nil in runs recorded
	// before it, and when no session was offered as a sample).
	Replays *ReplayInfo `json:"replays,omitempty"`
	// Judging is what the verdict quotes beyond the figures, kept so that any command
	// (load, merge, gate, sweep) judges the saved run exactly as the run did.
	Judging Judging `json:"judging"`
	Verdict Verdict `json:"verdict"`
}

// ReplayInfo is what the run's violation samples cost: a sample's frames come from a replay
// of its session after the load, one at a time. A session offered as a sample is not
// replayed once the run's samples hold MaxRunSampleBytes, or the replay budget is spent.
type ReplayInfo struct {
	// Budget is the longest all replays together may take (0: no budget, as before it).
	Budget time.Duration `json:"budget_ns"`
	// Took is how long the replays took.
	Took     time.Duration `json:"took_ns"`
	Replayed int           `json:"replayed"`
	// SkippedForBudget and SkippedForBytes count the sessions not replayed because the
	// budget was spent, or the run's samples were full.
	SkippedForBudget int `json:"skipped_for_budget,omitempty"`
	SkippedForBytes  int `json:"skipped_for_bytes,omitempty"`
}

// Judging is what a verdict quotes beyond the summary's figures: the first error messages,
// the post-run checks that failed, and the settings its reasons name.
type Judging struct {
	FirstErrors []string `json:"first_errors,omitempty"`
	PostRun     []string `json:"post_run,omitempty"`
	// Stopped says why the run stopped before its planned end (the circuit breaker); a run
	// that did fails as an interrupted one does.
	Stopped       string        `json:"stopped,omitempty"`
	Grace         time.Duration `json:"grace_ns,omitempty"`
	StreamTimeout time.Duration `json:"stream_timeout_ns,omitempty"`
	IdleTimeout   time.Duration `json:"idle_timeout_ns,omitempty"`
	MaxInflight   int           `json:"max_inflight,omitempty"`
}

// Metric returns the summary of k, if recorded.
func (s *Summary) Metric(k Key) (MetricSummary, bool) {
	for _, m := range s.Metrics {
		if m.Key == k {
			return m, true
		}
	}
	return MetricSummary{}, false
}

// TotalViolations is the sum of violations over every rule.
func (s *Summary) TotalViolations() int64 {
	var n int64
	for _, v := range s.Violations {
		n += v
	}
	return n
}

// ViolationsExcept is TotalViolations without those of the allowed rules.
func (s *Summary) ViolationsExcept(allowed []protocol.Rule) int64 {
	var n int64
	for rule, v := range s.Violations {
		if !slices.Contains(allowed, rule) {
			n += v
		}
	}
	return n
}

// FailedLeaks counts leaks over their tolerance.
func (s *Summary) FailedLeaks() int {
	n := 0
	for _, l := range s.Leaks {
		if !l.OK {
			n++
		}
	}
	return n
}

// Run is everything a run produced.
type Run struct {
	Summary    Summary
	Histograms *Histograms
	Timeline   []TimelinePoint
	Samples    []ViolationSample
}

// Summarize computes every histogram's statistics, in Keys order, each from the form the set
// holds it in (no dense copy of a packed key).
func Summarize(h *Histograms) []MetricSummary {
	out := make([]MetricSummary, 0, h.Len())
	for _, k := range h.Keys() {
		if kh := h.byKey[k]; kh.dense != nil {
			out = append(out, summarize(k, kh.dense))
		} else {
			out = append(out, summarize(k, kh.packed))
		}
	}
	return out
}

// SummarizeOverall computes each metric's statistics over every scenario and dialect, in
// report order; the keys have only a metric.
func SummarizeOverall(h *Histograms) []MetricSummary {
	if h == nil {
		return nil
	}
	var metrics []Metric
	for _, k := range h.Keys() {
		if len(metrics) == 0 || metrics[len(metrics)-1] != k.Metric {
			metrics = append(metrics, k.Metric)
		}
	}
	out := make([]MetricSummary, 0, len(metrics))
	for _, m := range metrics {
		merged, _ := h.Merged(func(k Key) bool { return k.Metric == m })
		out = append(out, SummarizeOne(Key{Metric: m}, merged))
	}
	return out
}

// OverallMetric returns m over every scenario and dialect, if recorded.
func (s *Summary) OverallMetric(m Metric) (MetricSummary, bool) {
	for _, o := range s.Overall {
		if o.Metric == m {
			return o, true
		}
	}
	return MetricSummary{}, false
}

// SummarizeOne computes one histogram's statistics.
func SummarizeOne(k Key, hist *hdrhistogram.Histogram) MetricSummary {
	if hist == nil {
		return MetricSummary{Key: k}
	}
	return summarize(k, hist)
}

// histogramStats is what a summary reads of a histogram, dense or packed.
type histogramStats interface {
	TotalCount() int64
	Min() int64
	Max() int64
	Mean() float64
	ValueAtPercentile(percentile float64) int64
}

func summarize(k Key, hist histogramStats) MetricSummary {
	m := MetricSummary{Key: k}
	if hist.TotalCount() == 0 {
		return m
	}
	// ValueAtPercentile takes a percentage (99, not 0.99).
	m.Count = hist.TotalCount()
	m.Min = hist.Min()
	m.P50 = hist.ValueAtPercentile(50)
	m.P90 = hist.ValueAtPercentile(90)
	m.P95 = hist.ValueAtPercentile(95)
	m.P99 = hist.ValueAtPercentile(99)
	m.P999 = hist.ValueAtPercentile(99.9)
	m.Max = hist.Max()
	m.Mean = hist.Mean()
	return m
}
