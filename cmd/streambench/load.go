package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/report"
)

// config is the workload flags' loadgen.Config; an error is bad input (exit 104).
func config(w *workload.Flags) (loadgen.Config, error) {
	cfg, err := w.Config()
	if err != nil {
		return cfg, usageError("%v", err)
	}
	return cfg, nil
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
	w := workload.Add(fs)
	w.AddEndpoint()
	sh := workload.AddShard(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w.APIKeyFromEnv()
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
	cfg, err := config(w)
	if err != nil {
		return err
	}
	cfg.Target, cfg.MockURL, cfg.RuntimeMetricsURL = strings.TrimSuffix(*target, "/"), strings.TrimSuffix(*mock, "/"), *metrics
	if cfg.Endpoint != nil && w.Model == "" && cfg.Options["model"] == nil {
		if err := discoverModel(&cfg, w); err != nil {
			return err
		}
	}
	if err := sh.Apply(&cfg, os.Getenv); err != nil {
		return usageError("%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	dir, err := outDir(*out)
	if err != nil {
		return err
	}
	if !*noPreflight {
		if err := preflight(cfg, w.Quiet); err != nil {
			return err
		}
	}
	return playAndFinish(cfg, dir, *metricsAddr, w.Quiet)
}

// resolveModel gives an endpoint workload without a model one, once, in w.Model (so every
// config made from w after has it): against target the only model GET /v1/models lists
// (discoverModel), against the mock run and sweep start (target "") the mock's.
func resolveModel(cfg loadgen.Config, w *workload.Flags, target string) error {
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
func discoverModel(cfg *loadgen.Config, w *workload.Flags) error {
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
	if !w.Quiet {
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

// executeLoad plays cfg through the console (console.Play): progress, tally, Ctrl-C.
func executeLoad(cfg loadgen.Config, quiet bool) (*measure.Run, *console.Tally, error) {
	run, table, err := console.Play(cfg, quiet)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
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
func finishRun(run *measure.Run, table *console.Tally, out string, render func(dir string) error) error {
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
