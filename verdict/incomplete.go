package verdict

import (
	"errors"
	"fmt"
	"time"

	"github.com/streambench/streambench/measure"
)

// ErrIncomplete is Judge's error for a snapshot of a run, which no check can judge.
var ErrIncomplete = errors.New("the run is incomplete")

func checkComplete(role string, r *measure.Run) error {
	if r == nil || !r.Summary.Incomplete {
		return nil
	}
	return fmt.Errorf("%s run %s: %w (its %s says \"incomplete\": true): a snapshot taken %s into the run, at %s UTC, when the run was killed or still running; the gate judges finished runs only",
		role, r.Summary.RunID, ErrIncomplete, measure.SummaryFile,
		r.Summary.Ended.Sub(r.Summary.Started).Round(time.Second), r.Summary.Ended.UTC().Format(time.TimeOnly))
}
