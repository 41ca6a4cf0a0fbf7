// Package workload is the flag groups several commands share and their resolution into the
// library's values (a loadgen.Config); its errors name the flag, and a caller reports each as bad input.
package workload

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/verdict"
)

// workload is what to play and how hard, as load's, run's and sweep's workload flags give it;
// build turns it into a loadgen.Config, its errors naming the flag that was wrong. Each field
// but cfg and the last two holds the flag of its name (Add, AddEndpoint), whose help says what it means.
type workload struct {
	cfg                             loadgen.Config // the flags that are a Config field as they are
	Mix, ScenarioDir, Dialect, Slug string
	ScenarioFiles                   []string
	Options                         []string
	Path, StopPath                  string
	Stages                          string
	Headers                         []string
	CACert                          string
	Insecure                        bool
	Allow, GoodputSLOs              []string
	Model, APIKey                   string
	InputTokens, OutputTokens       string
	Prompts, Prompt, Conversations  string
	MaxTokensField                  string
	MinTokens, IgnoreEOS            bool
	Tokenizer, Trace, TraceFormat   string
	PrefixTokens, PrefixPool        int
	TraceSpeed                      float64
	// DefaultClients are the closed-loop clients when neither Clients, Rate nor Stages is
	// given (0: the package's DefaultClients); run sizes it to the machine (ClientsForCores).
	DefaultClients int
	// DefaultTargets are where a --dialect the mix has no profile for sends its sessions
	// without --slug (none: one named after the dialect); run's are its runtime's agents.
	DefaultTargets []string
}

// Flags are the workload flags of one command, parsed into their values.
type Flags struct {
	workload
	// Quiet is --quiet: no progress output.
	Quiet bool
	fs    *pflag.FlagSet
}

