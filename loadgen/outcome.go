package loadgen

import (
	"errors"
	"strconv"
)

// Outcome is how one session ended. Callers branch on it (the run command's table counts per
// outcome), so it is a type rather than a string.
type Outcome uint8

// Session outcomes. Every started session ends with exactly one.
const (
	// OutcomeOK: the stream ended and every rule held (a scripted provider failure counts here).
	OutcomeOK Outcome = iota + 1
	// OutcomeFailed: an unscripted HTTP, transport or decode error, or a protocol violation.
	OutcomeFailed
	// OutcomeHung: the stream had no terminal frame when the run's grace period or the stream
	// timeout ended. A failure (the user would still be waiting), raised as R-terminal and
	// counted both as failed and apart as hung. A stream whose terminal came but whose
	// connection stayed open is not hung: it is judged on what it delivered.
	OutcomeHung
	// OutcomeAborted: the client's scripted abort or stop, and nothing else.
	OutcomeAborted
	// OutcomeCut: cancelled by the caller (Run's context, the second Ctrl-C) before it ended;
	// neither judged nor counted as a failure.
	OutcomeCut
)

// String is the outcome's name as printed and recorded: ok, failed, hung, aborted or cut.
func (o Outcome) String() string {
	switch o {
	case OutcomeOK:
		return "ok"
	case OutcomeFailed:
		return "failed"
	case OutcomeHung:
		return "hung"
	case OutcomeAborted:
		return "aborted"
	case OutcomeCut:
		return "cut"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// Failed reports whether the outcome is a failure of the session (failed or hung).
func (o Outcome) Failed() bool { return o == OutcomeFailed || o == OutcomeHung }

// ErrorKind is the error counter an unscripted session error is counted in (measure.Counters
// TransportErrors, DecodeErrors or HTTPErrors).
type ErrorKind string

// Error kinds.
const (
	// ErrorTransport: the connection, TLS, the HTTP framing of the response (its head, a
	// chunked body) or the stream's reads failed.
	ErrorTransport ErrorKind = "transport"
	// ErrorDecode: the body broke the SSE decoder's limits (a line or an event too long).
	ErrorDecode ErrorKind = "decode"
	// ErrorHTTP: the response status was not 200 (a redirect included: it is not followed).
	ErrorHTTP ErrorKind = "http"
)

// The causes a session's context is cancelled with when a limit ends it, so the session can
// tell a hang (no terminal within the limit) from the caller cancelling the run.
var (
	errGraceEnded    = errors.New("the run's grace period ended")
	errStreamTimeout = errors.New("the stream timeout ended")
	errReplayLimit   = errors.New("the replay's time limit ended")
)
