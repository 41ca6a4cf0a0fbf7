package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/hrtimer"
)

// runRun is the main job: the load against a mock and runtime it starts and stops.
func runRun(args []string) error {
	fs := newFlagSet("run", "run [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--mix FILE] [--fault NAME]... [--in-process] [--tls] [--out DIR] ...\n"+
		"an endpoint workload on the mock alone: run --dialect openai-chat|anthropic-messages --input-tokens SPEC --output-tokens SPEC ...",
		workload.Glossary)
	out := workload.AddOut(fs)
	repeat := workload.AddRepeat(fs)
	faults := fs.StringArray("fault", nil, "pass a fault switch to the runtime (repeatable):\n"+agentruntime.FaultHelp())
	inProcess := fs.Bool("in-process", false, "run the mock and the runtime inside this process (default: only for small runs, else child processes)")
	metricsAddr := workload.AddMetricsAddr(fs)
	useTLS := fs.Bool("tls", false, "the runtime serves HTTPS (HTTP/1.1, and h2 with --http2) with a self-signed certificate made at start, which the generator trusts")
	w := workload.Add(fs)
	w.AddEndpoint()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w.APIKeyFromEnv()
	// A --dialect the mix has no profile for (ag-ui, langgraph) plays the runtime's agents.
	w.DefaultTargets = []string{"openai-all", "anthropic-all"}
	if note := w.SizeToMachine(runtime.NumCPU()); note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	defer hrtimer.SpareProcs()()
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if *repeat < 1 {
		return usageError("--repeat %d: want 1 or more runs", *repeat)
	}
	parsedFaults, err := agentruntime.ParseFaults(*faults)
	if err != nil {
		return usageError("--fault: %v", err)
	}
	cfg, err := config(w)
	if err != nil {
		return err
	}
	var runtimeFlags []string
	if len(*faults) > 0 {
		runtimeFlags = append(runtimeFlags, "--fault")
	}
	if *useTLS {
		runtimeFlags = append(runtimeFlags, "--tls")
	}
	if _, err := console.MockAlone(&cfg, runtimeFlags...); err != nil {
		return usageError("%v", err)
	}
	if cfg.Endpoint != nil {
		if err := w.ResolveModel(cfg, ""); err != nil {
			return err
		}
		if cfg, err = config(w); err != nil {
			return err
		}
	}
	local := *inProcess
	if !fs.Changed("in-process") {
		local = cfg.Small()
	}
	if *useTLS && (w.CACert != "" || w.Insecure) {
		return usageError("--tls trusts the runtime's own certificate; --ca-cert and --insecure are for load against other targets")
	}
	where := "child processes"
	if local {
		where = "in process"
	}
	cfg.Info.Faults = parsedFaults.Names()
	cfg.Info.Extra = workload.WithExtra(cfg.Info.Extra, map[string]string{"stack": where, "time-scale": fmt.Sprint(cfg.ScriptTimeScale)})
	dir, err := workload.OutDir(*out)
	if err != nil {
		return usageError("%v", err)
	}
	return console.PlayRepeated(*repeat, cfg, dir, *metricsAddr, w.Quiet, console.StackStarter(w, parsedFaults, *useTLS, local, where))
}
