package report

import (
	"fmt"
	"time"

	"github.com/streambench/streambench/measure"
)

// IncompleteBanner is the line a report of an incomplete run opens with ("" for a finished run).
func IncompleteBanner(s *measure.Summary) string {
	if !s.Incomplete {
		return ""
	}
	return fmt.Sprintf("INCOMPLETE: the run was killed before it finished (or is still running); figures cover up to %s UTC, %s into the run",
		s.Ended.UTC().Format(time.TimeOnly), s.Ended.Sub(s.Started).Round(time.Second))
}
