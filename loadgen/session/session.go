// Package session is the load generator's session state machine: one session's request, its
// stream read through the dialect's checker, the scripted client actions (abort, stop,
// reconnect, plan decisions), its one outcome, and its measurements into the run's Recorder
// (per-shard HdrHistograms, counters). The run's orchestration (package loadgen) decides which
// session to play and when; a Runner plays it.
package session

import (
	"net/http"
	"time"

	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// Runner is what a run's sessions share: the HTTP client, the target, the limits, the
// recorder and the run's bookkeeping of each session's end. Set its fields before the first
// Play; it is then read-only and safe for concurrent use.
type Runner struct {
	Client *http.Client
	// Target is the runtime's base URL.
	Target string
	Rec    *Recorder
	// StreamTimeout bounds one session; IdleTimeout (0: none) ends a stream silent that long;
	// Grace is the run's grace period (named in a cut session's error).
	StreamTimeout, IdleTimeout, Grace time.Duration
	// ScriptTimeScale is the mock's time scale: scripted client actions scale by it.
	ScriptTimeScale float64
	// OpenLoop: sessions start on a schedule, so their start lag is measured.
	OpenLoop bool
	// GoodputSLOs are the per-session objectives a good session meets.
	GoodputSLOs []verdict.SessionSLO
	// Endpoint is the endpoint workload whose conversations' later turns a session sends.
	Endpoint *endpoint.Workload
	// Start is the run's start, WarmupEnd the end of its warmup (sessions intended before it
	// are played but not measured), LateBy how late a shard began after its --start-at.
	Start, WarmupEnd time.Time
	LateBy           time.Duration
	// Redact hides the run's secrets in a session's frames (Result.Frames; nil: nothing to hide).
	Redact func(string) string
	// Ended is the run's bookkeeping of a measured session as it ends: its error, the
	// circuit breaker, its violations' samples, its abort. Called once per measured session,
	// from the session's goroutine, after the recorder counted it.
	Ended func(*Plan, *Result)
	// Record takes each request as it ends, a session or a conversation's turn (nil: none);
	// called from the session's goroutine, it must be quick and not keep the record.
	Record func(*measure.Record)
}