// Add registers the workload flags on fs (load, run and sweep share them).
func Add(fs *pflag.FlagSet) *Flags {
	w := &Flags{fs: fs}
	fs.StringVar(&w.Mix, "mix", "", "workload mix YAML file (default: the embedded mix)")
	fs.StringVar(&w.ScenarioDir, "scenarios", "", "load scenarios from this directory instead of the embedded library")
	fs.StringSliceVar(&w.ScenarioFiles, "scenario", nil, "play the scenario YAML `FILE`s as the whole mix, equally weighted, through the mix's profiles (repeatable or FILE,FILE;\n"+
		"docs/SCENARIOS.md). run and sweep hand them to the mock they start; a mock you started must be given the same files\n"+
		"(streambench mock --scenario FILE), or its sessions fail with its \"unknown scenario\" error")
	fs.StringVar(&w.Dialect, "dialect", "", "only this client dialect: "+strings.Join(dialects.Default().Names(), ", ")+" (default: the mix's)")
	fs.StringVar(&w.Slug, "slug", "", "send every session to this deployment slug / workflow id / agent id; a --dialect the mix has no profile for (ag-ui, langgraph, ai-sdk in the default mix)\nsends to one named after the dialect unless given (run: to its runtime's openai-all and anthropic-all; it knows openai-none, … too, its 404 lists them)")
	fs.StringArrayVar(&w.Options, "option", nil, "a dialect option KEY=VALUE for every profile whose dialect takes it (repeatable; over the mix's);\n"+
		"the dialects and their options:\n"+dialects.Default().Help())
	fs.BoolVar(&w.cfg.NoGroundTruth, "no-ground-truth", false, "judge timing and structure only: the target's content is not the script's (a real model), so no content rule applies")
	fs.Uint64Var(&w.cfg.Seed, "seed", 0, "session sequence seed (default: the mix's)")
	fs.IntVar(&w.cfg.Clients, "clients", 0, fmt.Sprintf("closed loop: virtual users, each running sessions back to back (default when no --rate or --stages: load %d;\n"+
		"run %d per core of this machine, at most %d, as its mock and runtime share the cores);\n"+
		"a user ignores the Retry-After of a 429 or 503 and starts its next session at once, unless --honor-retry-after",
		loadgen.DefaultClients, loadgen.ClientsPerCore, loadgen.DefaultClients))
	fs.DurationVar(&w.cfg.ThinkTime, "think-time", 0, "closed loop: pause between a user's sessions")
	fs.BoolVar(&w.cfg.HonorRetryAfter, "honor-retry-after", false, fmt.Sprintf("closed loop: after a 429 or 503 with Retry-After, a user waits that long (at most %s, never past the run's end)\n"+
		"before its next session, when longer than --think-time; the open loop (--rate) keeps its schedule", session.MaxRetryAfter))
	fs.Float64Var(&w.cfg.Rate, "rate", 0, "open loop: sessions started per second")
	fs.StringVar(&w.cfg.Arrival, "arrival", loadgen.DefaultArrival, "open loop: constant, poisson or gamma arrivals")
	fs.Float64Var(&w.cfg.Burstiness, "burstiness", 1, "--arrival gamma: the shape B of the gamma-distributed intervals between starts, of mean 1/--rate and\n"+
		"coefficient of variation 1/sqrt(B) (vLLM's --burstiness): below 1 burstier, 1 Poisson, above 1 more even")
	fs.IntVar(&w.cfg.MaxInflight, "max-inflight", loadgen.DefaultMaxInflight, "open loop: most open streams; starts beyond it are dropped and counted")
	fs.StringVar(&w.Stages, "stages", "", "ramp as DURATION:TARGET,... e.g. 30s:1000,60s:1000,10s:0 (virtual users; session rates with --rate-stages)")
	fs.BoolVar(&w.cfg.RateStages, "rate-stages", false, "--stages targets are session rates (open loop) instead of virtual users")
	fs.DurationVar(&w.cfg.Duration, "duration", 0, fmt.Sprintf("stop starting sessions after this long (default %s when neither --sessions nor --stages)", loadgen.DefaultDuration))
	fs.Int64Var(&w.cfg.Sessions, "sessions", 0, "stop after this many sessions")
	fs.DurationVar(&w.cfg.Warmup, "warmup", 0, "sessions started in this first period are checked but not measured")
	fs.DurationVar(&w.cfg.Grace, "grace", loadgen.DefaultGrace, "after the last start, how long in-flight streams may finish before they are cancelled (outcome cut).\n"+
		longestRunHelp)
	fs.DurationVar(&w.cfg.StreamTimeout, "stream-timeout", loadgen.DefaultStreamTimeout, "longest a single session may take: one still delivering then ends as outcome over_time (an error, not a violation);\n"+
		"it never lengthens the run: a stream still open when --grace ends is cut.\n"+longestRunHelp)
	fs.Duration("replay-budget", 0, "no longer used: a violation's sample is the frames of the run's own session; nothing is sent again")
	_ = fs.MarkDeprecated("replay-budget", "a violation's sample is the frames of the run's own session; nothing is sent again")
	fs.DurationVar(&w.cfg.IdleTimeout, "idle-timeout", 0, "end a stream silent this long (no byte; comments and keep-alives count) as outcome stalled (default: never, as a legacy client\n"+
		"or a long tool may be silent for minutes; a stream --stream-timeout or the run's end finds silent for 10s is stalled all the same)")
	fs.IntVar(&w.cfg.BreakerSessions, "breaker-sessions", loadgen.DefaultBreakerSessions, "circuit breaker: when the first N sessions all end in the same error (the same outcome and text but for\n"+
		"the session id and the URLs), stop starting sessions and say why (the run fails); 0: never")
	fs.DurationVar(&w.cfg.LeakGrace, "leak-grace", loadgen.DefaultLeakGrace, "after the load drained, how long gauges may take to return to their baseline")
	fs.Float64Var(&w.cfg.LeakPerStream, "leak-per-stream", loadgen.DefaultLeakPerStream, "goroutines, descriptors and handles per peak open stream the runtime and mock may keep after the run,\n"+
		"on top of 16, for pooled idle provider connections (HTTP/1.1 provider pools keep one connection, two goroutines, per stream they carried at once: 2)")
	fs.BoolVar(&w.cfg.NoLeakCheck, "no-leak-check", false, "skip the leak check")
	fs.DurationVar(&w.cfg.SnapshotInterval, "snapshot-every", loadgen.DefaultSnapshotInterval, "with --out: write the results so far this often, marked incomplete, so a killed run leaves them")
	fs.BoolVar(&w.cfg.HTTP2, "http2", false, "use HTTP/2 (h2c for http://, h2 by ALPN for https://) instead of one HTTP/1.1 connection per stream")
	fs.StringArrayVar(&w.Headers, "header", nil, "send this header on every request to the target, as 'Name: value' (repeatable), e.g.\n"+
		"--header \"x-runtime-internal-token: $TOKEN\"; values of Authorization, Cookie and *token*/*key*/*secret*\n"+
		"headers are recorded and printed as "+loadgen.Redacted+", and so is each part of them (the token after Bearer, any part of\n"+
		"8 bytes or more) wherever it appears (an error body, a redirect, a frame), as is a target URL's user:password")
	fs.StringArrayVar(&w.cfg.Redact, "redact", nil, "a secret to hide as "+loadgen.Redacted+" in everything written or printed, whatever its length (repeatable)")
	reg := dialects.Default()
	fs.StringVar(&w.Path, "path", "", "stream path template (--option path=...), e.g. /internal/workflow/agent/{agent}/stream; needs a single dialect (--dialect);\n"+
		"the placeholders and the default of each dialect that takes one: "+reg.OptionHelp("path"))
	fs.StringVar(&w.StopPath, "stop-path", "", "stop path template (--option stopPath=...): "+reg.OptionHelp("stopPath")+" (default\n"+
		compose.DefaultStopPath+"; with a --path ending in /stream, that prefix + /runs/{run}/stop)")
	fs.StringVar(&w.CACert, "ca-cert", "", "https: trust the certificates in this PEM file instead of the system's roots")
	fs.BoolVar(&w.Insecure, "insecure", false, "https: do not verify the target's certificate")
	fs.Float64Var(&w.cfg.ScriptTimeScale, "time-scale", 1, "the mock's time scale (scripted client triggers scale with it)")
	fs.StringVar(&w.cfg.RunID, "run-id", "", "name of the run (default: time-based); results go to OUT/RUN-ID")
	fs.BoolVar(&w.Quiet, "quiet", false, "no progress output")
	fs.StringArrayVar(&w.Allow, "allow", nil, "a rule whose violations are a known finding, e.g. R-abort: counted and shown as allowed, not failing the run (repeatable; adds to the mix's allow:)")
	fs.StringArrayVar(&w.GoodputSLOs, "goodput-slo", nil, "a per-session objective for goodput, METRIC OP LIMIT, e.g. 'ttft<500ms' or 'tpot<50ms' (repeatable):\n"+
		"goodput counts the sessions that succeeded and met every one; metrics: "+measure.SessionSLOMetricNames())
	return w
}

