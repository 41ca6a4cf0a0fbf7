package measure

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/protocol"
)

// SchemaVersion is the summary.json schema this package writes and reads; others are refused.
const SchemaVersion = 2

// Counters are a run's event counts; once it drained, the Outcomes add up to SessionsStarted.
type Counters struct {
	SessionsStarted int64             `json:"sessions_started"`
	Outcomes        map[Outcome]int64 `json:"outcomes"` // only those that occurred
	// SessionsOK: completed or scripted_error and no rule broken; SessionsFailed: an error
	// outcome or a violation. An aborted session that broke no rule is neither.
	SessionsOK     int64 `json:"sessions_ok"`
	SessionsFailed int64 `json:"sessions_failed"`
	// FailedByRules counts the sessions that failed by violations alone, by their sorted,
	// comma-joined rules ("R-abort,R-terminal"), so a gate can leave out allowed rules.
	FailedByRules map[string]int64 `json:"sessions_failed_by_rules,omitempty"`
	HTTPErrors    map[int]int64    `json:"http_errors,omitempty"` // http_error sessions by status
	Frames        int64            `json:"frames"`
	Bytes         int64            `json:"bytes"`
	LateStarts    int64            `json:"late_starts"`    // open loop: sessions started after their intended time
	DroppedStarts int64            `json:"dropped_starts"` // open loop: sessions never started (max in-flight)
	RecordErrors  int64            `json:"record_errors"`  // latencies outside the histogram range
	// OutputTokens is every thinking and answer token of the sessions and conversation turns
	// that ended after the warm-up (ground truth, else usage).
	OutputTokens int64 `json:"output_tokens"`
	// EstimatedTokens were counted from the text (no ground truth, no usage report), in
	// EstimatedTokenSessions sessions, which EstimatedBy counts by method: "tiktoken
	// cl100k_base" (the provider wires) or "words" (the other dialects).
	EstimatedTokens        int64            `json:"estimated_tokens,omitempty"`
	EstimatedTokenSessions int64            `json:"estimated_token_sessions,omitempty"`
	EstimatedBy            map[string]int64 `json:"estimated_by,omitempty"`
	// GoodputJudged counts the judged sessions (ended after the warm-up, not aborted on
	// purpose, not cut); GoodputSessions those that succeeded and met every per-session SLO.
	GoodputSessions int64 `json:"goodput_sessions"`
	GoodputJudged   int64 `json:"goodput_judged"`
	// TurnRequests counts the completed turns of conversations but their last (one session).
	TurnRequests int64 `json:"turn_requests,omitempty"`
	// WarmupRequests counts the completed requests that ended in the warm-up: requests/s counts
	// those that ended after it, as output tokens and goodput do.
	WarmupRequests int64 `json:"warmup_requests,omitempty"`
}

// CompletedRequests is the completed sessions plus TurnRequests.
func (c Counters) CompletedRequests() int64 { return c.Outcomes[OutcomeCompleted] + c.TurnRequests }

// HTTPStatuses lists the http_error sessions as STATUS×COUNT by status ("500×2, 503×10").
func (c Counters) HTTPStatuses() string {
	var st []string
	for _, code := range slices.Sorted(maps.Keys(c.HTTPErrors)) {
		st = append(st, fmt.Sprintf("%d×%d", code, c.HTTPErrors[code]))
	}
	return strings.Join(st, ", ")
}

// Ended is how many sessions ended, whatever their outcome.
func (c Counters) Ended() int64 {
	var n int64
	for _, k := range c.Outcomes {
		n += k
	}
	return n
}

// Outcome is how many sessions ended with o.
func (c Counters) Outcome(o Outcome) int64 { return c.Outcomes[o] }

// TokenSummary is the run's aggregate token figures (summary.json "tokens").
type TokenSummary struct {
	OutputTokens int64 `json:"output_tokens"`
	// OutputTokensPerSecond and RequestsPerSecond are over the measured wall time (after the
	// warm-up), of what ended in it: requests are CompletedRequests − WarmupRequests.
	OutputTokensPerSecond float64 `json:"output_tokens_per_s"`
	RequestsPerSecond     float64 `json:"requests_per_s"`
	// Estimated marks every token figure as estimated in part: EstimatedTokens of
	// EstimatedSessions were counted from the text, as EstimatedWith says.
	Estimated         bool    `json:"estimated,omitempty"`
	EstimatedTokens   int64   `json:"estimated_tokens,omitempty"`
	EstimatedSessions int64   `json:"estimated_sessions,omitempty"`
	EstimatedWith     string  `json:"estimated_with,omitempty"`
	Goodput           Goodput `json:"goodput"`
}

// Goodput is the sessions that succeeded and met every per-session SLO, of those judged.
type Goodput struct {
	SLOs      []string `json:"slos,omitempty"` // as given, e.g. "ttft<500ms"
	Sessions  int64    `json:"sessions"`
	Judged    int64    `json:"judged"`
	Share     float64  `json:"share"` // Sessions / Judged (0 when none was judged)
	PerSecond float64  `json:"per_s"`
}

