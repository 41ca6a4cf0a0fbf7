package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/sweep"
	"github.com/streambench/streambench/verdict"
)

const sweepUsage = `sweep (--clients N,N,... | --rate R,R,... | --rate sweep [--steps N]) [--slo CHECK]... [--target URL [--mock URL]] [--out DIR] [run flags...]

Runs one load per step, lowest first, each with a fresh mock and runtime (or against --target),
writes each step's results and report under OUT/SWEEP-ID/, then sweep.md, sweep.html, sweep.json,
sweep.png (latency and failures against load) and sweep-latency.png (TTFT and ITL p50/p90/p95/p99
against request throughput) there. The table gives per step request throughput, output tokens/s,
goodput, and TTFT, ITL, TPOT and E2E at p50/p90/p95/p99. Each step is judged as load judges a run
(no violation, no error outcome, no leak: the defaults) plus the --slo checks; with SLOs the sweep
names the knee (the highest step meeting every SLO, with every lower step meeting them too) and
which SLO broke first; without, no knee. An SLO on ttfc or ttft is judged on its overhead (ttfc.overhead:
the latency less what the script scheduled, the target's own part) in a step whose scenarios script
it, so the knee is where load makes the target slower, not where the scenario thinks (as gate and
load judge a threshold); an SLO on ttfc.measured or ttft.measured judges the latency as measured. Exit 0 when the sweep ran, whatever the knee; 104 for bad input.
--rate sweep finds the saturation rate as GuideLLM's sweep profile does: a synchronous step (1 client)
and a throughput step (--throughput-clients) measure the request throughput, then --steps open-loop
rates evenly spaced strictly between the two run (docs/ENDPOINTS.md).
An inference endpoint: --target URL --dialect openai-chat|anthropic-messages with --model, --api-key,
--input-tokens, --output-tokens, --prompt or --prompts (docs/ENDPOINTS.md); without --target, that workload
plays against a fresh mock per step (no runtime).
To see the mock's capacity model, start 'streambench mock --max-concurrent N' and a runtime
yourself and pass --target and --mock.`

// sweepMain runs one load per step and finds the highest step that meets every SLO.
func sweepMain(args []string, out io.Writer) error {
	fs := newFlagSet("sweep", sweepUsage, "SLOs use the gate's syntax:\n"+verdict.MetricsHelp())
	clients := fs.IntSlice("clients", nil, "closed-loop steps: virtual users, e.g. 250,500,1000")
	rateList := fs.StringSlice("rate", nil, "open-loop steps: sessions per second, e.g. 10,20,40; or sweep: find the saturation rate as GuideLLM's\n"+
		"sweep profile does (a synchronous step of 1 client, a throughput step of --throughput-clients, then --steps rates between)")
	rateSteps := fs.Int("steps", sweep.DefaultRateSteps, "--rate sweep: the open-loop rates run between the synchronous and the throughput request rates")
	throughputClients := fs.Int("throughput-clients", defaultThroughputClients, "--rate sweep: the throughput step's closed-loop clients (raise it for a server that batches more)")
	slos := fs.StringArray("slo", nil, "a service-level objective every step is judged on besides the defaults, e.g. 'ttfc.p99<500ms' (repeatable; none: the defaults alone)")
	target := fs.String("target", "", "sweep this runtime instead of starting a mock and runtime per step")
	mockURL := fs.String("mock", "", "with --target: the mock provider whose records give cancel latency")
	outDir := fs.String("out", "results", "write the sweep to OUT/SWEEP-ID")
	faults := fs.StringArray("fault", nil, "pass a fault switch to each step's runtime (repeatable)")
	inProcess := fs.Bool("in-process", false, "run each step's mock and runtime inside this process (default: only for small steps)")
	rejudge := fs.String("rejudge", "", "run nothing: re-judge the saved sweep in this directory (with --slo, or its own SLOs) and rewrite its report")
	// Every workload flag of run, except the two that become the steps.
	w := workload.AddExcept(fs, "clients", "rate")
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	w.APIKeyFromEnv()
	if *rejudge != "" {
		return rejudgeSweep(*rejudge, *slos, out)
	}
	rateSweep, steps, err := sweepSteps(fs, *clients, *rateList, *rateSteps, *throughputClients)
	if err != nil {
		return err
	}
	thresholds, err := parseSLOs(*slos)
	if err != nil {
		return err
	}
	parsedFaults, err := agentruntime.ParseFaults(*faults)
	switch {
	case err != nil:
		return usageError("--fault: %v", err)
	case *target != "" && (len(*faults) > 0 || *inProcess):
		return usageError("--fault and --in-process configure the stack sweep starts; with --target the runtime is yours")
	case *mockURL != "" && *target == "":
		return usageError("--mock names the mock behind --target; give --target too")
	case w.Stages != "":
		return usageError("--stages ramps the load, but a sweep's steps set it: give --clients or --rate steps instead")
	}
	*target = strings.TrimSuffix(*target, "/")
	if *target != "" {
		if err := loadgen.CheckURL("--target", *target); err != nil {
			return usageError("%v", err)
		}
	}
	cfg, err := config(w)
	if err != nil {
		return err
	}
	if *target == "" {
		var runtimeFlags []string
		if len(*faults) > 0 {
			runtimeFlags = append(runtimeFlags, "--fault")
		}
		if _, err := console.MockAlone(&cfg, runtimeFlags...); err != nil {
			return usageError("%v", err)
		}
	}
	if err := w.ResolveModel(cfg, *target); err != nil {
		return usageError("%v", err)
	}
	if err := workload.CheckWritable("--out", *outDir); err != nil {
		return usageError("%v", err)
	}
	sr := &console.Steps{W: w, Target: *target, Mock: *mockURL, Faults: parsedFaults, SweepID: sweep.ID(cfg.RunID, time.Now()),
		InProcess: *inProcess, InProcessSet: fs.Changed("in-process")}
	sr.Dir = filepath.Join(*outDir, sr.SweepID)
	var res *sweep.Result
	if rateSweep {
		res, err = sweep.RunRate(*rateSteps, *throughputClients, sr.Run, thresholds)
	} else {
		res, err = sweep.Run(steps, sr.Run, thresholds)
	}
	if res != nil && len(res.Steps) > 0 {
		fmt.Fprintln(out)
		if err := console.WriteSweep(res, sr.Dir, out); err != nil {
			return err
		}
	}
	return err
}

