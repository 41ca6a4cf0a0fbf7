package verdict_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// TestGateRefusesIncompleteRuns: the gate judges no snapshot, as the current run or as the
// baseline, and says which and why.
func TestGateRefusesIncompleteRuns(t *testing.T) {
	t.Parallel()
	snap := fixture.Run(t, fixture.Options{Seed: 15})
	snap.Summary.Incomplete, snap.Summary.RunID = true, "killed"
	done := fixture.Run(t, fixture.Options{Seed: 16})
	for _, tc := range []struct {
		name          string
		current, base *measure.Run
		want          string // in the error; "" for none
	}{
		// the run itself was killed
		{"current", snap, nil, "current run killed: the run is incomplete"},
		// the baseline was
		{"baseline", done, snap, "baseline run killed: the run is incomplete"},
		// both finished: the gate judges
		{"finished", done, done, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := verdict.Judge(tc.current, verdict.Config{Baseline: tc.base})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, verdict.ErrIncomplete) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "finished runs only") {
				t.Errorf("gate: %v, want ErrIncomplete saying %q", err, tc.want)
			}
		})
	}
}
