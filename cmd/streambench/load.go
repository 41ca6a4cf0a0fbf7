package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/report"
)

// workloadFlags are the flags load and run share: what to play and how hard.
type workloadFlags struct {
	loadgen.Workload
	quiet bool
	fs    *pflag.FlagSet
}

// addWorkloadFlags registers the workload flags on fs (load and run share them).
func addWorkloadFlags(fs *pflag.FlagSet) *workloadFlags {
	w := &workloadFlags{fs: fs}
	fs.StringVar(&w.Mix, "mix", "", "workload mix YAML file (default: the embedded mix)")
	fs.StringVar(&w.ScenarioDir, "scenarios", "", "load scenarios from this directory instead of the embedded library")
	fs.StringSliceVar(&w.ScenarioFiles, "scenario", nil, "play the scenario YAML `FILE`s as the whole mix, equally weighted, through the mix's profiles (repeatable or FILE,FILE;\n"+
		"docs/SCENARIOS.md). run and sweep hand them to the mock they start; a mock you started must be given the same files\n"+
		"(streambench mock --scenario FILE), or its sessions fail with its \"unknown scenario\" error")
	fs.StringVar(&w.Dialect, "dialect", "", "only this client dialect: "+strings.Join(dialects.Default().Names(), ", ")+" (default: the mix's)")
	fs.StringVar(&w.Slug, "slug", "", "send every session to this deployment slug / workflow id / agent id; a --dialect the mix has no profile for (ag-ui, langgraph, ai-sdk in the default mix)\nsends to one named after the dialect unless given: the reference runtime (run) knows openai-all, anthropic-all, openai-none, … (its 404 lists them)")
	fs.StringArrayVar(&w.Options, "option", nil, "a dialect option KEY=VALUE for every profile whose dialect takes it (repeatable; over the mix's);\n"+
		"the dialects and their options:\n"+dialects.Default().Help())
	fs.BoolVar(&w.NoGroundTruth, "no-ground-truth", false, "judge timing and structure only: the target's content is not the script's (a real model), so no content rule applies")
	fs.Uint64Var(&w.Seed, "seed", 0, "session sequence seed (default: the mix's)")
	fs.IntVar(&w.Clients, "clients", 0, fmt.Sprintf("closed loop: virtual users, each running sessions back to back (default when no --rate or --stages: load %d;\n"+
		"run %d per core of this machine, at most %d, as its mock and runtime share the cores);\n"+
		"a user ignores the Retry-After of a 429 or 503 and starts its next session at once, unless --honor-retry-after",
		loadgen.DefaultClients, loadgen.ClientsPerCore, loadgen.DefaultClients))
	fs.DurationVar(&w.ThinkTime, "think-time", 0, "closed loop: pause between a user's sessions")
	fs.BoolVar(&w.HonorRetryAfter, "honor-retry-after", false, fmt.Sprintf("closed loop: after a 429 or 503 with Retry-After, a user waits that long (at most %s, never past the run's end)\n"+
		"before its next session, when longer than --think-time; the open loop (--rate) keeps its schedule", loadgen.MaxRetryAfter))
	fs.Float64Var(&w.Rate, "rate", 0, "open loop: sessions started per second")
	fs.StringVar(&w.Arrival, "arrival", loadgen.DefaultArrival, "open loop: constant or poisson arrivals")
	fs.IntVar(&w.MaxInflight, "max-inflight", loadgen.DefaultMaxInflight, "open loop: most open streams; starts beyond it are dropped and counted")
	fs.StringVar(&w.Stages, "stages", "", "ramp as DURATION:TARGET,... e.g. 30s:1000,60s:1000,10s:0 (virtual users; session rates with --rate-stages)")
	fs.BoolVar(&w.RateStages, "rate-stages", false, "--stages targets are session rates (open loop) instead of virtual users")
	fs.DurationVar(&w.Duration, "duration", 0, fmt.Sprintf("stop starting sessions after this long (default %s when neither --sessions nor --stages)", loadgen.DefaultDuration))
	fs.Int64Var(&w.Sessions, "sessions", 0, "stop after this many sessions")
	fs.DurationVar(&w.Warmup, "warmup", 0, "sessions started in this first period are checked but not measured")
	fs.DurationVar(&w.Grace, "grace", loadgen.DefaultGrace, "after the last start, how long in-flight streams may finish before they are cancelled (outcome cut).\n"+
		longestRunHelp)
	fs.DurationVar(&w.StreamTimeout, "stream-timeout", loadgen.DefaultStreamTimeout, "longest a single session may take: one still delivering then ends as outcome over_time (an error, not a violation);\n"+
		"it never lengthens the run: a stream still open when --grace ends is cut.\n"+longestRunHelp)
	fs.DurationVar(&w.ReplayBudget, "replay-budget", loadgen.DefaultReplayBudget, "after the load, how long the replays of offending sessions (whose frames make the violation samples) may take\n"+
		"together; the sessions not replayed for lack of it are counted (summary.json replays) and named in a warning; 0: none")
	fs.DurationVar(&w.IdleTimeout, "idle-timeout", 0, "end a stream silent this long (no byte; comments and keep-alives count) as outcome stalled (default: never, as a legacy client\n"+
		"or a long tool may be silent for minutes; a stream --stream-timeout or the run's end finds silent for 10s is stalled all the same)")
	fs.IntVar(&w.BreakerSessions, "breaker-sessions", loadgen.DefaultBreakerSessions, "circuit breaker: when the first N sessions all end in the same error (the same outcome and text but for\n"+
		"the session id and the URLs), stop starting sessions and say why (the run fails); 0: never")
	fs.DurationVar(&w.LeakGrace, "leak-grace", loadgen.DefaultLeakGrace, "after the load drained, how long gauges may take to return to their baseline")
	fs.Float64Var(&w.LeakPerStream, "leak-per-stream", loadgen.DefaultLeakPerStream, "goroutines, descriptors and handles per peak open stream the runtime and mock may keep after the run,\n"+
		"on top of 16, for pooled idle provider connections (HTTP/1.1 provider pools keep one connection, two goroutines, per stream they carried at once: 2)")
	fs.BoolVar(&w.NoLeakCheck, "no-leak-check", false, "skip the leak check")
	fs.DurationVar(&w.SnapshotEvery, "snapshot-every", loadgen.DefaultSnapshotInterval, "with --out: write the results so far this often, marked incomplete, so a killed run leaves them")
	fs.BoolVar(&w.HTTP2, "http2", false, "use HTTP/2 (h2c for http://, h2 by ALPN for https://) instead of one HTTP/1.1 connection per stream")
	fs.StringArrayVar(&w.Headers, "header", nil, "send this header on every request to the target, as 'Name: value' (repeatable), e.g.\n"+
		"--header \"x-runtime-internal-token: $TOKEN\"; values of Authorization, Cookie and *token*/*key*/*secret*\n"+
		"headers are recorded and printed as "+loadgen.Redacted+", and so is each part of them (the token after Bearer, any part of\n"+
		"8 bytes or more) wherever it appears (an error body, a redirect, a frame), as is a target URL's user:password")
	fs.StringArrayVar(&w.Redact, "redact", nil, "a secret to hide as "+loadgen.Redacted+" in everything written or printed, whatever its length (repeatable)")
	fs.StringVar(&w.Path, "path", "", "stream path template (--option path=...), e.g. /internal/workflow/agent/{agent}/stream; placeholders:\n"+
		"compose {agent} (default "+compose.DefaultPath+"), sim-chat {slug} (default "+simchat.DefaultPath+"),\n"+
		"sim-canvas {workflow} (default "+simcanvas.DefaultPath+"); needs a single dialect (--dialect)")
	fs.StringVar(&w.StopPath, "stop-path", "", "compose stop path template (--option stopPath=...), placeholders {agent} and {run} (default\n"+
		compose.DefaultStopPath+"; with a --path ending in /stream, that prefix + /runs/{run}/stop)")
	fs.StringVar(&w.CACert, "ca-cert", "", "https: trust the certificates in this PEM file instead of the system's roots")
	fs.BoolVar(&w.Insecure, "insecure", false, "https: do not verify the target's certificate")
	fs.Float64Var(&w.TimeScale, "time-scale", 1, "the mock's time scale (scripted client triggers scale with it)")
	fs.StringVar(&w.RunID, "run-id", "", "name of the run (default: time-based); results go to OUT/RUN-ID")
	fs.BoolVar(&w.quiet, "quiet", false, "no progress output")
	fs.StringArrayVar(&w.Allow, "allow", nil, "a rule whose violations are a known finding, e.g. R-abort: counted and shown as allowed, not failing the run (repeatable; adds to the mix's allow:)")
	fs.StringArrayVar(&w.GoodputSLOs, "goodput-slo", nil, "a per-session objective for goodput, METRIC OP LIMIT, e.g. 'ttft<500ms' or 'tpot<50ms' (repeatable):\n"+
		"goodput counts the sessions that succeeded and met every one; metrics: "+measure.SessionSLOMetricNames())
	return w
}