// AddExcept registers the workload flags and the endpoint's on fs but those named skip (sweep's
// steps set --clients and --rate).
func AddExcept(fs *pflag.FlagSet, skip ...string) *Flags {
	scratch := pflag.NewFlagSet("workload", pflag.ContinueOnError)
	w := Add(scratch)
	w.AddEndpoint()
	scratch.VisitAll(func(f *pflag.Flag) {
		if !slices.Contains(skip, f.Name) {
			fs.AddFlag(f)
		}
	})
	w.fs = fs // the parsed set: Config asks it which flags were given
	return w
}

// AddEndpoint registers the inference endpoint's flags (load, run and sweep: --model,
// --api-key, --input-tokens, --output-tokens, --prompt, --prompts, --conversations).
func (w *Flags) AddEndpoint() {
	fs := w.fs
	reg := dialects.Default()
	fs.StringVar(&w.Model, "model", "", strings.Join(reg.Endpoints(), ", ")+": the request's model (--option model=...); with an endpoint workload and none given,\n"+
		"the only model GET TARGET/v1/models lists (several: an error listing them)")
	fs.StringVar(&w.APIKey, "api-key", "", strings.Join(reg.Endpoints(), ", ")+": the API key, sent as\n"+reg.APIKeyHelp()+" by the dialect.\n"+
		"Never written or printed ("+loadgen.Redacted+")")
	fs.StringVar(&w.InputTokens, "input-tokens", "", "endpoint workload: synthetic prompts of this many tokens: 512, 512±64 (normal: mean ± standard deviation)\n"+
		"or uniform:256-768 (default 512 when --output-tokens is given without --prompts). Each session is one request as an\n"+
		"application sends it: no directive, no tools, no reasoning fields; judged for structure only (implies --no-ground-truth)")
	fs.StringVar(&w.OutputTokens, "output-tokens", "", "endpoint workload: max_tokens of each request, as --input-tokens (default: a --prompts record's reply length, else none)")
	fs.StringVar(&w.MaxTokensField, "max-tokens-field", "", "openai-chat endpoint workload: the field --output-tokens is sent in: max_tokens (default: every OpenAI-compatible\n"+
		"server takes it), max_completion_tokens (OpenAI's newer name, required by its reasoning models; vllm bench serve's), or both")
	fs.BoolVar(&w.MinTokens, "min-tokens", false, "openai-chat endpoint workload: also send min_tokens equal to max_tokens, so a vLLM server generates exactly that many")
	fs.BoolVar(&w.IgnoreEOS, "ignore-eos", false, "openai-chat endpoint workload: send ignore_eos: true (vLLM: generate past the end-of-sequence token up to max_tokens)")
	fs.StringVar(&w.Prompts, "prompts", "", "endpoint workload: prompts sampled with the seed from this file: JSON Lines of strings, {\"prompt\":...}\n"+
		"or {\"messages\":[{\"role\":...,\"content\":...}]}, or ShareGPT records (a JSON array or lines of {\"conversations\":[...]})")
	fs.StringVar(&w.Prompt, "prompt", "", "endpoint workload: this `TEXT` as the user's message of every request (not with --prompts, --input-tokens or --conversations)")
	fs.StringVar(&w.Conversations, "conversations", "", "endpoint workload: multi-turn conversations sampled with the seed from this file, JSON Lines of\n"+
		"{\"turns\":[\"first user message\",\"second\",...]} or ShareGPT {\"conversations\":[...]} records (only the human turns are sent).\n"+
		"One client replays a conversation turn by turn, each request carrying the whole history with the answers it received;\n"+
		"each turn is a request measured on its own, the conversation is the session (a failed turn ends it with that outcome)")
	fs.StringVar(&w.Tokenizer, "tokenizer", modeltokens.CL100K, "endpoint workload: the tiktoken encoding in which synthetic prompts and --trace rows have exactly their\n"+
		"lengths in tokens: "+modeltokens.CL100K+" or "+modeltokens.O200K+" (each prompt is words that are one token each)")
	fs.IntVar(&w.PrefixTokens, "prefix-tokens", 0, "endpoint workload: begin every synthetic prompt with a prefix of N tokens shared by the sessions (then its\n"+
		"--input-tokens), which a server's prefix cache can reuse")
	fs.IntVar(&w.PrefixPool, "prefix-pool", 0, "with --prefix-tokens: K different prefixes, each session's drawn with the seed (default: one shared by all)")
	fs.StringVar(&w.Trace, "trace", "", "endpoint workload: replay this trace `FILE`, each row a request of its input and output lengths sent at its\n"+
		"timestamp (open loop; the run ends after its last row, or --sessions, or --duration): Mooncake JSON Lines, whose hash_ids\n"+
		"become shared prefix blocks of 512 tokens, or the Azure LLM inference trace CSV. With --clients or --rate (sweep's steps)\n"+
		"its rows are sent in order at that load instead")
	fs.StringVar(&w.TraceFormat, "trace-format", "", "--trace's format: mooncake or azure (default: mooncake when the file begins with '{', else azure)")
	fs.Float64Var(&w.TraceSpeed, "trace-speed", 1, "--trace's pace: 2 replays it twice as fast, 0.5 at half speed")
}

