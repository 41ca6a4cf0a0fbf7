package report

import (
	"time"

	"github.com/streambench/streambench/loadgen"
)

// SweepID is a sweep's id: runID when given, else "sweep-" and the UTC time now.
func SweepID(runID string, now time.Time) string {
	if runID != "" {
		return runID
	}
	return "sweep-" + now.UTC().Format("20060102-150405")
}

// Configure sets cfg to play step s of sweep sweepID: the step's clients or rate, the run id
// SWEEP-ID-STEP-ID, and run info naming the faults, the sweep and the step.
func (s Step) Configure(cfg *loadgen.Config, sweepID string, faults []string) {
	cfg.Clients, cfg.Rate = s.Clients, s.Rate
	cfg.RunID = sweepID + "-" + s.ID()
	cfg.Info = loadgen.RunInfo{Faults: faults, Extra: map[string]string{"sweep": sweepID, "step": s.String()}}
}
