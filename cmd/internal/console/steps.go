package console

import (
	"fmt"
	"os"
	"path/filepath"

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
// workload, or a mix of provider wires only (openai-chat, …), which the runtime does not serve.
func MockAlone(cfg *loadgen.Config) bool {
	if cfg.Endpoint != nil {
		return true
	}
	for _, d := range cfg.Mix.Dialects() {
		if _, ok := cfg.Dialects.Endpoint(d); !ok {
			return false
		}
	}
	return true
}

// StartStack starts a fresh mock and runtime for cfg (the mock alone, as the target, when
// MockAlone) and points cfg at them; the caller stops the stack.
func StartStack(w *workload.Flags, cfg *loadgen.Config, faults agentruntime.Faults, useTLS, local bool) (*stack.Stack, error) {
	endpoint := MockAlone(cfg)
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