// longestRunHelp is how long a run can take, in --help of --grace and --stream-timeout.
const longestRunHelp = "A run lasts at most --duration (or the stages) + --grace (with --sessions and no --duration: until its last\n" +
	"session starts, a closed-loop user's sessions each up to --stream-timeout one after another, then --grace), then the post-run checks:\n" +
	"with --mock the cancel check (up to 15 s), the leak check (up to --leak-grace + 10 s); then it writes its results"

// ScenarioPaths is --scenario as absolute paths, for a child mock whose working directory
// may differ; a path that cannot be made absolute is passed as given.
func (w *Flags) ScenarioPaths() []string {
	out := make([]string, len(w.ScenarioFiles))
	for i, f := range w.ScenarioFiles {
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		out[i] = f
	}
	return out
}

// Config turns the flags into a loadgen.Config (without target, mock and metrics URLs); an
// error is bad input, naming the flag.
func (w *Flags) Config() (loadgen.Config, error) {
	if w.fs.Changed("prompt") && strings.TrimSpace(w.Prompt) == "" {
		return loadgen.Config{}, fmt.Errorf("--prompt %q: want the user's message, a non-empty text", w.Prompt)
	}
	// A zero given on purpose (--clients 0) is not the default a zero stands for.
	for _, name := range []string{"clients", "rate", "duration", "sessions", "grace", "stream-timeout", "burstiness", "trace-speed"} {
		if f := w.fs.Lookup(name); f != nil && f.Changed && isZeroFlag(f.Value.String()) {
			return loadgen.Config{}, fmt.Errorf("--%s %s: want a positive value (leave the flag out for the default)", name, f.Value.String())
		}
	}
	return w.workload.build()
}

