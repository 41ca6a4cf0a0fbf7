package loadgen

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/loadgen/leakcheck"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/verdict"
)

// Config is one load run. The zero value is not runnable: set Target and one of Clients, Rate
// or Stages, and one of Duration or Sessions (Stages bring their own duration).
type Config struct {
	// Target is the runtime's base URL (http://host:port).
	Target string
	// Mix is the workload; nil means DefaultMix().
	Mix *Mix
	// MixName records where the mix came from ("default" or the file path).
	MixName string
	// Library resolves scenario names; nil means scenarios.Embedded().
	Library *scenarios.Library
	// Seed overrides the mix's seed when non-zero.
	Seed uint64
	// RunID prefixes session ids so the mock's records of different runs never mix; empty
	// means one derived from the start time.
	RunID string

	// Clients is the closed-loop number of virtual users (each runs sessions back to back,
	// ThinkTime apart). A user ignores a 429's or 503's Retry-After unless HonorRetryAfter:
	// then it waits that long (at most MaxRetryAfter, never past the schedule's end) before
	// its next session, if longer than ThinkTime. The open loop's schedule never waits.
	Clients         int
	ThinkTime       time.Duration
	HonorRetryAfter bool
	// Rate is the open-loop session rate per second; Arrival is "constant" (default),
	// "poisson" or "gamma" (Poisson's Burstiness; 0: 1). MaxInflight caps open streams (0:
	// 10,000); a start that finds the cap reached is dropped and counted. An Endpoint with a
	// Trace and no Clients, Rate or Stages is open loop too, at the trace's times.
	Rate, Burstiness float64
	Arrival          string
	MaxInflight      int
	// Stages ramp the number of virtual users (closed loop), or the session rate when
	// RateStages is set (open loop). The run lasts their total duration unless Duration or
	// Sessions end it first.
	Stages     Stages
	RateStages bool

	// Duration stops starting sessions after this long (from the start, warmup included);
	// Sessions after this many starts. At least one must bound the run.
	Duration time.Duration
	Sessions int64
	// Warmup: sessions started before it has elapsed are checked but not measured.
	Warmup time.Duration
	// Grace is how long in-flight streams may finish after the last start before they are
	// cancelled (default 30 s).
	Grace time.Duration
	// StreamTimeout bounds one session (default 2 min). A stream still open when it ends is
	// over_time (slow, not a violation); one still open when Grace ends is cut.
	StreamTimeout time.Duration
	// IdleTimeout ends a stream that delivered no byte for this long: the session is stalled.
	// 0 (the default) never ends a stream for silence: a legacy sim-chat client gets nothing
	// until the answer is complete, and a tool may run for minutes. A stream the stream
	// timeout or the run's end finds silent for StallWindow is stalled all the same.
	IdleTimeout time.Duration

	// HTTP2 uses HTTP/2 (h2c for http://, h2 by ALPN for https://) instead of one HTTP/1.1
	// connection per stream.
	HTTP2 bool
	// TLS is the client TLS configuration for an https:// target (nil: the system's roots):
	// the roots its chain must lead to, or InsecureSkipVerify. The generator uses a clone,
	// with its own minimum version and key-exchange curves. The server name checked (and sent
	// as SNI) is the target URL's host.
	TLS *tls.Config

	// Headers are sent on every request to the target (streams and stop requests), over the
	// mix profiles' headers of the same name. Sensitive values (SensitiveHeader) are recorded
	// and printed as Redacted.
	Headers http.Header
	// Redact lists more secrets, of any length, to hide in everything the run writes or
	// prints, besides the sensitive headers' values and the URLs' userinfo (Redactor).
	Redact []string
	// Options are dialect options for every profile, over the mix's (the command line's
	// --option, --path, ...); the dialect rejects keys it does not know, so options of one
	// dialect need a mix of that dialect alone.
	Options protocol.Options
	// NoGroundTruth judges every session for structure only: the target's content is not
	// the script's (a real model behind a gateway), so no content rule applies.
	NoGroundTruth bool
	// Endpoint, when set, makes each session one request of an inference endpoint's
	// workload (synthetic or sampled prompts, max_tokens; no directive, no tools), judged
	// for structure only (NoGroundTruth). Its mix is EndpointMix's.
	Endpoint *endpoint.Workload
	// Dialects resolves the mix's dialect names and says what each can do (required: the
	// command line passes protocol/dialects.Default(); tests add their own dialects).
	Dialects *protocol.Registry
	// Transport, when set, replaces the transport the generator builds (tests).
	Transport http.RoundTripper
	// Clock times open-loop starts (nil: hrtimer.New(), which wakes within microseconds
	// where Go's timers may be a millisecond late). Tests inside a testing/synctest bubble
	// pass hrtimer.NewPortable().
	Clock *hrtimer.Clock

	// MockURL is the mock provider whose session records give cancel latency and R-abort;
	// empty skips that check. RuntimeMetricsURL is the runtime's Prometheus endpoint for the
	// leak check (default Target + "/metrics"; "-" disables it).
	MockURL           string
	RuntimeMetricsURL string
	// ScriptTimeScale is the mock's time scale (default 1): client triggers that fire at a
	// scripted time (abort during thinking the client cannot see) scale by it.
	ScriptTimeScale float64
	// AbortTolerance is how long after a client abort the provider must have seen it go away
	// (default 5 s); later or never is an R-abort violation. The rule asks whether cancels
	// happen at all (a runtime that ignores them streams on for many seconds); how fast they
	// happen is the cancel histogram's job, gated by thresholds, so a loaded machine's
	// scheduling delays do not turn into protocol violations.
	AbortTolerance time.Duration
	// LeakGrace is how long to wait after the load drained for the gauges to settle
	// (default 5 s); the check passes as soon as every delta is within tolerance.
	LeakGrace time.Duration
	// LeakPerStream is how many goroutines (and descriptors) per peak open stream the runtime
	// and the mock may keep after the run, for pooled idle provider connections (default
	// 0.05: 16 + 250 at 5,000 streams; over HTTP/1.1 provider pools raise it).
	LeakPerStream float64
	// NoLeakCheck skips the leak check entirely.
	NoLeakCheck bool
	// noSelfLeakGauges leaves the generator's own goroutines and descriptors out of the leak
	// check. For this package's tests: in a test binary they are every parallel test's.
	noSelfLeakGauges bool

	// SamplesPerRule is how many offending streams to keep per rule (default 3).
	SamplesPerRule int

	// BreakerSessions is how many first sessions the circuit breaker watches (default
	// DefaultBreakerSessions; negative: no breaker): when they all end in the same error (the
	// same outcome and text but for the session id and the URLs), the run stops starting
	// sessions and says why (Summary.Judging.Stopped, which fails the run).
	BreakerSessions int

	// Allow lists rules whose violations are known findings, in addition to the mix's allow
	// list: still counted and shown (Verdict.Allowed), they do not fail the run.
	Allow []protocol.Rule

	// GoodputSLOs are per-session objectives (verdict.ParseSessionSLO: "ttft<500ms",
	// "tpot<50ms"), added to the mix's goodputSLOs: a session that succeeded and met every one
	// counts toward goodput.
	GoodputSLOs []verdict.SessionSLO

	// Shard is this process's part of a sharded run (zero: the whole run). A sharded run
	// needs RunID (or StartAt, from which one is derived) shared by every shard, and skips
	// its own leak check: leakcheck.Check judges the whole run.
	Shard Shard
	// StartAt, when set, is when the run begins: Run waits until then, so the shards of a
	// run start together. A run that begins after it keeps it as its start, so its open-loop
	// starts are late and counted so, and says by how much (Summary.Shard.LateBy and a
	// verdict warning).
	StartAt time.Time

	// Info is recorded in the results as is; the generator does not act on it.
	Info RunInfo

	// Outputs take what the run produces while it runs: each session's end, the progress once
	// a second, latencies as they are measured and snapshots of the results so far (Output).
	// Each goes to every output that takes it, in this order; what no output takes costs the
	// run nothing.
	Outputs []Output
	// SnapshotInterval is how often a SnapshotOutput is called (default
	// DefaultSnapshotInterval).
	SnapshotInterval time.Duration
	// Interrupt, when closed, stops new sessions early (first Ctrl-C): in-flight ones get the
	// grace period, and the results are marked interrupted. Cancelling Run's context instead
	// cancels in-flight streams at once (second Ctrl-C); results are still returned.
	Interrupt <-chan struct{}
}

