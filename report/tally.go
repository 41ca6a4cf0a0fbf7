package report

import (
	"sync"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
)

// LiveTally is a SessionTally that a running load fills as its sessions end (its Add is a
// loadgen.Config.OnSessionEnd), safe for the generator's concurrent callbacks.
type LiveTally struct {
	mu sync.Mutex
	SessionTally
}

// NewLiveTally returns an empty live tally.
func NewLiveTally() *LiveTally { return &LiveTally{SessionTally: NewSessionTally()} }

// Add counts one ended session: its scenario × dialect's sessions, errors and violations.
func (t *LiveTally) Add(e loadgen.SessionEnd) {
	k := measure.Key{Scenario: e.Scenario, Dialect: e.Dialect}
	t.mu.Lock()
	if e.Outcome.IsError() {
		t.Errors[k]++
	}
	t.Sessions[k]++
	t.Violations[k] += int64(len(e.Violations))
	t.mu.Unlock()
}

// SavedTally is the tally of a run read back from its results (a merged run): the sessions
// per scenario × dialect are its stream-duration histograms' counts; errors,
// violations per key and CPU were not saved, so they are zero.
func SavedTally(run *measure.Run) SessionTally {
	tally := NewSessionTally()
	for _, k := range run.Histograms.Keys() {
		if k.Metric == measure.StreamDuration {
			tally.Sessions[measure.Key{Scenario: k.Scenario, Dialect: k.Dialect}] = run.Histograms.Count(k)
		}
	}
	return tally
}
