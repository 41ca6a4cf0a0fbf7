package console

import (
	"sync"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// Tally is a SessionTally a running load fills as its sessions end; safe for concurrent use.
type Tally struct {
	mu sync.Mutex
	report.SessionTally
}

// NewTally returns an empty tally.
func NewTally() *Tally { return &Tally{SessionTally: report.NewSessionTally()} }

// The run hears of every violation: those of a session as it ends, and R-abort's after.
var _ interface {
	loadgen.SessionEndOutput
	loadgen.LateViolationOutput
} = (*Tally)(nil)

// SessionEnded counts one ended session: its scenario × dialect's sessions, errors and
// violations (loadgen.SessionEndOutput).
func (t *Tally) SessionEnded(e loadgen.SessionEnd) {
	k := measure.Key{Scenario: e.Scenario, Dialect: e.Dialect}
	t.mu.Lock()
	if e.Outcome.IsError() {
		t.Errors[k]++
	}
	t.Sessions[k]++
	t.Violations[k] += int64(len(e.Violations))
	t.mu.Unlock()
}

// LateViolation counts a violation found after its session ended (loadgen.LateViolationOutput).
func (t *Tally) LateViolation(e loadgen.SessionEnd) {
	t.mu.Lock()
	t.Violations[measure.Key{Scenario: e.Scenario, Dialect: e.Dialect}] += int64(len(e.Violations))
	t.mu.Unlock()
}