// isZeroFlag tells whether a numeric or duration flag's value reads as zero.
func isZeroFlag(v string) bool {
	if d, err := time.ParseDuration(v); err == nil {
		return d == 0
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f == 0
}

// APIKeyFromEnv sets --api-key from the dialect's environment variable (protocol.EndpointSpec)
// when the flag was not given.
func (w *Flags) APIKeyFromEnv() {
	if spec, ok := dialects.Default().Endpoint(w.Dialect); ok && w.APIKey == "" && !w.fs.Changed("api-key") {
		w.APIKey = os.Getenv(spec.APIKeyEnv)
	}
}

// IsEndpoint reports whether the workload is an inference endpoint's (Config.endpoint.Workload).
func (w workload) IsEndpoint() bool {
	return w.InputTokens != "" || w.OutputTokens != "" || w.Prompts != "" || w.Prompt != "" || w.Conversations != "" || w.Trace != ""
}

// build resolves the workload into a loadgen.Config (without target, mock and metrics URLs).
func (w workload) build() (loadgen.Config, error) {
	cfg := w.cfg
	cfg.MixName, cfg.Dialects = "default", dialects.Default()
	if cfg.BreakerSessions <= 0 {
		cfg.BreakerSessions = -1
	}
	switch { // a negative or non-finite number (zero is "not given")
	case w.cfg.Clients < 0:
		return cfg, fmt.Errorf("--clients %d: want a positive number of virtual users", w.cfg.Clients)
	case notFinite(w.cfg.Rate):
		return cfg, fmt.Errorf("--rate %g: want a positive, finite number of sessions per second", w.cfg.Rate)
	case notFinite(w.cfg.Burstiness) || w.cfg.Burstiness != 0 && w.cfg.Burstiness != 1 && w.cfg.Arrival != "gamma":
		return cfg, fmt.Errorf("--burstiness %g: want a positive, finite shape of --arrival gamma", w.cfg.Burstiness)
	case notFinite(w.TraceSpeed):
		return cfg, fmt.Errorf("--trace-speed %g: want a positive, finite factor", w.TraceSpeed)
	case w.PrefixTokens < 0 || w.PrefixPool < 0:
		return cfg, fmt.Errorf("--prefix-tokens %d, --prefix-pool %d: want positive counts", w.PrefixTokens, w.PrefixPool)
	case w.cfg.Duration < 0:
		return cfg, fmt.Errorf("--duration %s: want a positive duration", w.cfg.Duration)
	case w.cfg.Sessions < 0:
		return cfg, fmt.Errorf("--sessions %d: want a positive number of sessions", w.cfg.Sessions)
	case w.cfg.ScriptTimeScale <= 0:
		return cfg, fmt.Errorf("--time-scale %g: want a positive factor", w.cfg.ScriptTimeScale)
	case w.cfg.SnapshotInterval <= 0:
		return cfg, fmt.Errorf("--snapshot-every %s: want a positive duration", w.cfg.SnapshotInterval)
	}
	if err := w.parseLists(&cfg); err != nil {
		return cfg, err
	}
	return cfg, w.chooseMix(&cfg)
}

// notFinite tells whether a float flag is negative, NaN or infinite.
func notFinite(x float64) bool { return x < 0 || math.IsNaN(x) || math.IsInf(x, 0) }

// parseLists reads the flags written as text: rules allowed, goodput SLOs, headers, dialect
// options, TLS trust, stages, and sets the default shape and length when none is given.
func (w workload) parseLists(cfg *loadgen.Config) error {
	for _, name := range w.Allow {
		rule, err := cfg.Dialects.Rules().Parse(name)
		if err != nil {
			return fmt.Errorf("--allow: %w", err)
		}
		cfg.Allow = append(cfg.Allow, rule)
	}
	for _, expr := range w.GoodputSLOs {
		slo, err := verdict.ParseSessionSLO(expr)
		if err != nil {
			return fmt.Errorf("--goodput-slo: %w", err)
		}
		cfg.GoodputSLOs = append(cfg.GoodputSLOs, slo)
	}
	h, err := loadgen.ParseHeaders(w.Headers)
	if err != nil {
		return fmt.Errorf("--header %w", err)
	}
	cfg.Headers = h
	opts := protocol.Options{} // --option, and the shorthands for options
	for _, kv := range w.Options {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--option %q: want KEY=VALUE", kv)
		}
		opts[k] = v
	}
	for key, v := range map[string]string{"path": w.Path, "stopPath": w.StopPath} {
		if v != "" {
			opts[key] = v
		}
	}
	if len(opts) > 0 {
		cfg.Options = opts
	}
	if cfg.TLS, err = w.tlsConfig(); err != nil {
		return err
	}
	// Recorded: what the Config does not hold, how it trusts the target, the trace.
	extra := map[string]string{}
	if w.CACert != "" {
		extra["ca-cert"] = w.CACert
	}
	if w.Insecure {
		extra["insecure"] = "true"
	}
	if w.Trace != "" {
		extra["trace"] = fmt.Sprintf("%s at %gx", w.Trace, cmp.Or(w.TraceSpeed, 1))
	}
	if len(extra) > 0 {
		cfg.Info.Extra = extra
	}
	if w.Stages != "" {
		st, err := loadgen.ParseStages(w.Stages)
		if err != nil {
			return fmt.Errorf("--stages: %w", err)
		}
		cfg.Stages = st
	}
	if cfg.Clients == 0 && cfg.Rate == 0 && len(cfg.Stages) == 0 && w.Trace == "" {
		cfg.Clients = cmp.Or(w.DefaultClients, loadgen.DefaultClients)
	}
	if cfg.Duration == 0 && cfg.Sessions == 0 && len(cfg.Stages) == 0 && w.Trace == "" {
		cfg.Duration = loadgen.DefaultDuration
	}
	return nil
}

// chooseMix sets the library and the mix: the default or --mix, played as --scenario files,
// an endpoint workload's, restricted to --dialect and --slug.
func (w workload) chooseMix(cfg *loadgen.Config) error {
	if w.ScenarioDir != "" {
		lib, err := scenarios.LoadDir(w.ScenarioDir)
		if err != nil {
			return fmt.Errorf("--scenarios %s: %w", w.ScenarioDir, err)
		}
		cfg.Library = lib
	}
	mix := loadgen.DefaultMix()
	if w.Mix != "" {
		m, err := loadgen.LoadMix(w.Mix)
		if err != nil {
			return fmt.Errorf("--mix: %w", err)
		}
		mix, cfg.MixName = m, w.Mix
	}
	if len(w.ScenarioFiles) > 0 {
		if w.IsEndpoint() {
			return errors.New("--scenario and the endpoint workload (--input-tokens, --output-tokens, --prompt, --prompts, --conversations, --trace): a scripted scenario or a real model's requests, not both")
		}
		base := cmp.Or(cfg.Library, scenarios.Embedded())
		lib, names, err := base.WithFiles(w.ScenarioFiles)
		if err != nil {
			return fmt.Errorf("--scenario: %w", err)
		}
		if mix, err = mix.WithScenarios(names); err != nil {
			return fmt.Errorf("--scenario: %w", err)
		}
		cfg.Library = lib
		cfg.MixName += " with --scenario " + strings.Join(names, ",")
	}
	if w.Dialect != "" {
		if _, err := cfg.Dialects.Lookup(w.Dialect); err != nil {
			return fmt.Errorf("--dialect: %w", err)
		}
	}
	if err := w.endpoint(cfg); err != nil {
		return err
	}
	if cfg.Endpoint != nil {
		m, err := loadgen.EndpointMix(w.Dialect, cmp.Or(w.Model, "endpoint"), cfg.Seed)
		if err != nil {
			return err
		}
		mix, cfg.MixName = m, "endpoint"
	} else if w.Dialect != "" || w.Slug != "" {
		m, err := mix.Restrict(w.Dialect, w.Slug, w.DefaultTargets...)
		if err != nil {
			return err
		}
		mix = m
	}
	cfg.Mix = mix
	if ds := mix.Dialects(); w.Path != "" && len(ds) > 1 {
		return fmt.Errorf("--path %q: the mix has profiles of several dialects (%s); choose one with --dialect", w.Path, strings.Join(ds, ", "))
	}
	return nil
}