// addEndpointFlags registers the inference endpoint's flags (load, run and sweep: --model,
// --api-key, --input-tokens, --output-tokens, --prompt, --prompts, --conversations).
func addEndpointFlags(w *workloadFlags) {
	fs := w.fs
	fs.StringVar(&w.Model, "model", "", "openai-chat, anthropic-messages, openai-responses: the request's model (--option model=...); with an endpoint workload and none given,\n"+
		"the only model GET TARGET/v1/models lists (several: an error listing them)")
	fs.StringVar(&w.APIKey, "api-key", "", "openai-chat, anthropic-messages, openai-responses: the API key, sent as Authorization: Bearer KEY (the OpenAI wires) or x-api-key: KEY\n"+
		"(anthropic-messages); default $OPENAI_API_KEY or $ANTHROPIC_API_KEY by the dialect. Never written or printed ("+loadgen.Redacted+")")
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
}

// longestRunHelp is how long a run can take, in --help of --grace and --stream-timeout.
const longestRunHelp = "A run lasts at most --duration (or the stages) + --grace + --replay-budget (with --sessions and no --duration: until its last\n" +
	"session starts, a closed-loop user's sessions each up to --stream-timeout one after another, then --grace), then the post-run checks:\n" +
	"with --mock the cancel check (up to 15 s), the leak check (up to --leak-grace + 10 s); then it writes its results"