// RunInfo is what a run records about the system it measured beyond the workload: metadata
// for the report, kept apart from the settings the generator acts on.
type RunInfo struct {
	// Faults are the runtime's fault switches (agentruntime.Faults.Names()), when the caller
	// started the runtime with some.
	Faults []string
	// Extra holds any other setting worth recording, by flag name.
	Extra map[string]string
}

// SessionEnd describes one finished session, for callers that aggregate per scenario ×
// dialect (the run command's summary table).
type SessionEnd struct {
	Scenario, Dialect string
	// Session is the session's id; Target its target's slug.
	Session, Target string
	// Outcome is how the session ended (error outcomes are failures whatever the
	// violations).
	Outcome    measure.Outcome
	Violations []protocol.Violation
	// Err says what ended the session in an error outcome, naming the session, the host
	// and what was wrong; nil for the others (a session failed by violations alone has
	// none: its Violations say why).
	Err error
}

// Progress is the run's state, reported once a second.
type Progress struct {
	Elapsed time.Duration
	// Planned is the run's planned length (0 when only Sessions bounds it).
	Planned time.Duration
	// PlannedSessions is Config.Sessions (0 when unbounded).
	PlannedSessions int64
	Active          int64
	Started         int64
	Completed       int64
	Errors          int64
	Violations      int64
	Frames          int64
	// Draining is true once no new sessions start and in-flight ones are finishing.
	Draining bool
}

