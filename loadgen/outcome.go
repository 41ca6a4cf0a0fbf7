package loadgen

import (
	"errors"

	"github.com/streambench/streambench/measure"
)

// The causes a session's context is cancelled with when a limit ends it, so the session can
// tell a slow stream (over_time), a silent one (stalled, errIdle in finish.go) and the run's
// end (cut) from the caller cancelling the run.
var (
	errGraceEnded    = errors.New("the run's grace period ended")
	errStreamTimeout = errors.New("the stream timeout ended")
	errReplayLimit   = errors.New("the replay's time limit ended")
	errReplayBudget  = errors.New("the replay budget ended")
)

// outcomeList is measure.Outcomes, indexed by the recorder's counters.
var outcomeList = measure.Outcomes()