// scenarioFiles is --scenario as absolute paths, for a child mock whose working directory
// may differ; a path that cannot be made absolute is passed as given.
func (w *workloadFlags) scenarioFiles() []string {
	out := make([]string, len(w.ScenarioFiles))
	for i, f := range w.ScenarioFiles {
		if abs, err := filepath.Abs(f); err == nil {
			f = abs
		}
		out[i] = f
	}
	return out
}

// config turns the flags into a loadgen.Config (without target, mock and metrics URLs).
func (w *workloadFlags) config() (loadgen.Config, error) {
	if w.fs.Lookup("prompt") != nil && w.fs.Changed("prompt") && strings.TrimSpace(w.Prompt) == "" {
		return loadgen.Config{}, usageError("--prompt %q: want the user's message, a non-empty text", w.Prompt)
	}
	// A zero given on purpose is not the default the zero stands for otherwise: --clients 0
	// would otherwise run the default load.
	for _, name := range []string{"clients", "rate", "duration", "sessions", "grace", "stream-timeout"} {
		if f := w.fs.Lookup(name); f != nil && f.Changed && isZeroFlag(f.Value.String()) {
			return loadgen.Config{}, usageError("--%s %s: want a positive value (leave the flag out for the default)", name, f.Value.String())
		}
	}
	cfg, err := w.Workload.Config()
	if err != nil {
		return cfg, usageError("%v", err)
	}
	return cfg, nil
}

// isZeroFlag tells whether a numeric or duration flag's value reads as zero.
func isZeroFlag(v string) bool {
	if d, err := time.ParseDuration(v); err == nil {
		return d == 0
	}
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f == 0
}

// loadUsage is load's usage line; its dialects are the registry's, every one of them.
func loadUsage() string {
	return "load --target URL [--dialect " + strings.Join(dialects.Default().Names(), "|") + "] [--slug S] [--option KEY=VALUE] [--mock URL] [--runtime-metrics URL] [--mix FILE] [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--out DIR] ..."
}

// runLoad runs a load against any runtime.
func runLoad(args []string) error {
	fs := newFlagSet("load", loadUsage())
	withGlossary(fs)
	target := fs.String("target", "", "the runtime's base URL, e.g. http://127.0.0.1:8080 (required)")
	mock := fs.String("mock", "", "the mock provider's base URL: its session records give cancel latency, R-abort, and the provider requests and retries per scenario (summary.json provider_requests)")
	metrics := fs.String("runtime-metrics", "", "the runtime's Prometheus endpoint for the leak check (default TARGET/metrics; - to skip; an absent or unreadable one is reported as not checked, not a failure)")
	out := fs.String("out", defaultOut, outHelp)
	noPreflight := fs.Bool("no-preflight", false, "skip the preflight. Without it, load first sends one request per dialect and target (marked "+loadgen.PreflightHeader+": 1);\n"+
		"a refused connection, a DNS or TLS failure or a 404/405 stops it there, exit 1, before any load")
	metricsAddr := addMetricsAddrFlag(fs)
	w := addWorkloadFlags(fs)
	addEndpointFlags(w)
	sh := addShardFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w.apiKeyFromEnv()
	defer hrtimer.SpareProcs()()
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if *target == "" {
		return usageError("--target is required (the runtime's base URL)")
	}
	for _, u := range []struct{ flag, value string }{{"--target", *target}, {"--mock", *mock}, {"--runtime-metrics", *metrics}} {
		if u.value == "" || u.value == "-" {
			continue
		}
		if err := loadgen.CheckURL(u.flag, u.value); err != nil {
			return usageError("%v", err)
		}
	}
	cfg, err := w.config()
	if err != nil {
		return err
	}
	cfg.Target, cfg.MockURL, cfg.RuntimeMetricsURL = strings.TrimSuffix(*target, "/"), strings.TrimSuffix(*mock, "/"), *metrics
	if cfg.Endpoint != nil && w.Model == "" && cfg.Options["model"] == nil {
		if err := discoverModel(&cfg, w); err != nil {
			return err
		}
	}
	if err := sh.apply(&cfg, os.Getenv); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	dir, err := outDir(*out)
	if err != nil {
		return err
	}
	if !*noPreflight {
		if err := preflight(cfg, w.quiet); err != nil {
			return err
		}
	}
	return playAndFinish(cfg, dir, *metricsAddr, w.quiet)
}

