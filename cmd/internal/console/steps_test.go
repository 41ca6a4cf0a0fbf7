package console

import (
	"testing"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/sweep"
)

// TestConfigureStep: a sweep step sets the load, the run id and the run info.
func TestConfigureStep(t *testing.T) {
	t.Parallel()
	cfg := loadgen.Config{Clients: 7}
	configureStep(&cfg, sweep.Step{Rate: 50}, "s1", []string{"f"})
	if cfg.Clients != 0 || cfg.Rate != 50 || cfg.RunID != "s1-r50" || cfg.Info.Extra["step"] != "50/s" || cfg.Info.Extra["sweep"] != "s1" || len(cfg.Info.Faults) != 1 {
		t.Fatalf("configured %+v", cfg)
	}
}