// Defaults for the Config fields left zero; the command's flags show the same values in --help.
const (
	DefaultArrival       = "constant"
	DefaultMaxInflight   = 10_000
	DefaultGrace         = 30 * time.Second
	DefaultStreamTimeout = 2 * time.Minute
	DefaultLeakGrace     = leakcheck.DefaultGrace
	DefaultLeakPerStream = leakcheck.DefaultPerStream
)

// withDefaults is c with every field left zero set to its default, and the errors of what
// cannot run (Validate's), all of them.
func (c *Config) withDefaults() (Config, error) {
	if c.Dialects == nil {
		return *c, errors.New("dialects: the dialect registry is required (protocol/dialects.Default() for the shipped dialects)")
	}
	cfg := *c
	cfg.setDefaults()
	errs := append(cfg.loadErrors(), cfg.mixErrors()...)
	return cfg, errors.Join(errs...)
}

// orDefault is v, or d when v is not positive (not given).
func orDefault[T int | int64 | float64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// setDefaults sets the fields left zero to their defaults.
func (cfg *Config) setDefaults() {
	if cfg.Mix == nil {
		cfg.Mix, cfg.MixName = DefaultMix(), cmp.Or(cfg.MixName, "default")
	}
	cfg.Library = cmp.Or(cfg.Library, scenarios.Embedded())
	if cfg.Endpoint != nil {
		cfg.NoGroundTruth = true
		if _, ok := cfg.Library.Get(scenarios.EndpointScenario); !ok {
			cfg.Library = cfg.Library.With(scenarios.Endpoint(scenarios.DefaultTiming(), 1))
		}
	}
	cfg.Seed = cmp.Or(cfg.Seed, cfg.Mix.Seed)
	cfg.GoodputSLOs = cfg.Mix.goodputSLOs(cfg.GoodputSLOs)
	cfg.Arrival = cmp.Or(cfg.Arrival, DefaultArrival)
	cfg.Burstiness = orDefault(cfg.Burstiness, 1)
	cfg.Clock = cmp.Or(cfg.Clock, hrtimer.New())
	cfg.MaxInflight = orDefault(cfg.MaxInflight, DefaultMaxInflight)
	cfg.Grace = orDefault(cfg.Grace, DefaultGrace)
	cfg.StreamTimeout = orDefault(cfg.StreamTimeout, DefaultStreamTimeout)
	cfg.ScriptTimeScale = orDefault(cfg.ScriptTimeScale, 1)
	cfg.AbortTolerance = orDefault(cfg.AbortTolerance, 5*time.Second)
	cfg.LeakGrace = orDefault(cfg.LeakGrace, DefaultLeakGrace)
	cfg.LeakPerStream = orDefault(cfg.LeakPerStream, DefaultLeakPerStream)
	cfg.SamplesPerRule = orDefault(cfg.SamplesPerRule, 3)
	cfg.SnapshotInterval = orDefault(cfg.SnapshotInterval, DefaultSnapshotInterval)
	cfg.BreakerSessions = cmp.Or(cfg.BreakerSessions, DefaultBreakerSessions)
	cfg.RuntimeMetricsURL = cmp.Or(cfg.RuntimeMetricsURL, cfg.Target+"/metrics")
	if cfg.Shard.Sharded() && cfg.RunID == "" && !cfg.StartAt.IsZero() {
		cfg.RunID = cfg.StartAt.UTC().Format("20060102-150405")
	}
}

// loadErrors are what is wrong with the run's outputs, URLs, shape, length and shard.
func (cfg *Config) loadErrors() []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(checkOutputs(cfg.Outputs))
	if cfg.Target == "" {
		add(errors.New("target: the runtime's base URL is required"))
	} else {
		add(CheckURL("target", cfg.Target))
	}
	if cfg.MockURL != "" {
		add(CheckURL("mock", cfg.MockURL))
	}
	if m := cfg.RuntimeMetricsURL; m != "-" && m != cfg.Target+"/metrics" {
		add(CheckURL("runtime metrics", m))
	}
	closed, open, staged := cfg.Clients > 0, cfg.Rate > 0, len(cfg.Stages) > 0
	if closed && open {
		add(errors.New("clients and rate: choose closed loop (clients) or open loop (rate), not both"))
	}
	if !closed && !open && !staged && !cfg.replay() {
		add(errors.New("load shape: set clients, rate or stages"))
	}
	if staged && (closed || open) {
		add(errors.New("stages: the stages give the users (or rates); do not also set clients or rate"))
	}
	if cfg.Duration <= 0 && cfg.Sessions <= 0 && !staged {
		add(errors.New("run length: set duration, sessions or stages"))
	}
	add(cfg.Shard.Validate())
	if cfg.Shard.Sharded() && cfg.RunID == "" {
		add(fmt.Errorf("shard %s: a sharded run needs a run id every shard shares (or a start time to derive it from)", cfg.Shard))
	}
	if cfg.Arrival != "constant" && cfg.Arrival != "poisson" && cfg.Arrival != "gamma" {
		add(fmt.Errorf("arrival: %q, want constant, poisson or gamma", cfg.Arrival))
	}
	if cfg.Burstiness != 1 && cfg.Arrival != "gamma" {
		add(fmt.Errorf("burstiness %g: the shape of gamma arrivals; set arrival gamma", cfg.Burstiness))
	}
	if cfg.Endpoint != nil {
		add(cfg.Endpoint.Check())
	}
	return errs
}

