package hrtimer

import (
	"os"
	"runtime"
	"testing"
)

// TestSpareProcs raises GOMAXPROCS by two and restores it; with GOMAXPROCS set in the
// environment it leaves the setting alone. Not parallel: GOMAXPROCS is process-wide.
func TestSpareProcs(t *testing.T) {
	if os.Getenv("GOMAXPROCS") == "" {
		before := runtime.GOMAXPROCS(0)
		restore := SpareProcs()
		if got := runtime.GOMAXPROCS(0); got != before+2 {
			t.Errorf("GOMAXPROCS %d after SpareProcs, want %d", got, before+2)
		}
		restore()
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Errorf("GOMAXPROCS %d after restore, want %d", got, before)
		}
	}
	t.Setenv("GOMAXPROCS", "1")
	before := runtime.GOMAXPROCS(0)
	restore := SpareProcs()
	defer restore()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d with the variable set, want it left at %d", got, before)
	}
}