// apiKeyFromEnv sets --api-key from the dialect's environment variable (loadgen.APIKeyEnv)
// when the flag was not given.
func (w *workloadFlags) apiKeyFromEnv() {
	if w.APIKey == "" && !w.fs.Changed("api-key") {
		if env := loadgen.APIKeyEnv(w.Dialect); env != "" {
			w.APIKey = os.Getenv(env)
		}
	}
}

// resolveModel gives an endpoint workload without a model one, once, in w.Model (so every
// config made from w after has it): against target the only model GET /v1/models lists
// (discoverModel), against the mock run and sweep start (target "") the mock's.
func resolveModel(cfg loadgen.Config, w *workloadFlags, target string) error {
	if cfg.Endpoint == nil || w.Model != "" || cfg.Options["model"] != nil {
		return nil
	}
	if target == "" {
		w.Model = mockprovider.Model
		return nil
	}
	cfg.Target = target
	if err := discoverModel(&cfg, w); err != nil {
		return err
	}
	w.Model, _ = cfg.Options["model"].(string)
	return nil
}

// discoverModel sets the model of an endpoint workload given none: the only one the target's
// GET /v1/models lists; none or several is bad input, naming them.
func discoverModel(cfg *loadgen.Config, w *workloadFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ids, err := loadgen.ListModels(ctx, *cfg)
	switch {
	case err != nil:
		return usageError("no --model, and the target's models could not be listed: %v; give --model", err)
	case len(ids) == 0:
		return usageError("no --model, and GET %s/v1/models lists none; give --model", loadgen.RedactURL(cfg.Target))
	case len(ids) > 1:
		return usageError("no --model, and the target serves %d: %s; choose one with --model", len(ids), strings.Join(ids, ", "))
	}
	if cfg.Options == nil {
		cfg.Options = map[string]any{}
	}
	cfg.Options["model"] = ids[0]
	m, err := loadgen.EndpointMix(w.Dialect, ids[0], cfg.Seed)
	if err != nil {
		return err
	}
	cfg.Mix = m
	if !w.quiet {
		fmt.Fprintf(os.Stderr, "model: %s (the only one GET /v1/models lists)\n", ids[0])
	}
	return nil
}

// defaultOut and outHelp are --out of load and run.
const (
	defaultOut = "results"
	outHelp    = "write results to OUT/RUN-ID (summary.json, histograms.hlog, timeline.csv, violations.jsonl, plots, report.html,\n" +
		"report.md), written as the run goes; - keeps nothing"
)

// outDir is --out's directory, "" for "-" (keep nothing).
func outDir(flag string) (string, error) {
	if flag == "-" {
		return "", nil
	}
	return flag, checkWritable("--out", flag)
}

