package report

import (
	"github.com/streambench/streambench/measure"
)

// SavedTally is the tally of a saved run: its sessions per key (the rest was not saved).
func SavedTally(run *measure.Run) SessionTally {
	tally := NewSessionTally()
	for _, k := range run.Histograms.Keys() {
		if k.Metric == measure.StreamDuration {
			tally.Sessions[measure.Key{Scenario: k.Scenario, Dialect: k.Dialect}] = run.Histograms.Count(k)
		}
	}
	return tally
}
