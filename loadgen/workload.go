package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/scenarios"
)

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

// Workload is what to play and how hard, as the command line gives it (load's, run's and
// sweep's workload flags) in plain values; Config turns it into a Config. The fields mirror
// the flags, so Config's errors name the flag that was wrong (--mix, --stages …).
type Workload struct {
	// Mix is a mix YAML file ("": the embedded mix), ScenarioDir a directory of scenarios
	// ("": the embedded library); Dialect and Slug restrict the mix to one dialect or send
	// every session to one slug.
	Mix, ScenarioDir, Dialect, Slug string
	// ScenarioFiles are scenario YAML files played as the whole mix, equally weighted,
	// through the mix's profiles; they join the library (load --scenario).
	ScenarioFiles []string
	// Options are KEY=VALUE dialect options; Path and StopPath ("": not given) are
	// shorthands for the options of those names, which several dialects take.
	Options         []string
	Path, StopPath  string
	NoGroundTruth   bool
	Seed            uint64
	Clients         int
	ThinkTime       time.Duration
	HonorRetryAfter bool
	Rate            float64
	Arrival         string
	MaxInflight     int
	Stages          string // DURATION:TARGET,... (ParseStages)
	RateStages      bool
	Duration        time.Duration
	Sessions        int64
	Warmup, Grace   time.Duration
	StreamTimeout   time.Duration
	IdleTimeout     time.Duration
	ReplayBudget    time.Duration // 0 or negative: no replay (Config.ReplayBudget < 0)
	BreakerSessions int           // 0 or negative: no circuit breaker
	LeakGrace       time.Duration
	LeakPerStream   float64
	NoLeakCheck     bool
	SnapshotEvery   time.Duration
	HTTP2           bool
	Headers         []string // "Name: value" (ParseHeaders)
	Redact          []string // more secrets (Config.Redact)
	CACert          string
	Insecure        bool
	TimeScale       float64
	RunID           string
	Allow           []string // rule IDs (the registry's, protocol.Registry.Rules)
	GoodputSLOs     []string // METRIC OP LIMIT (measure.ParseSessionSLO)
	// DefaultClients are the closed-loop clients when neither Clients, Rate nor Stages is
	// given (0: the package's DefaultClients); run sizes it to the machine (ClientsForCores).
	DefaultClients int

	// The inference endpoint's workload and target (openai-chat, anthropic-messages and openai-responses only):
	// Model is the model option; APIKey goes in the dialect's auth header (APIKeyHeader) and
	// is a secret (Config.Redact); InputTokens and OutputTokens are TokenDist specs and
	// Prompts a prompt file (LoadPrompts), Prompt one prompt sent as the user's message of
	// every request: any of them makes the run an endpoint workload (Config.Endpoint).
	Model, APIKey             string
	InputTokens, OutputTokens string
	Prompts, Prompt           string
	// Conversations is a conversation file (LoadConversations): each session replays one,
	// turn by turn, each request carrying the answers received so far.
	Conversations string
	// MaxTokensField is the openai-chat field for max_tokens (protocol.MaxTokensField and
	// its siblings; "": max_tokens); MinTokens and IgnoreEOS send vLLM's min_tokens (equal
	// to max_tokens) and ignore_eos (Endpoint).
	MaxTokensField       string
	MinTokens, IgnoreEOS bool
}

// IsEndpoint reports whether the workload is an inference endpoint's (Config.Endpoint).
func (w Workload) IsEndpoint() bool {
	return w.InputTokens != "" || w.OutputTokens != "" || w.Prompts != "" || w.Prompt != "" || w.Conversations != ""
}