// checkWritable refuses, before any load, a results directory that cannot be written (a
// file, /proc, a read-only mount): found only when the run's results were due, it cost the run.
// It creates nothing: a temporary file in the nearest existing ancestor of dir, removed at once.
func checkWritable(flag, dir string) error {
	at := filepath.Clean(dir)
	for {
		fi, err := os.Stat(at)
		if err == nil {
			if !fi.IsDir() {
				return usageError("%s %s: %s is not a directory", flag, dir, at)
			}
			break
		}
		parent := filepath.Dir(at)
		if parent == at {
			return usageError("%s %s: %v", flag, dir, err)
		}
		at = parent
	}
	f, err := os.CreateTemp(at, ".streambench-write-check-*")
	if err != nil {
		return usageError("%s %s: cannot write results there: %v", flag, dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// preflight runs loadgen.Preflight with Ctrl-C cancelling it: a route that cannot work is
// the run's failure (exit 1), said in one line; a route without an answer in time is a
// warning.
func preflight(cfg loadgen.Config, quiet bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	warnings, err := loadgen.Preflight(ctx, cfg)
	if ctx.Err() != nil {
		return &exitError{code: exitFailure, err: errors.New("interrupted during the preflight: no load was sent")}
	}
	if !quiet {
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "warning: %s\n", w)
		}
	}
	var pe *loadgen.PreflightError
	switch {
	case errors.As(err, &pe):
		return &exitError{code: exitFailure, err: pe}
	case err != nil:
		return usageError("%v", err)
	}
	return nil
}

// playAndFinish is the end of load and run: cfg played with snapshots into out and live
// metrics on metricsAddr, then finishRun with the report rendered.
func playAndFinish(cfg loadgen.Config, out, metricsAddr string, quiet bool) error {
	if w := snapshotWriter(out, quiet); w != nil {
		cfg.Outputs = append(cfg.Outputs, w)
	}
	_, stopMetrics, err := startLiveMetrics(metricsAddr, &cfg)
	if err != nil {
		return err
	}
	defer stopMetrics()
	run, table, err := executeLoad(cfg, quiet)
	if err != nil {
		return err
	}
	return finishRun(run, table, out, report.Render)
}

// executeLoad runs cfg with progress output and Ctrl-C handling: the first interrupt stops new
// sessions and drains, the second cancels in-flight streams; results are returned either way.
func executeLoad(cfg loadgen.Config, quiet bool) (*measure.Run, *LiveTally, error) {
	interrupt := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintf(os.Stderr, "\ninterrupted: no new sessions; draining in-flight streams for up to %s (Ctrl-C again to stop now)\n", cfg.Grace)
				close(interrupt)
				continue
			}
			fmt.Fprintln(os.Stderr, "\ninterrupted again: cancelling in-flight streams and writing what was measured")
			cancel()
			return
		}
	}()
	cfg.Interrupt = interrupt
	table := NewLiveTally()
	// After the outputs the caller set (live metrics), so the run calls those first.
	cfg.Outputs = append(cfg.Outputs, loadgen.SessionEndFunc(table.Add))
	var prog *ProgressView
	if !quiet {
		prog = NewProgressView(os.Stderr)
		cfg.Outputs = append(cfg.Outputs, loadgen.ProgressFunc(prog.Update))
	}
	cpuBefore := loadgen.ProcessCPU()
	run, err := loadgen.Run(ctx, cfg)
	if prog != nil {
		prog.Close()
	}
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	table.CPU = loadgen.ProcessCPU() - cpuBefore
	return run, table, nil
}

// snapshotWriter is the run's output that writes each snapshot of it where its results go and
// says where once; nil without --out.
func snapshotWriter(out string, quiet bool) loadgen.SnapshotOutput {
	if out == "" {
		return nil
	}
	return loadgen.SnapshotFunc(measure.SnapshotWriter(out, func(dir string) {
		if !quiet {
			fmt.Fprintf(os.Stderr, "results: %s (written as the run goes)\n", dir)
		}
	}))
}

// finishRun writes the results, prints the summary and turns the verdict into the exit code.
// render, when set, renders the report into the run's directory. The results are written
// before anything is printed, and a failed print (a reader gone: `run | head`) is said on
// stderr but changes neither the files nor the exit code: the verdict decides that.
func finishRun(run *measure.Run, table *LiveTally, out string, render func(dir string) error) error {
	dir := ""
	if out != "" {
		dir = measure.RunDir(out, &run.Summary)
		if err := measure.WriteRun(dir, run); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		if run.Summary.Shard != nil {
			// A shard's report would be a fraction of the run's: the merged run has the report.
			render = nil
		}
		if render != nil {
			if err := render(dir); err != nil {
				return fmt.Errorf("render report in %s: %w", dir, err)
			}
		}
	}
	err := report.WriteSummary(os.Stdout, run, table.SessionTally)
	if err == nil && dir != "" {
		_, err = fmt.Printf("results: %s\n", dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "streambench: printing the summary: %v (the results are written whole)\n", err)
	}
	if !run.Summary.Verdict.Pass {
		return &exitError{code: exitFailure, err: fmt.Errorf("run failed: %s", strings.Join(run.Summary.Verdict.Reasons, "; "))}
	}
	return nil
}
