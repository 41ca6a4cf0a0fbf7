package sweep

import (
	"time"
)

// ID is a sweep's id: runID when given, else "sweep-" and the UTC time now.
func ID(runID string, now time.Time) string {
	if runID != "" {
		return runID
	}
	return "sweep-" + now.UTC().Format("20060102-150405")
}