// Config resolves the workload into a Config (without target, mock and metrics URLs): the
// mix (the default, the Mix file, restricted to Dialect and Slug), the scenario library, the
// rules allowed, the goodput objectives, the headers, the dialect options, and the default
// shape (Workload.DefaultClients, else DefaultClients) and length (DefaultDuration) when none is given.
func (w Workload) Config() (Config, error) {
	cfg := Config{
		Seed: w.Seed, RunID: w.RunID, Clients: w.Clients, ThinkTime: w.ThinkTime,
		Rate: w.Rate, Arrival: w.Arrival, MaxInflight: w.MaxInflight, RateStages: w.RateStages,
		Duration: w.Duration, Sessions: w.Sessions, Warmup: w.Warmup, Grace: w.Grace,
		StreamTimeout: w.StreamTimeout, IdleTimeout: w.IdleTimeout, LeakGrace: w.LeakGrace, NoLeakCheck: w.NoLeakCheck, LeakPerStream: w.LeakPerStream,
		SnapshotInterval: w.SnapshotEvery,
		HTTP2:            w.HTTP2, ScriptTimeScale: w.TimeScale, MixName: "default", NoGroundTruth: w.NoGroundTruth,
	}
	cfg.Redact, cfg.HonorRetryAfter = w.Redact, w.HonorRetryAfter
	cfg.BreakerSessions = w.BreakerSessions
	if w.BreakerSessions <= 0 {
		cfg.BreakerSessions = -1
	}
	cfg.ReplayBudget = w.ReplayBudget
	if w.ReplayBudget <= 0 {
		cfg.ReplayBudget = -1
	}
	// Zero means "not given" here (the defaults below); a negative or non-finite value is
	// never one, and is named rather than read as missing.
	switch {
	case w.Clients < 0:
		return cfg, fmt.Errorf("--clients %d: want a positive number of virtual users", w.Clients)
	case w.Rate < 0 || math.IsNaN(w.Rate) || math.IsInf(w.Rate, 0):
		return cfg, fmt.Errorf("--rate %g: want a positive, finite number of sessions per second", w.Rate)
	case w.Duration < 0:
		return cfg, fmt.Errorf("--duration %s: want a positive duration", w.Duration)
	case w.Sessions < 0:
		return cfg, fmt.Errorf("--sessions %d: want a positive number of sessions", w.Sessions)
	}
	if w.TimeScale <= 0 {
		return cfg, fmt.Errorf("--time-scale %g: want a positive factor", w.TimeScale)
	}
	if w.SnapshotEvery <= 0 {
		return cfg, fmt.Errorf("--snapshot-every %s: want a positive duration", w.SnapshotEvery)
	}
	for _, name := range w.Allow {
		rule, err := dialects.Default().Rules().Parse(name)
		if err != nil {
			return cfg, fmt.Errorf("--allow: %w", err)
		}
		cfg.Allow = append(cfg.Allow, rule)
	}
	for _, expr := range w.GoodputSLOs {
		slo, err := measure.ParseSessionSLO(expr)
		if err != nil {
			return cfg, fmt.Errorf("--goodput-slo: %w", err)
		}
		cfg.GoodputSLOs = append(cfg.GoodputSLOs, slo)
	}
	h, err := ParseHeaders(w.Headers)
	if err != nil {
		return cfg, fmt.Errorf("--header %w", err)
	}
	cfg.Headers = h
	cfg.CACertFile, cfg.Insecure = w.CACert, w.Insecure
	if cfg.Options, err = w.dialectOptions(); err != nil {
		return cfg, err
	}
	if w.CACert != "" && w.Insecure {
		return cfg, errors.New("--ca-cert and --insecure: verify against the CA file, or skip verification, not both")
	}
	if w.Stages != "" {
		st, err := ParseStages(w.Stages)
		if err != nil {
			return cfg, fmt.Errorf("--stages: %w", err)
		}
		cfg.Stages = st
	}
	if cfg.Clients == 0 && cfg.Rate == 0 && len(cfg.Stages) == 0 {
		cfg.Clients = cmp.Or(w.DefaultClients, DefaultClients)
	}
	if cfg.Duration == 0 && cfg.Sessions == 0 && len(cfg.Stages) == 0 {
		cfg.Duration = DefaultDuration
	}
	if w.ScenarioDir != "" {
		lib, err := scenarios.LoadDir(w.ScenarioDir)
		if err != nil {
			return cfg, fmt.Errorf("--scenarios %s: %w", w.ScenarioDir, err)
		}
		cfg.Library = lib
	}
	mix := DefaultMix()
	if w.Mix != "" {
		m, err := LoadMix(w.Mix)
		if err != nil {
			return cfg, fmt.Errorf("--mix: %w", err)
		}
		mix, cfg.MixName = m, w.Mix
	}
	if len(w.ScenarioFiles) > 0 {
		if w.IsEndpoint() {
			return cfg, errors.New("--scenario and the endpoint workload (--input-tokens, --output-tokens, --prompt, --prompts, --conversations): a scripted scenario or a real model's requests, not both")
		}
		base := cmp.Or(cfg.Library, scenarios.Embedded())
		lib, names, err := base.WithFiles(w.ScenarioFiles)
		if err != nil {
			return cfg, fmt.Errorf("--scenario: %w", err)
		}
		if mix, err = mix.WithScenarios(names); err != nil {
			return cfg, fmt.Errorf("--scenario: %w", err)
		}
		cfg.Library = lib
		cfg.MixName += " with --scenario " + strings.Join(names, ",")
	}
	if w.Dialect != "" {
		if _, err := dialects.Default().Lookup(w.Dialect); err != nil {
			return cfg, fmt.Errorf("--dialect: %w", err)
		}
	}
	if err := w.endpoint(&cfg); err != nil {
		return cfg, err
	}
	if cfg.Endpoint != nil {
		m, err := EndpointMix(w.Dialect, cmp.Or(w.Model, "endpoint"), cfg.Seed)
		if err != nil {
			return cfg, err
		}
		mix, cfg.MixName = m, "endpoint"
	} else if w.Dialect != "" || w.Slug != "" {
		m, err := mix.Restrict(w.Dialect, w.Slug)
		if err != nil {
			return cfg, err
		}
		mix = m
	}
	cfg.Mix = mix
	if ds := mix.Dialects(); w.Path != "" && len(ds) > 1 {
		return cfg, fmt.Errorf("--path %q: the mix has profiles of several dialects (%s); choose one with --dialect", w.Path, strings.Join(ds, ", "))
	}
	return cfg, nil
}

