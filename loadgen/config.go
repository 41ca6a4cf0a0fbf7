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
	Target  string             // the runtime's base URL (http://host:port)
	Mix     *Mix               // nil: DefaultMix()
	MixName string             // where the mix came from ("default" or the file path)
	Library *scenarios.Library // nil: scenarios.Embedded()
	Seed    uint64             // overrides the mix's seed when non-zero
	// RunID prefixes session ids so the mock's records of different runs never mix (empty:
	// derived from the start time).
	RunID string

	// Clients is the closed-loop number of virtual users, each running sessions ThinkTime
	// apart; with HonorRetryAfter a user waits out a 429's or 503's Retry-After (at most
	// session.MaxRetryAfter) if longer. The open loop's schedule never waits.
	Clients         int
	ThinkTime       time.Duration
	HonorRetryAfter bool
	// Rate is the open-loop session rate per second; Arrival is "constant" (default), "poisson"
	// or "gamma" (Poisson's Burstiness; 0: 1). MaxInflight caps open streams (0: 10,000), a start
	// beyond it dropped. An Endpoint Trace without Clients, Rate or Stages plays at its times.
	Rate, Burstiness float64
	Arrival          string
	MaxInflight      int
	// Stages ramp the virtual users, or the session rate when RateStages is set; the run lasts
	// their total duration unless Duration or Sessions end it first.
	Stages     Stages
	RateStages bool

	// Duration stops starting sessions after this long (warmup included), Sessions after this
	// many starts; at least one must bound the run.
	Duration time.Duration
	Sessions int64
	Warmup   time.Duration // sessions started within it are checked but not measured
	// Grace is how long in-flight streams may finish after the last start (default 30 s).
	Grace time.Duration
	// StreamTimeout bounds one session (default 2 min): a stream still open then is over_time;
	// one still open when Grace ends is cut.
	StreamTimeout time.Duration
	// IdleTimeout ends a stream silent this long as stalled (0: never, as a legacy client or a
	// tool may be silent for minutes); a stream a limit finds silent for StallWindow is stalled.
	IdleTimeout time.Duration

	// HTTP2 uses HTTP/2 (h2c for http://, h2 by ALPN for https://) instead of one HTTP/1.1
	// connection per stream.
	HTTP2 bool
	// TLS is the client TLS configuration for an https:// target (nil: the system's roots);
	// the generator uses a clone with its own minimum version and curves.
	TLS *tls.Config

	// Headers are sent on every request to the target, over the mix profiles' headers of the
	// same name; sensitive values (SensitiveHeader) are recorded and printed as Redacted.
	Headers http.Header
	// Redact lists more secrets, of any length, to hide in everything the run writes or prints.
	Redact []string
	// Options are dialect options for every profile, over the mix's; a dialect rejects keys it
	// does not know.
	Options protocol.Options
	// NoGroundTruth judges every session for structure only (a real model's content).
	NoGroundTruth bool
	// Endpoint, when set, makes each session one request of an inference endpoint's workload,
	// judged for structure only; its mix is EndpointMix's.
	Endpoint *endpoint.Workload
	// Dialects resolves the mix's dialect names (required: protocol/dialects.Default()).
	Dialects *protocol.Registry
	// Transport, when set, replaces the transport the generator builds (tests).
	Transport http.RoundTripper
	// Clock times open-loop starts (nil: hrtimer.New(), which wakes within microseconds);
	// tests in a testing/synctest bubble pass hrtimer.NewPortable().
	Clock *hrtimer.Clock

	// MockURL is the mock whose records give cancel latency and R-abort ("": not checked);
	// RuntimeMetricsURL the leak check's Prometheus endpoint (default Target/metrics; "-": none).
	MockURL           string
	RuntimeMetricsURL string
	// EngineMetricsURL is an inference engine's Prometheus endpoint whose known gauges
	// (measure.EngineGauges) are read every second while the load runs (empty: none).
	EngineMetricsURL string
	// ScriptTimeScale is the mock's time scale (default 1), which scripted client times scale by.
	ScriptTimeScale float64
	// AbortTolerance is how long after a client abort the provider must see it go away, else
	// R-abort (default 5 s: how fast is the cancel histogram's job, not the rule's).
	AbortTolerance time.Duration
	// LeakGrace is how long the gauges may take to settle after the load (default 5 s).
	LeakGrace time.Duration
	// LeakPerStream is how many goroutines (and descriptors) per peak open stream the runtime
	// and the mock may keep after the run, for pooled provider connections (default 0.05).
	LeakPerStream float64
	NoLeakCheck   bool
	// noSelfLeakGauges leaves the generator's own gauges out of the leak check (tests: a test
	// binary's are every parallel test's).
	noSelfLeakGauges bool

	SamplesPerRule int // offending streams kept per rule (default 3)

	// BreakerSessions is how many first sessions the circuit breaker watches (default
	// DefaultBreakerSessions; negative: none): when they all fail alike, the run stops.
	BreakerSessions int

	// Allow lists rules whose violations are known findings, besides the mix's: still counted
	// and shown, they do not fail the run.
	Allow []protocol.Rule

	// GoodputSLOs are per-session objectives ("ttft<500ms"), added to the mix's goodputSLOs.
	GoodputSLOs []verdict.SessionSLO

	// Shard is this process's part of a sharded run (zero: the whole run), which needs a
	// shared RunID (or StartAt) and skips its own leak check.
	Shard Shard
	// StartAt, when set, is when the run begins, so the shards start together; a run that
	// begins later keeps it as its start and counts its late starts.
	StartAt time.Time

	Info RunInfo // recorded as is; the generator does not act on it

	// Outputs take what the run produces while it runs, each in this order; what no output
	// takes costs the run nothing.
	Outputs []Output
	// SnapshotInterval is how often a SnapshotOutput is called (default DefaultSnapshotInterval).
	SnapshotInterval time.Duration
	// Interrupt, when closed, stops new sessions (first Ctrl-C), the results marked interrupted;
	// cancelling Run's context cancels in-flight ones at once (second Ctrl-C).
	Interrupt <-chan struct{}
}