// EstimatedWith names the methods of by (Counters.EstimatedBy), most used first, with their
// sessions when there are several: "tiktoken cl100k_base (5 sessions), words (2 sessions)".
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

// EstimatedMethod is EstimatedWith, "words" when empty (results written before the field).
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

// ProcessLoad is the CPU one process used while the load ran (a slow target or a busy machine?).
type ProcessLoad struct {
	Name       string  `json:"name"` // "mock", "runtime", "generator", joined by "+" when one process
	CPUSeconds float64 `json:"cpu_seconds"`
	Cores      float64 `json:"cores"` // CPUSeconds over the load's wall time
	Saturated  bool    `json:"saturated,omitempty"`
}

// LeakNotChecked is what the leak check could not compare, and why; it fails a run when Lost.
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

// Bounds on the frames a run keeps of its violation samples, whatever a target sends: of one
// frame (the rest is Clipped), of one sample (later frames are counted, not kept), of the run's
// samples altogether (no further session is replayed).
const (
	MaxSampleFrameBytes = 64 << 10
	MaxSampleBytes      = 256 << 10
	MaxRunSampleBytes   = 4 << 20
)

// Clip cuts s to at most limit bytes at a UTF-8 boundary, marking how many were cut.
func Clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	n := max(limit, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("…[clipped: %d of %d bytes cut]", len(s)-n, len(s))
}