// endpoint applies the endpoint flags to cfg: --model and --api-key to the dialect's requests,
// and the workload of --input-tokens, --output-tokens, --prompt, --prompts or --conversations.
func (w workload) endpoint(cfg *loadgen.Config) error {
	// The flags that shape an endpoint request's length fields.
	if f := firstSet(flagSet{"--max-tokens-field", w.MaxTokensField != ""}, flagSet{"--min-tokens", w.MinTokens},
		flagSet{"--ignore-eos", w.IgnoreEOS}, flagSet{"--tokenizer", w.Tokenizer != "" && w.Tokenizer != modeltokens.CL100K},
		flagSet{"--prefix-tokens", w.PrefixTokens > 0}, flagSet{"--prefix-pool", w.PrefixPool > 0}); f != "" && !w.IsEndpoint() {
		return fmt.Errorf("%s shapes an endpoint workload's request: give --input-tokens, --output-tokens, --prompt or --prompts too", f)
	}
	if f := firstSet(flagSet{"--trace-format", w.TraceFormat != ""}, flagSet{"--trace-speed", w.TraceSpeed != 0 && w.TraceSpeed != 1}); f != "" && w.Trace == "" {
		return fmt.Errorf("%s reads a trace: give --trace too", f)
	}
	flag := firstSet(flagSet{"--model", w.Model != ""}, flagSet{"--api-key", w.APIKey != ""}, flagSet{"--input-tokens", w.InputTokens != ""},
		flagSet{"--output-tokens", w.OutputTokens != ""}, flagSet{"--prompts", w.Prompts != ""}, flagSet{"--prompt", w.Prompt != ""},
		flagSet{"--conversations", w.Conversations != ""}, flagSet{"--trace", w.Trace != ""})
	if flag == "" {
		return nil
	}
	spec, ok := cfg.Dialects.Endpoint(w.Dialect)
	if !ok {
		eps := cfg.Dialects.Endpoints() // as "a, b or c"
		list := strings.Join(eps, "")
		if n := len(eps); n > 1 {
			list = strings.Join(eps[:n-1], ", ") + " or " + eps[n-1]
		}
		return fmt.Errorf("%s is for an inference endpoint: give --dialect %s", flag, list)
	}
	if w.Model != "" {
		cfg.Options = protocol.MergeOptions(cfg.Options, protocol.Options{"model": w.Model})
	}
	if w.APIKey != "" {
		name, value := spec.APIKey(w.APIKey)
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
		return errors.New("--mix and the endpoint workload (--input-tokens, --output-tokens, --prompt, --prompts, --conversations, --trace): one or the other")
	}
	e, err := w.endpointWorkload()
	if err != nil {
		return err
	}
	if err := w.endpointFields(e, spec); err != nil {
		return err
	}
	cfg.Endpoint, cfg.NoGroundTruth = e, true
	if len(e.Trace) > 0 && cfg.Sessions == 0 {
		cfg.Sessions = int64(len(e.Trace))
	}
	return nil
}

