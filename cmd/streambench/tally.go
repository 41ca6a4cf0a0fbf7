package main

import (
	"sync"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// LiveTally is a SessionTally that a running load fills as its sessions end (its Add, as a
// loadgen.SessionEndFunc, is one of the run's outputs), safe for the generator's concurrent calls.
type LiveTally struct {
	mu sync.Mutex
	report.SessionTally
}

// NewLiveTally returns an empty live tally.
func NewLiveTally() *LiveTally { return &LiveTally{SessionTally: report.NewSessionTally()} }

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
