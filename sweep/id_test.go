package sweep

import (
	"testing"
	"time"
)

// TestSweepID: the sweep id is the given run id, else time-based.
func TestSweepID(t *testing.T) {
	t.Parallel()
	if got := ID("mine", time.Now()); got != "mine" {
		t.Errorf("ID(mine) = %q", got)
	}
	at := time.Date(2026, 12, 1, 15, 4, 5, 0, time.FixedZone("x", 3600))
	if got := ID("", at); got != "sweep-20261201-140405" {
		t.Errorf("ID at %v = %q, want sweep-20261201-140405 (UTC)", at, got)
	}
}
