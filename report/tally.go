package report

import (
	"github.com/streambench/streambench/measure"
)

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
