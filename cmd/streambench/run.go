package main

import (
	"fmt"
	"os"
	"runtime"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/stack"
)

// runRun is the main job: start a mock provider and the reference runtime, run the load
// against them, print the summary, write the results and stop everything it started.
func runRun(args []string) error {
	fs := newFlagSet("run", "run [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--mix FILE] [--fault NAME]... [--in-process] [--tls] [--out DIR] ...\n"+
		"an endpoint workload on the mock alone: run --dialect openai-chat|anthropic-messages --input-tokens SPEC --output-tokens SPEC ...")
	withGlossary(fs)
	out := fs.String("out", defaultOut, outHelp)
	faults := fs.StringArray("fault", nil, "pass a fault switch to the runtime (repeatable):\n"+agentruntime.FaultHelp())
	inProcess := fs.Bool("in-process", false, "run the mock and the runtime inside this process (default: only for small runs, else child processes)")
	metricsAddr := addMetricsAddrFlag(fs)
	useTLS := fs.Bool("tls", false, "the runtime serves HTTPS (HTTP/1.1, and h2 with --http2) with a self-signed certificate made at start, which the generator trusts")
	w := workload.Add(fs)
	w.AddEndpoint()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	w.APIKeyFromEnv()
	// A --dialect the mix has no profile for (ag-ui, langgraph) plays the runtime's agents.
	w.DefaultTargets = []string{"openai-all", "anthropic-all"}
	if note := sizeToMachine(w, runtime.NumCPU()); note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	defer hrtimer.SpareProcs()()
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	parsedFaults, err := agentruntime.ParseFaults(*faults)
	if err != nil {
		return usageError("--fault: %v", err)
	}
	cfg, err := config(w)
	if err != nil {
		return err
	}
	endpoint := cfg.Endpoint != nil
	if endpoint {
		// An inference endpoint's workload plays against the mock itself: no runtime.
		if len(*faults) > 0 || *useTLS {
			return usageError("--fault and --tls configure the reference runtime, which an endpoint workload on the mock does not use")
		}
		if err := resolveModel(cfg, w, ""); err != nil {
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
	st, err := startStack(w, &cfg, parsedFaults, *useTLS, local)
	if err != nil {
		return err
	}
	defer st.Stop()
	where := "child processes"
	if local {
		where = "in process"
	}
	if endpoint {
		fmt.Fprintf(os.Stderr, "mock %s as the endpoint, model %s (%s)\n", st.MockURL, w.Model, where)
		if st.Mock != nil {
			fmt.Fprintf(os.Stderr, "child pid: mock %d (it dies with this process)\n", st.Mock.PID())
		}
	} else {
		fmt.Fprintf(os.Stderr, "mock %s, runtime %s (%s)\n", st.MockURL, st.RuntimeURL, where)
		if st.Mock != nil {
			fmt.Fprintf(os.Stderr, "child pids: mock %d, runtime %d (they die with this process)\n", st.Mock.PID(), st.Runtime.PID())
		}
	}
	cfg.Info.Faults = parsedFaults.Names()
	cfg.Info.Extra = workload.WithExtra(cfg.Info.Extra, map[string]string{"stack": where, "time-scale": fmt.Sprint(w.TimeScale)})
	if *useTLS {
		cfg.Info.Extra["tls"], cfg.Info.Extra["ca-cert"] = "self-signed", st.CACertFile
	}
	dir, err := outDir(*out)
	if err != nil {
		return err
	}
	return playAndFinish(cfg, dir, *metricsAddr, w.Quiet)
}

// startStack starts a fresh mock and runtime for cfg (the mock alone for an endpoint workload,
// which is then the target) and points cfg at them; the caller stops the stack.
func startStack(w *workload.Flags, cfg *loadgen.Config, faults agentruntime.Faults, useTLS, local bool) (*stack.Stack, error) {
	endpoint := cfg.Endpoint != nil
	st, err := stack.Start(stack.Options{TimeScale: w.TimeScale, ScenarioDir: w.ScenarioDir, ScenarioFiles: w.ScenarioPaths(),
		Library: cfg.Library, Faults: faults, TLS: useTLS, MockOnly: endpoint}, local)
	if err != nil {
		return nil, err
	}
	cfg.Target, cfg.MockURL = st.RuntimeURL, st.MockURL
	if endpoint {
		// The mock is the endpoint; its leak check reads it as the mock, not twice.
		cfg.Target, cfg.RuntimeMetricsURL = st.MockURL, "-"
	}
	if st.CACertFile != "" {
		if cfg.TLS, err = workload.TrustPEM("the runtime's certificate", st.CACertFile); err != nil {
			st.Stop()
			return nil, err
		}
	}
	return st, nil
}

// sizeToMachine gives run's workload its default clients for a machine of cores cores
// (loadgen.ClientsForCores): the mock and the runtime share those cores with the generator,
// and a default that overloads them measures the queue for the CPU, not the target. It
// returns the line saying what it chose and why, or "" when the flags shape the load
// (--clients, --rate, --stages).
func sizeToMachine(w *workload.Flags, cores int) string {
	w.DefaultClients = loadgen.ClientsForCores(cores)
	if w.Clients != 0 || w.Rate != 0 || w.Stages != "" {
		return ""
	}
	return fmt.Sprintf("clients: %d, sized to this machine's %d cores (%d a core, at most %d): the generator shares them with the stack "+
		"it starts (the mock, the runtime), and more clients would measure a queue for the CPU, not the target; --clients N to choose",
		w.DefaultClients, cores, loadgen.ClientsPerCore, loadgen.DefaultClients)
}
