// Package session is the load generator's session state machine: one session's request, its
// stream read through the dialect's checker, the scripted client actions, its one outcome, and
// its measurements into the run's Recorder. Package loadgen decides which session to play and
// when; a Runner plays it.
package session

import (
	"net/http"
	"time"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// Runner is what a run's sessions share. Set its fields before the first Play; it is then
// read-only and safe for concurrent use.
type Runner struct {
	Client *http.Client
	Target string // the runtime's base URL
	Rec    *Recorder
	// StreamTimeout bounds one session; IdleTimeout (0: none) ends a stream silent that long;
	// Grace is the run's grace period.
	StreamTimeout, IdleTimeout, Grace time.Duration
	ScriptTimeScale                   float64 // the mock's: scripted client actions scale by it
	OpenLoop                          bool    // sessions start on a schedule: start lag is measured
	GoodputSLOs                       []verdict.SessionSLO
	Endpoint                          *endpoint.Workload // sends conversations' later turns
	// Sessions intended before WarmupEnd are played but not measured; LateBy is how late a
	// shard began after its --start-at.
	Start, WarmupEnd time.Time
	LateBy           time.Duration
	Redact           func(string) string // hides secrets in Result.Frames (nil: none)
	// Ended is called once per measured session as it ends, from its goroutine, after the
	// recorder counted it.
	Ended func(*Plan, *Result)
	// Record takes each request as it ends, a session or a conversation's turn (nil: none);
	// called from the session's goroutine, it must be quick and not keep the record.
	Record func(*measure.Record)
}