// mixErrors are what is wrong with the rules allowed, the mix's thresholds and scenarios:
// rule names are checked against the registry's rules (a dialect's own are known with it),
// scenarios against the library.
func (cfg *Config) mixErrors() []error {
	var errs []error
	rules := cfg.Dialects.Rules()
	for i, rule := range cfg.Allow {
		if _, err := rules.Parse(string(rule)); err != nil {
			errs = append(errs, fmt.Errorf("allow[%d]: %w", i, err))
		}
	}
	for i, rule := range cfg.Mix.Allow {
		if _, err := rules.Parse(string(rule)); err != nil {
			errs = append(errs, fmt.Errorf("mix %s: allow[%d]: %w", cfg.MixName, i, err))
		}
	}
	for i, expr := range cfg.Mix.Thresholds {
		if _, err := verdict.ParseThresholdIn(rules, expr); err != nil {
			errs = append(errs, fmt.Errorf("mix %s: thresholds[%d]: %w", cfg.MixName, i, err))
		}
	}
	for _, name := range cfg.Mix.ScenarioNames() {
		if _, ok := cfg.Library.Get(name); !ok {
			errs = append(errs, fmt.Errorf("mix %s: scenario %q is not in the library (known: %v)", cfg.MixName, name, cfg.Library.Names()))
		}
	}
	return append(errs, swarmMixErrors(cfg)...) // swarm.go
}

// openLoop tells whether sessions start on a schedule rather than per virtual user.
func (c *Config) openLoop() bool {
	return c.Rate > 0 || (len(c.Stages) > 0 && c.RateStages) || c.replay()
}

// replay tells whether sessions start at the endpoint trace's times: no other shape is given.
func (c *Config) replay() bool {
	return c.Endpoint != nil && len(c.Endpoint.Trace) > 0 && c.Clients == 0 && c.Rate == 0 && len(c.Stages) == 0
}

// Defaults of the workload when no shape or length is given: the default mix's 1,000 clients
// for 30 s.
const (
	DefaultClients  = 1000
	DefaultDuration = 30 * time.Second
)

// ClientsPerCore is how many closed-loop clients of the default mix run gives each core of
// the machine when no shape is given (ClientsForCores). Measured with run --clients 100 and 200
// --duration 10s on a 2-core VM: the generator, the mock and the runtime together spent 32 to
// 49 ms of CPU per session, and a client ran a session every 3.2 s or so, so each client costs
// 0.010 to 0.015 cores; 40 clients a core keep the three processes near half of each core
// (0.4 to 0.6), so the latencies are the target's, not a queue for the CPU.
const ClientsPerCore = 40

// ClientsForCores is run's default clients on a machine of cores cores: ClientsPerCore a
// core, at most DefaultClients (25 cores and more), at least ClientsPerCore.
func ClientsForCores(cores int) int {
	return min(max(cores, 1)*ClientsPerCore, DefaultClients)
}

// Small tells whether the run is small enough that run and sweep play the mock and runtime in
// process (a quicker start, and figures no one would quote): at most 200 sessions, at most 20
// sessions/s, or at most 50 clients without stages.
func (c *Config) Small() bool {
	switch {
	case c.Sessions > 0 && c.Sessions <= 200:
		return true
	case c.replay():
		return false
	case c.Rate > 0:
		return c.Rate <= 20
	case len(c.Stages) > 0:
		return false
	}
	return c.Clients <= 50
}
