package main

import (
	"cmp"
	"fmt"
	"os"
	"runtime"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
)

// runRun is the main job: the load against a mock and runtime it starts and stops.
func runRun(args []string) error {
	fs := newFlagSet("run", "run [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--mix FILE] [--fault NAME]... [--in-process] [--tls] [--out DIR] ...\n"+
		"an endpoint workload on the mock alone: run --dialect openai-chat|anthropic-messages --input-tokens SPEC --output-tokens SPEC ...")
	workload.WithGlossary(fs)
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
	// An endpoint workload, or provider wires alone, play against the mock itself: no runtime.
	mockAlone := console.MockAlone(&cfg)
	if mockAlone && (len(*faults) > 0 || *useTLS) {
		return usageError("--fault and --tls configure the reference runtime, which a run of provider wires or an endpoint workload, on the mock alone, does not use")
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
	cfg.Info.Extra = workload.WithExtra(cfg.Info.Extra, map[string]string{"stack": where, "time-scale": fmt.Sprint(w.TimeScale)})
	start := func(cfg *loadgen.Config) (func(), error) {
		st, err := console.StartStack(w, cfg, parsedFaults, *useTLS, local)
		if err != nil {
			return nil, err
		}
		if mockAlone {
			fmt.Fprintf(os.Stderr, "mock %s as the endpoint, model %s (%s)\n", st.MockURL, cmp.Or(w.Model, "(none)"), where)
			if st.Mock != nil {
				fmt.Fprintf(os.Stderr, "child pid: mock %d (it dies with this process)\n", st.Mock.PID())
			}
		} else {
			fmt.Fprintf(os.Stderr, "mock %s, runtime %s (%s)\n", st.MockURL, st.RuntimeURL, where)
			if st.Mock != nil {
				fmt.Fprintf(os.Stderr, "child pids: mock %d, runtime %d (they die with this process)\n", st.Mock.PID(), st.Runtime.PID())
			}
		}
		if *useTLS {
			cfg.Info.Extra = workload.WithExtra(map[string]string{"tls": "self-signed", "ca-cert": st.CACertFile}, cfg.Info.Extra)
		}
		return st.Stop, nil
	}
	dir, err := workload.OutDir(*out)
	if err != nil {
		return usageError("%v", err)
	}
	return console.PlayRepeated(*repeat, cfg, dir, *metricsAddr, w.Quiet, start)
}
