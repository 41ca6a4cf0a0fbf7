package main

import (
	"os"
	"strings"

	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/protocol/dialects"
)

// config is the workload flags' loadgen.Config; an error is bad input.
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
	fs := newFlagSet("load", loadUsage(), workload.Glossary)
	target := fs.String("target", "", "the runtime's base URL, e.g. http://127.0.0.1:8080 (required)")
	mock := fs.String("mock", "", "the mock provider's base URL: its session records give cancel latency, R-abort, and the provider requests and retries per scenario (summary.json provider_requests)")
	metrics := fs.String("runtime-metrics", "", "the runtime's Prometheus endpoint for the leak check (default TARGET/metrics; - to skip; an absent or unreadable one is reported as not checked, not a failure)")
	engine := fs.String("engine-metrics", "", "an inference engine's Prometheus endpoint (vLLM, SGLang, TGI), e.g. http://127.0.0.1:8000/metrics, read every second while the load runs:\n"+
		"its running, waiting and KV-cache gauges go to summary.json (engine_metrics) and are plotted under time to first chunk over the run")
	out := workload.AddOut(fs)
	repeat := workload.AddRepeat(fs)
	noPreflight := fs.Bool("no-preflight", false, "skip the preflight. Without it, load first sends one request per dialect and target (marked "+loadgen.PreflightHeader+": 1);\n"+
		"a refused connection, a DNS or TLS failure or a 404/405 stops it there, exit 1, before any load")
	metricsAddr := workload.AddMetricsAddr(fs)
	w := workload.Add(fs)
	w.AddEndpoint()
	sh := workload.AddShard(fs)
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	w.APIKeyFromEnv()
	defer hrtimer.SpareProcs()()
	if *repeat < 1 {
		return usageError("--repeat %d: want 1 or more runs", *repeat)
	}
	if *target == "" {
		return usageError("--target is required (the runtime's base URL)")
	}
	for _, u := range []struct{ flag, value string }{{"--target", *target}, {"--mock", *mock}, {"--runtime-metrics", *metrics}, {"--engine-metrics", *engine}} {
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
	if *engine != "-" {
		cfg.EngineMetricsURL = *engine
	}
	if cfg.Endpoint != nil && w.Model == "" && cfg.Options["model"] == nil {
		if err := w.DiscoverModel(&cfg); err != nil {
			return usageError("%v", err)
		}
	}
	if err := sh.Apply(&cfg, os.Getenv); err != nil {
		return usageError("%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usageError("%v", err)
	}
	dir, err := workload.OutDir(*out)
	if err != nil {
		return usageError("%v", err)
	}
	if !*noPreflight {
		if err := console.Preflight(cfg, w.Quiet); err != nil {
			return err
		}
	}
	return console.PlayRepeated(*repeat, cfg, dir, *metricsAddr, w.Quiet, nil)
}
