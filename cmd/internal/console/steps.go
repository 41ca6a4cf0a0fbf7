package console

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/stack"
	"github.com/streambench/streambench/sweep"
)

// Steps plays a sweep's steps: each against Target, or a fresh stack of its own.
type Steps struct {
	W                       *workload.Flags
	Target, Mock            string
	Faults                  agentruntime.Faults
	InProcess, InProcessSet bool // --in-process, and whether it was given (else: small steps in process)
	SweepID, Dir            string
}

// Run plays step st and writes its results and report under the sweep's directory.
func (sr *Steps) Run(st sweep.Step) (*measure.Run, error) {
	cfg, err := sr.W.Config()
	if err != nil {
		return nil, &BadInput{err}
	}
	configureStep(&cfg, st, sr.SweepID, sr.Faults.Names())
	if sr.Target != "" {
		cfg.Target, cfg.MockURL = sr.Target, sr.Mock
	} else {
		sut, err := StartStack(sr.W, &cfg, sr.Faults, false, sr.InProcess || !sr.InProcessSet && cfg.Small())
		if err != nil {
			return nil, err
		}
		defer sut.Stop()
	}
	fmt.Fprintf(os.Stderr, "sweep step %s against %s\n", st, loadgen.RedactURL(cfg.Target))
	run, _, err := Play(cfg, sr.W.Quiet)
	if err != nil {
		return nil, err
	}
	stepDir := filepath.Join(sr.Dir, run.Summary.RunID)
	if err := measure.WriteRun(stepDir, run); err != nil {
		return nil, fmt.Errorf("write results: %w", err)
	}
	if err := report.Render(stepDir); err != nil {
		return nil, fmt.Errorf("render %s: %w", stepDir, err)
	}
	if run.Summary.Interrupted {
		return run, fmt.Errorf("interrupted (results of this step are in %s)", stepDir)
	}
	return run, nil
}

// configureStep sets cfg to play step s of sweep sweepID (run id SWEEP-ID-STEP-ID).
func configureStep(cfg *loadgen.Config, s sweep.Step, sweepID string, faults []string) {
	cfg.Clients, cfg.Rate = s.Clients, s.Rate
	cfg.RunID = sweepID + "-" + s.ID()
	cfg.Info.Faults = faults
	cfg.Info.Extra = workload.WithExtra(cfg.Info.Extra, map[string]string{"sweep": sweepID, "step": s.String()})
}

// MockAlone tells whether cfg plays against the mock itself, with no runtime: an endpoint
// workload, or a mix of provider wires only (openai-chat, …), which the runtime does not
// serve; runtimeFlags given (--fault, --tls: they configure the runtime) are then refused, as
// is a mix of both kinds, which no one stack serves.
func MockAlone(cfg *loadgen.Config, runtimeFlags ...string) (bool, error) {
	var wires, served []string
	for _, d := range cfg.Mix.Dialects() {
		if _, ok := cfg.Dialects.Endpoint(d); ok {
			wires = append(wires, d)
		} else {
			served = append(served, d)
		}
	}
	switch {
	case cfg.Endpoint == nil && len(wires) > 0 && len(served) > 0:
		return false, fmt.Errorf("the mix plays provider wires (%s), which the mock alone serves, and runtime dialects (%s), which the reference runtime serves: play them in two runs",
			strings.Join(wires, ", "), strings.Join(served, ", "))
	case cfg.Endpoint == nil && len(wires) == 0:
		return false, nil
	case len(runtimeFlags) > 0:
		verb := map[bool]string{true: "configures", false: "configure"}[len(runtimeFlags) == 1]
		return true, fmt.Errorf("%s %s the reference runtime, which a run of provider wires or an endpoint workload does not start (it plays on the mock alone)",
			strings.Join(runtimeFlags, " and "), verb)
	}
	return true, nil
}

// StartStack starts a fresh mock and runtime for cfg (the mock alone, as the target, when
// MockAlone) and points cfg at them; the caller stops the stack.
func StartStack(w *workload.Flags, cfg *loadgen.Config, faults agentruntime.Faults, useTLS, local bool) (*stack.Stack, error) {
	endpoint, err := MockAlone(cfg)
	if err != nil {
		return nil, &BadInput{err}
	}
	st, err := stack.Start(stack.Options{TimeScale: cfg.ScriptTimeScale, ScenarioDir: w.ScenarioDir, ScenarioFiles: w.ScenarioPaths(),
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

// StackStarter is run's start for PlayRepeated: a fresh stack per run, said on stderr with
// where it runs; with useTLS, the run's info names the certificate.
func StackStarter(w *workload.Flags, faults agentruntime.Faults, useTLS, local bool, where string) func(*loadgen.Config) (func(), error) {
	return func(cfg *loadgen.Config) (func(), error) {
		st, err := StartStack(w, cfg, faults, useTLS, local)
		if err != nil {
			return nil, err
		}
		if st.RuntimeURL == "" {
			fmt.Fprintf(os.Stderr, "mock %s as the endpoint, model %s (%s)\n", st.MockURL, cmp.Or(w.Model, "as the mix says"), where)
			if st.Mock != nil {
				fmt.Fprintf(os.Stderr, "child pid: mock %d (it dies with this process)\n", st.Mock.PID())
			}
		} else {
			fmt.Fprintf(os.Stderr, "mock %s, runtime %s (%s)\n", st.MockURL, st.RuntimeURL, where)
			if st.Mock != nil {
				fmt.Fprintf(os.Stderr, "child pids: mock %d, runtime %d (they die with this process)\n", st.Mock.PID(), st.Runtime.PID())
			}
		}
		if useTLS {
			cfg.Info.Extra = workload.WithExtra(map[string]string{"tls": "self-signed", "ca-cert": st.CACertFile}, cfg.Info.Extra)
		}
		return st.Stop, nil
	}
}

// WriteSweep writes the sweep's files into dir and prints its table and where the report is.
func WriteSweep(res *sweep.Result, dir string, out io.Writer) error {
	if err := res.Write(dir); err != nil {
		return err
	}
	if err := res.WriteText(out); err != nil {
		return err
	}
	fmt.Fprintf(out, "sweep: %s\n", filepath.Join(dir, sweep.HTMLFile))
	return nil
}