// RunInfo is metadata a run records for the report, apart from the settings it acts on.
type RunInfo struct {
	Faults []string          // the runtime's fault switches (agentruntime.Faults.Names())
	Extra  map[string]string // any other setting worth recording, by flag name
}

// SessionEnd describes one finished session, for callers that aggregate per scenario × dialect.
type SessionEnd struct {
	Scenario, Dialect string
	Session, Target   string // the session's id, its target's slug
	Outcome           measure.Outcome
	Violations        []protocol.Violation
	// Err says what ended the session in an error outcome; nil for the others.
	Err error
}

// Progress is the run's state, reported once a second.
type Progress struct {
	Elapsed         time.Duration
	Planned         time.Duration // the run's planned length (0: only Sessions bounds it)
	PlannedSessions int64         // Config.Sessions (0: unbounded)
	Active          int64
	Started         int64
	Completed       int64
	Errors          int64
	Violations      int64
	Frames          int64
	Draining        bool // no new sessions start; in-flight ones are finishing
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

// withDefaults is c with its defaults set, and every error of what cannot run.
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
	if cfg.EngineMetricsURL != "" {
		add(CheckURL("engine metrics", cfg.EngineMetricsURL))
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

// mixErrors are what is wrong with the rules allowed, the mix's thresholds, scenarios and dialects.
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
	// A profile may not play a swarm scenario its dialect cannot.
	for i, p := range cfg.Mix.Profiles {
		if cfg.Dialects.PlaysSwarm(p.Dialect) || p.Weight <= 0 {
			continue
		}
		for _, name := range p.scenarioNames {
			if sc, ok := cfg.Library.Get(name); ok && sc.HasSwarm() {
				errs = append(errs, fmt.Errorf("mix %s: profiles[%d] (%s, dialect %s) plays swarm scenario %q: swarm children are compose only; give it a weight in the compose profile's own scenarios, not the shared ones",
					cfg.MixName, i, p.Name, p.Dialect, name))
			}
		}
	}
	return errs
}

// openLoop tells whether sessions start on a schedule rather than per virtual user.
func (c *Config) openLoop() bool {
	return c.Rate > 0 || (len(c.Stages) > 0 && c.RateStages) || c.replay()
}

// replay tells whether sessions start at the endpoint trace's times: no other shape is given.
func (c *Config) replay() bool {
	return c.Endpoint != nil && len(c.Endpoint.Trace) > 0 && c.Clients == 0 && c.Rate == 0 && len(c.Stages) == 0
}

// Defaults of the workload when no shape or length is given.
const (
	DefaultClients  = 1000
	DefaultDuration = 30 * time.Second
)

// ClientsPerCore is run's default-mix clients per core: the three processes near half of each
// core, so latencies are the target's, not a queue for the CPU (docs/REFERENCE.md).
const ClientsPerCore = 40

// ClientsForCores is run's default clients on cores cores, within [ClientsPerCore, DefaultClients].
func ClientsForCores(cores int) int {
	return min(max(cores, 1)*ClientsPerCore, DefaultClients)
}

// Small tells whether run and sweep may play the mock and runtime in process (a quicker start,
// figures no one would quote): at most 200 sessions, 20 sessions/s, or 50 clients.
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
