package verdict

import (
	"errors"
	"fmt"
	"time"

	"github.com/streambench/streambench/measure"
)

// ErrIncomplete is returned by Judge for a run whose results are a snapshot (a run killed
// before it finished, or still running): its figures stop at the snapshot, so no check on
// them means what it says.
var ErrIncomplete = errors.New("the run is incomplete")

// checkComplete returns ErrIncomplete, naming the run and its role (current or baseline),
// for an incomplete run.
func checkComplete(role string, r *measure.Run) error {
	if !r.Summary.Incomplete {
		return nil
	}
	return fmt.Errorf("%s run %s: %w (its %s says \"incomplete\": true): a snapshot taken %s into the run, at %s UTC, when the run was killed or still running; the gate judges finished runs only",
		role, r.Summary.RunID, ErrIncomplete, measure.SummaryFile,
		r.Summary.Ended.Sub(r.Summary.Started).Round(time.Second), r.Summary.Ended.UTC().Format(time.TimeOnly))
}
