package report

import (
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
)

// TestSweepStepConfigure: a step sets the load, the run id and the run info; the sweep id is
// the given run id, else time-based.
func TestSweepStepConfigure(t *testing.T) {
	t.Parallel()
	if got := SweepID("mine", time.Now()); got != "mine" {
		t.Errorf("SweepID(mine) = %q", got)
	}
	at := time.Date(2026, 12, 1, 15, 4, 5, 0, time.FixedZone("x", 3600))
	if got := SweepID("", at); got != "sweep-20261201-140405" {
		t.Errorf("SweepID at %v = %q, want sweep-20261201-140405 (UTC)", at, got)
	}
	cfg := loadgen.Config{Clients: 7}
	Step{Rate: 50}.Configure(&cfg, "s1", []string{"f"})
	if cfg.Clients != 0 || cfg.Rate != 50 || cfg.RunID != "s1-r50" || cfg.Info.Extra["step"] != "50/s" || cfg.Info.Extra["sweep"] != "s1" || len(cfg.Info.Faults) != 1 {
		t.Fatalf("configured %+v", cfg)
	}
}