// endpoint applies the endpoint flags (--model, --api-key, --input-tokens, --output-tokens,
// --prompts, --prompt, --conversations) to cfg.
func (w Workload) endpoint(cfg *Config) error {
	if !w.IsEndpoint() {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--max-tokens-field", w.MaxTokensField != ""}, {"--min-tokens", w.MinTokens}, {"--ignore-eos", w.IgnoreEOS}} {
			if f.set {
				return fmt.Errorf("%s shapes an endpoint workload's request: give --input-tokens, --output-tokens, --prompt or --prompts too", f.name)
			}
		}
	}
	flag := ""
	switch {
	case w.Model != "":
		flag = "--model"
	case w.APIKey != "":
		flag = "--api-key"
	case w.InputTokens != "":
		flag = "--input-tokens"
	case w.OutputTokens != "":
		flag = "--output-tokens"
	case w.Prompts != "":
		flag = "--prompts"
	case w.Prompt != "":
		flag = "--prompt"
	case w.Conversations != "":
		flag = "--conversations"
	default:
		return nil
	}
	if !EndpointDialect(w.Dialect) {
		return fmt.Errorf("%s is for an inference endpoint: give --dialect openai-chat, anthropic-messages or openai-responses", flag)
	}
	if w.Model != "" {
		if cfg.Options == nil {
			cfg.Options = protocol.Options{}
		}
		cfg.Options["model"] = w.Model
	}
	if w.APIKey != "" {
		name, value := APIKeyHeader(w.Dialect, w.APIKey)
		if cfg.Headers == nil {
			cfg.Headers = http.Header{}
		}
		if cfg.Headers.Get(name) == "" {
			cfg.Headers.Set(name, value)
		}
		cfg.Redact = append(slices.Clone(cfg.Redact), w.APIKey)
	}
	if !w.IsEndpoint() {
		return nil
	}
	if w.Mix != "" {
		return errors.New("--mix and the endpoint workload (--input-tokens, --output-tokens, --prompt, --prompts, --conversations): one or the other")
	}
	e := &Endpoint{}
	var err error
	if e.Input, err = ParseTokenDist(w.InputTokens); err != nil {
		return fmt.Errorf("--input-tokens %w", err)
	}
	if e.Output, err = ParseTokenDist(w.OutputTokens); err != nil {
		return fmt.Errorf("--output-tokens %w", err)
	}
	if w.Prompt != "" {
		// One prompt is the whole prompt source: with a file or synthetic lengths, which
		// prompt a session sends would be ambiguous.
		for _, f := range []struct{ name, value string }{{"--prompts", w.Prompts}, {"--input-tokens", w.InputTokens}, {"--conversations", w.Conversations}} {
			if f.value != "" {
				return fmt.Errorf("--prompt and %s: --prompt is the one prompt every request sends; give one or the other", f.name)
			}
		}
		e.Prompts = []Prompt{{Messages: []protocol.Message{{Role: "user", Text: w.Prompt}}}}
		e.Source = "--prompt"
	} else if w.Conversations != "" {
		if w.InputTokens != "" || w.Prompts != "" {
			return errors.New("--conversations and --input-tokens or --prompts: the conversations' turns are the prompts; give one or the other")
		}
		if e.Conversations, err = LoadConversations(w.Conversations); err != nil {
			return fmt.Errorf("--conversations: %w", err)
		}
		e.Source = w.Conversations
	} else if w.Prompts != "" {
		if w.InputTokens != "" {
			return errors.New("--prompts and --input-tokens: the prompts are the file's; give one or the other")
		}
		if e.Prompts, err = LoadPrompts(w.Prompts); err != nil {
			return fmt.Errorf("--prompts: %w", err)
		}
		e.Source = w.Prompts
	} else if e.Input.Kind == "" {
		e.Input, _ = ParseTokenDist(strconv.Itoa(DefaultInputTokens))
	}
	if err := w.endpointFields(e); err != nil {
		return err
	}
	cfg.Endpoint, cfg.NoGroundTruth = e, true
	return nil
}