// sweepSteps reads the steps from --clients or --rate (or --rate sweep, which finds its own).
func sweepSteps(fs *pflag.FlagSet, clients []int, rateList []string, rateSteps, throughputClients int) (rateSweep bool, steps []sweep.Step, err error) {
	rateSweep, rates, err := parseRates(rateList)
	switch {
	case err != nil:
		return false, nil, usageError("%v", err)
	case rateSweep && len(clients) > 0:
		return false, nil, usageError("--rate sweep finds its own steps: give it without --clients")
	case rateSweep && rateSteps < 1:
		return false, nil, usageError("--steps %d: want at least 1 rate between the synchronous and throughput steps", rateSteps)
	case rateSweep && throughputClients < 2:
		return false, nil, usageError("--throughput-clients %d: want at least 2 (the synchronous step has 1)", throughputClients)
	case !rateSweep && (fs.Changed("steps") || fs.Changed("throughput-clients")):
		return false, nil, usageError("--steps and --throughput-clients shape --rate sweep; give --rate sweep too")
	case rateSweep:
		return true, nil, nil
	}
	if steps, err = sweep.StepsFrom(clients, rates); err != nil {
		return false, nil, usageError("%v", err)
	}
	return false, steps, nil
}

// defaultThroughputClients is the throughput step's clients of sweep --rate sweep.
const defaultThroughputClients = 64

// parseRates reads --rate: "sweep" (alone), or rates in sessions per second.
func parseRates(list []string) (sweep bool, rates []float64, err error) {
	for _, v := range list {
		if strings.TrimSpace(v) == "sweep" {
			if len(list) > 1 {
				return false, nil, fmt.Errorf("--rate sweep finds its own rates: give it alone, not with %q", strings.Join(list, ","))
			}
			return true, nil, nil
		}
		r, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return false, nil, fmt.Errorf("--rate %q: want sessions per second (10,20,40) or sweep", v)
		}
		rates = append(rates, r)
	}
	return false, rates, nil
}

// rejudgeSweep re-judges a saved sweep's steps and rewrites its sweep report.
func rejudgeSweep(dir string, slos []string, out io.Writer) error {
	thresholds, err := parseSLOs(slos)
	if err != nil {
		return err
	}
	res, err := sweep.Rejudge(dir, thresholds)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	return console.WriteSweep(res, dir, out)
}

// parseSLOs parses --slo checks, refusing one on a rule no dialect has, as gate and load do.
func parseSLOs(exprs []string) ([]verdict.Threshold, error) {
	var out []verdict.Threshold
	for _, e := range exprs {
		t, err := verdict.ParseThresholdIn(dialects.Default().Rules(), e)
		if err != nil {
			return nil, usageError("--slo: %v", err)
		}
		out = append(out, t)
	}
	return out, nil
}