// endpointWorkload is the workload the prompt flags ask for: one --prompt, --conversations,
// a --prompts file, or synthetic prompts of --input-tokens (512 when none is given).
func (w workload) endpointWorkload() (*endpoint.Workload, error) {
	e := &endpoint.Workload{}
	var err error
	if e.Input, err = endpoint.ParseTokenDist(w.InputTokens); err != nil {
		return nil, fmt.Errorf("--input-tokens %w", err)
	}
	if e.Output, err = endpoint.ParseTokenDist(w.OutputTokens); err != nil {
		return nil, fmt.Errorf("--output-tokens %w", err)
	}
	switch {
	case w.Trace != "":
		if f := firstSet(flagSet{"--input-tokens", w.InputTokens != ""}, flagSet{"--prompts", w.Prompts != ""}, flagSet{"--prompt", w.Prompt != ""}, flagSet{"--conversations", w.Conversations != ""}); f != "" {
			return nil, fmt.Errorf("--trace and %s: the trace's rows are the prompts; give one or the other", f)
		}
		if w.TraceFormat != "" && w.TraceFormat != endpoint.Mooncake && w.TraceFormat != endpoint.Azure {
			return nil, fmt.Errorf("--trace-format %q: want %s or %s", w.TraceFormat, endpoint.Mooncake, endpoint.Azure)
		}
		if e.Trace, err = endpoint.LoadTrace(w.Trace, w.TraceFormat); err != nil {
			return nil, fmt.Errorf("--trace: %w", err)
		}
		for i := range e.Trace {
			e.Trace[i].At = time.Duration(float64(e.Trace[i].At) / cmp.Or(w.TraceSpeed, 1))
		}
		e.Source = w.Trace
	case w.Prompt != "":
		// One prompt is the whole prompt source: with a file or synthetic lengths, which
		// prompt a session sends would be ambiguous.
		if f := firstSet(flagSet{"--prompts", w.Prompts != ""}, flagSet{"--input-tokens", w.InputTokens != ""}, flagSet{"--conversations", w.Conversations != ""}); f != "" {
			return nil, fmt.Errorf("--prompt and %s: --prompt is the one prompt every request sends; give one or the other", f)
		}
		e.Prompts = []endpoint.Prompt{{Messages: []protocol.Message{{Role: "user", Text: w.Prompt}}}}
		e.Source = "--prompt"
	case w.Conversations != "":
		if w.InputTokens != "" || w.Prompts != "" {
			return nil, errors.New("--conversations and --input-tokens or --prompts: the conversations' turns are the prompts; give one or the other")
		}
		if e.Conversations, err = endpoint.LoadConversations(w.Conversations); err != nil {
			return nil, fmt.Errorf("--conversations: %w", err)
		}
		e.Source = w.Conversations
	case w.Prompts != "":
		if w.InputTokens != "" {
			return nil, errors.New("--prompts and --input-tokens: the prompts are the file's; give one or the other")
		}
		if e.Prompts, err = endpoint.LoadPrompts(w.Prompts); err != nil {
			return nil, fmt.Errorf("--prompts: %w", err)
		}
		e.Source = w.Prompts
	case e.Input.Kind == "":
		e.Input, _ = endpoint.ParseTokenDist(strconv.Itoa(endpoint.DefaultInputTokens))
	}
	if f := firstSet(flagSet{"--prefix-tokens", w.PrefixTokens > 0}, flagSet{"--prefix-pool", w.PrefixPool > 0}); f != "" && (len(e.Prompts) > 0 || len(e.Conversations) > 0 || len(e.Trace) > 0) {
		return nil, fmt.Errorf("%s shapes synthetic prompts: not with --prompt, --prompts, --conversations or --trace", f)
	} else if w.PrefixPool > 0 && w.PrefixTokens == 0 {
		return nil, errors.New("--prefix-pool draws among prefixes of --prefix-tokens: give --prefix-tokens too")
	}
	e.Tokenizer, e.PrefixTokens, e.PrefixPool = w.Tokenizer, w.PrefixTokens, w.PrefixPool
	if err := e.Check(); err != nil {
		return nil, fmt.Errorf("--tokenizer: %w", err)
	}
	return e, nil
}

// endpointFields applies --max-tokens-field, --min-tokens and --ignore-eos to e, as far as the
// dialect's wire takes them (spec); min_tokens needs a length to equal.
func (w workload) endpointFields(e *endpoint.Workload, spec protocol.EndpointSpec) error {
	switch w.MaxTokensField {
	case "", protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields:
	default:
		return fmt.Errorf("--max-tokens-field %q: want %s, %s or %s", w.MaxTokensField,
			protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields)
	}
	field := ""
	if w.MaxTokensField != "" && !slices.Contains(spec.MaxTokensFields, w.MaxTokensField) {
		field = "--max-tokens-field"
	} else if !spec.VLLMFields {
		field = firstSet(flagSet{"--min-tokens", w.MinTokens}, flagSet{"--ignore-eos", w.IgnoreEOS})
	}
	if field != "" {
		return fmt.Errorf("%s is a field of the OpenAI chat wire: --dialect %s sends max_tokens alone", field, w.Dialect)
	}
	if w.MinTokens && e.Output.Kind == "" && len(e.Prompts) == 0 && len(e.Conversations) == 0 {
		return errors.New("--min-tokens sends min_tokens equal to max_tokens: give --output-tokens (or a --prompts file with reply lengths)")
	}
	e.MaxTokensField, e.MinTokens, e.IgnoreEOS = w.MaxTokensField, w.MinTokens, w.IgnoreEOS
	return nil
}

// flagSet is a flag's name and whether it was given.
type flagSet struct {
	name string
	set  bool
}

// firstSet is the name of the first flag given ("" when none).
func firstSet(flags ...flagSet) string {
	for _, f := range flags {
		if f.set {
			return f.name
		}
	}
	return ""
}

// tlsConfig is the TLS configuration --ca-cert or --insecure ask for (nil: neither, the
// system's roots).
func (w workload) tlsConfig() (*tls.Config, error) {
	switch {
	case w.CACert != "" && w.Insecure:
		return nil, errors.New("--ca-cert and --insecure: verify against the CA file, or skip verification, not both")
	case w.Insecure:
		return &tls.Config{InsecureSkipVerify: true}, nil // the user asked: --insecure
	case w.CACert != "":
		return TrustPEM("--ca-cert", w.CACert)
	}
	return nil, nil
}