// SampleBytes is the frame bytes s keeps.
func (s *ViolationSample) SampleBytes() int {
	n := 0
	for _, f := range s.Frames {
		n += len(f)
	}
	return n
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

// Config is the workload a run was asked for.
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
	// Thresholds are the mix file's (e.g. "ttfc.p99<300ms"), judged with the gate's own.
	Thresholds []string `json:"thresholds,omitempty"`
	// Allow lists known findings: counted and shown, failing neither the run nor the gate.
	Allow []protocol.Rule   `json:"allow,omitempty"`
	Extra map[string]string `json:"extra,omitempty"` // any other setting, by flag name
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

// WorkloadDiffs lists the workload settings in which b's run differs from a's, as "NAME A → B".
func WorkloadDiffs(a, b *Summary) []string {
	var out []string
	diff := func(name, x, y string) {
		if x != y {
			out = append(out, name+" "+cmp.Or(x, "(none)")+" → "+cmp.Or(y, "(none)"))
		}
	}
	ca, cb := a.Config, b.Config
	diff("clients", strconv.Itoa(ca.Clients), strconv.Itoa(cb.Clients))
	diff("rate", formatFloat(ca.Rate)+"/s", formatFloat(cb.Rate)+"/s")
	if ca.Rate > 0 || cb.Rate > 0 {
		diff("arrival", ca.Arrival, cb.Arrival)
		diff("max in-flight", strconv.Itoa(ca.MaxInflight), strconv.Itoa(cb.MaxInflight))
	}
	diff("stages", ca.Stages, cb.Stages)
	diff("duration", durationText(ca.Duration), durationText(cb.Duration))
	diff("sessions", strconv.FormatInt(ca.Sessions, 10), strconv.FormatInt(cb.Sessions, 10))
	diff("warmup", durationText(ca.Warmup), durationText(cb.Warmup))
	diff("think time", durationText(ca.ThinkTime), durationText(cb.ThinkTime))
	diff("mix", ca.Mix, cb.Mix)
	diff("dialects", strings.Join(ca.Dialects, ","), strings.Join(cb.Dialects, ","))
	diff("http2", strconv.FormatBool(ca.HTTP2), strconv.FormatBool(cb.HTTP2))
	diff("faults", strings.Join(ca.Faults, ","), strings.Join(cb.Faults, ","))
	diff("CPUs", strconv.Itoa(a.Environment.CPUs), strconv.Itoa(b.Environment.CPUs))
	return out
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

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

// Ms formats microseconds as milliseconds with microsecond resolution ("1.250").
func Ms(us float64) string { return strconv.FormatFloat(us/1000, 'f', 3, 64) }

// Pct formats a fraction as a percentage with three decimals ("0.100%").
func Pct(f float64) string { return strconv.FormatFloat(f*100, 'f', 3, 64) + "%" }

// Stat is the statistic named name (min, p50, …, p99.9, max, mean); 0 for another name.
func (m MetricSummary) Stat(name string) float64 {
	return map[string]float64{"min": float64(m.Min), "p50": float64(m.P50), "p90": float64(m.P90), "p95": float64(m.P95),
		"p99": float64(m.P99), "p99.9": float64(m.P999), "max": float64(m.Max), "mean": m.Mean}[name]
}

// Verdict is the run's own pass/fail, with a reason per failure.
type Verdict struct {
	Pass     bool     `json:"pass"`
	Reasons  []string `json:"reasons,omitempty"`
	Allowed  []string `json:"allowed,omitempty"`  // allowed rules' violations, RULE×COUNT
	Warnings []string `json:"warnings,omitempty"` // qualify the figures without failing the run
}

// Summary is summary.json: everything about a run except the raw histograms, timeline and samples.
type Summary struct {
	Schema      int       `json:"schema"` // SchemaVersion
	RunID       string    `json:"run_id"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
	Interrupted bool      `json:"interrupted"` // stopped by Ctrl-C before the planned end
	// Incomplete marks a snapshot, covering Started to Ended; the final write clears it, so a
	// summary that keeps it is a killed (or still running) run's.
	Incomplete  bool            `json:"incomplete,omitempty"`
	Config      Config          `json:"config"`
	Environment Environment     `json:"environment"`
	Metrics     []MetricSummary `json:"metrics"`
	// Overall is each metric over every scenario and dialect (computed when empty).
	Overall []MetricSummary `json:"overall,omitempty"`
	// OverTime is nil in runs merged from shards (percentiles do not add).
	OverTime []LatencySeries `json:"latency_over_time,omitempty"`
	// Engine is the target engine's gauges over the run (load --engine-metrics; nil: not read).
	Engine          *EngineMetrics          `json:"engine_metrics,omitempty"`
	Counters        Counters                `json:"counters"`
	Violations      map[protocol.Rule]int64 `json:"violations"`
	Leaks           []Leak                  `json:"leaks"`
	LeaksNotChecked []LeakNotChecked        `json:"leaks_not_checked,omitempty"`
	// ProviderRequests are the mock's records per scenario; nil without --mock.
	ProviderRequests []ProviderRequests `json:"provider_requests,omitempty"`
	// Processes is the CPU of each local process during the load, of MachineCores cores.
	Processes    []ProcessLoad  `json:"processes,omitempty"`
	MachineCores int            `json:"machine_cores,omitempty"`
	Tokens       *TokenSummary  `json:"tokens,omitempty"`
	Records      *RecordsInfo   `json:"records,omitempty"`  // what records.jsonl holds (nil: none kept)
	Measures     []MeasureInfo  `json:"measures,omitempty"` // dialect measures; statistics in Metrics
	Shard        *ShardInfo     `json:"shard,omitempty"`    // one shard's results (load --shard I/N)
	Shards       []ShardFigures `json:"shards,omitempty"`   // a merged run's, one per shard
	// Judging lets every command judge the saved run as the run did.
	Judging Judging `json:"judging"`
	Verdict Verdict `json:"verdict"`
}

// Judging is what a verdict quotes beyond the summary's figures.
type Judging struct {
	FirstErrors []string `json:"first_errors,omitempty"`
	PostRun     []string `json:"post_run,omitempty"`
	// Stopped says why the run stopped early (the circuit breaker): it fails as interrupted.
	Stopped       string        `json:"stopped,omitempty"`
	Grace         time.Duration `json:"grace_ns,omitempty"`
	StreamTimeout time.Duration `json:"stream_timeout_ns,omitempty"`
	IdleTimeout   time.Duration `json:"idle_timeout_ns,omitempty"`
	MaxInflight   int           `json:"max_inflight,omitempty"`
}

// Metric returns the summary of k, if recorded.
func (s *Summary) Metric(k Key) (MetricSummary, bool) {
	return find(s.Metrics, func(m MetricSummary) bool { return m.Key == k })
}

// find returns the first item of list that is, if any.
func find[T any](list []T, is func(T) bool) (T, bool) {
	if i := slices.IndexFunc(list, is); i >= 0 {
		return list[i], true
	}
	var zero T
	return zero, false
}

// TotalViolations is the sum of violations over every rule.
func (s *Summary) TotalViolations() int64 { return s.ViolationsExcept(nil) }

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

// RulesByCount lists the rules of Violations, most violated first, then by name.
func (s *Summary) RulesByCount() []protocol.Rule {
	v := s.Violations
	mostFirst := func(a, b protocol.Rule) int { return cmp.Or(cmp.Compare(v[b], v[a]), cmp.Compare(a, b)) }
	return slices.SortedFunc(maps.Keys(v), mostFirst)
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

// Summarize computes every histogram's statistics, in Keys order.
func Summarize(h *Histograms) []MetricSummary {
	out := make([]MetricSummary, 0, h.Len())
	for _, k := range h.Keys() {
		out = append(out, summarize(k, h.byKey[k].form()))
	}
	return out
}

// SummarizeOverall computes each metric's statistics over every scenario and dialect.
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
	return find(s.Overall, func(o MetricSummary) bool { return o.Metric == m })
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
	if hist.TotalCount() == 0 {
		return MetricSummary{Key: k}
	}
	return MetricSummary{Key: k, Count: hist.TotalCount(), Min: hist.Min(), Max: hist.Max(), Mean: hist.Mean(),
		P50: hist.ValueAtPercentile(50), P90: hist.ValueAtPercentile(90), P95: hist.ValueAtPercentile(95),
		P99: hist.ValueAtPercentile(99), P999: hist.ValueAtPercentile(99.9)}
}