// endpointFields applies --max-tokens-field, --min-tokens and --ignore-eos to e: OpenAI wire
// fields, so openai-chat only; min_tokens needs a length to equal.
func (w Workload) endpointFields(e *Endpoint) error {
	switch w.MaxTokensField {
	case "", protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields:
	default:
		return fmt.Errorf("--max-tokens-field %q: want %s, %s or %s", w.MaxTokensField,
			protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields)
	}
	if w.Dialect != openaichat.Name {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--max-tokens-field", w.MaxTokensField != ""}, {"--min-tokens", w.MinTokens}, {"--ignore-eos", w.IgnoreEOS}} {
			if f.set {
				return fmt.Errorf("%s is a field of the OpenAI chat wire: --dialect %s sends max_tokens alone", f.name, w.Dialect)
			}
		}
	}
	if w.MinTokens && e.Output.Kind == "" && len(e.Prompts) == 0 && len(e.Conversations) == 0 {
		return errors.New("--min-tokens sends min_tokens equal to max_tokens: give --output-tokens (or a --prompts file with reply lengths)")
	}
	e.MaxTokensField, e.MinTokens, e.IgnoreEOS = w.MaxTokensField, w.MinTokens, w.IgnoreEOS
	return nil
}

// DefaultInputTokens is the synthetic prompt's length when only --output-tokens is given.
const DefaultInputTokens = 512

// dialectOptions gathers the KEY=VALUE options and the shorthands for options.
func (w Workload) dialectOptions() (protocol.Options, error) {
	opts := protocol.Options{}
	for _, kv := range w.Options {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--option %q: want KEY=VALUE", kv)
		}
		opts[k] = v
	}
	for key, v := range map[string]string{"path": w.Path, "stopPath": w.StopPath} {
		if v != "" {
			opts[key] = v
		}
	}
	if len(opts) == 0 {
		return nil, nil
	}
	return opts, nil
}

// Small tells whether the run is small enough that run and sweep play the mock and runtime in
// process (a quicker start, and figures no one would quote): at most 200 sessions, at most 20
// sessions/s, or at most 50 clients without stages.
func (c *Config) Small() bool {
	switch {
	case c.Sessions > 0 && c.Sessions <= 200:
		return true
	case c.Rate > 0:
		return c.Rate <= 20
	case len(c.Stages) > 0:
		return false
	}
	return c.Clients <= 50
}