// TrustPEM is a TLS configuration whose roots are the certificates in the PEM file path,
// given by flag.
func TrustPEM(flag, path string) (*tls.Config, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", flag, path)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// WithExtra is extra with more's settings added (a new map).
func WithExtra(extra, more map[string]string) map[string]string {
	out := maps.Clone(more)
	maps.Copy(out, extra)
	return out
}

// ResolveModel gives an endpoint workload without a model one in w.Model, for every config made
// from w after: the only one target lists (DiscoverModel), or the mock's for target "".
func (w *Flags) ResolveModel(cfg loadgen.Config, target string) error {
	if cfg.Endpoint == nil || w.Model != "" || cfg.Options["model"] != nil {
		return nil
	}
	if target == "" {
		w.Model = mockprovider.Model
		return nil
	}
	cfg.Target = target
	if err := w.DiscoverModel(&cfg); err != nil {
		return err
	}
	w.Model, _ = cfg.Options["model"].(string)
	return nil
}

// DiscoverModel sets the model of an endpoint workload given none: the only one the target's
// GET /v1/models lists (said on stderr); none or several is an error naming them.
func (w *Flags) DiscoverModel(cfg *loadgen.Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ids, err := loadgen.ListModels(ctx, *cfg)
	switch {
	case err != nil:
		return fmt.Errorf("no --model, and the target's models could not be listed: %v; give --model", err)
	case len(ids) == 0:
		return fmt.Errorf("no --model, and GET %s/v1/models lists none; give --model", loadgen.RedactURL(cfg.Target))
	case len(ids) > 1:
		return fmt.Errorf("no --model, and the target serves %d: %s; choose one with --model", len(ids), strings.Join(ids, ", "))
	}
	cfg.Options = protocol.MergeOptions(cfg.Options, protocol.Options{"model": ids[0]})
	m, err := loadgen.EndpointMix(w.Dialect, ids[0], cfg.Seed)
	if err != nil {
		return err
	}
	cfg.Mix = m
	if !w.Quiet {
		fmt.Fprintf(os.Stderr, "model: %s (the only one GET /v1/models lists)\n", ids[0])
	}
	return nil
}

// OutDir is --out's directory, "" for "-" (keep nothing), refused when it cannot be written.
func OutDir(flag string) (string, error) {
	if flag == "-" {
		return "", nil
	}
	return flag, CheckWritable("--out", flag)
}

// CheckWritable refuses, before any load, a results directory that cannot be written (a file,
// /proc, a read-only mount), by a temporary file in its nearest existing ancestor.
func CheckWritable(flag, dir string) error {
	at := filepath.Clean(dir)
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s %s: %s is not a directory", flag, dir, at)
			}
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			return fmt.Errorf("%s %s: %v", flag, dir, err)
		}
		at = parent
	}
	f, err := os.CreateTemp(at, ".streambench-write-check-*")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write results there: %v", flag, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// SizeToMachine gives run's workload its default clients for cores cores (loadgen.ClientsForCores)
// and returns the line saying so, or "" when the flags shape the load.
func (w *Flags) SizeToMachine(cores int) string {
	w.DefaultClients = loadgen.ClientsForCores(cores)
	if w.cfg.Clients != 0 || w.cfg.Rate != 0 || w.Stages != "" || w.Trace != "" {
		return ""
	}
	return fmt.Sprintf("clients: %d, sized to this machine's %d cores (%d a core, at most %d): the generator shares them with the stack "+
		"it starts (the mock, the runtime), and more clients would measure a queue for the CPU, not the target; --clients N to choose",
		w.DefaultClients, cores, loadgen.ClientsPerCore, loadgen.DefaultClients)
}

// AddMetricsAddr registers --metrics-addr (load and run).
func AddMetricsAddr(fs *pflag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve live Prometheus metrics at http://ADDR/metrics while the run lasts, e.g. :9090\n"+
		"(open streams, sessions by outcome, violations by rule, TTFT and chunk-gap histograms; deploy/grafana has a dashboard)")
}

// AddRepeat registers --repeat (load and run).
func AddRepeat(fs *pflag.FlagSet) *int {
	return fs.Int("repeat", 1, "play the workload N times (run: each on a fresh mock and runtime; load: against the same target), each run kept\n"+
		"in OUT/RUN-ID/RUN-ID-I with its report, then print each headline figure's median and spread over them (OUT/RUN-ID/repeats.json,\n"+
		"repeats.md; compare takes two such directories); fails when any run failed")
}

// AddOut registers --out (load and run): where the results go, "-" for nowhere.
func AddOut(fs *pflag.FlagSet) *string {
	return fs.String("out", "results", "write results to OUT/RUN-ID (summary.json, histograms.hlog, timeline.csv, violations.jsonl, records.jsonl, plots, report.html,\n"+
		"report.md), written as the run goes; - keeps nothing, streams records.jsonl's lines to stdout as requests end and prints the summary to stderr")
}
