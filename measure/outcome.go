package measure

import "strings"

// Outcome is how one session ended: exactly one per session started, from the closed set
// below (docs/PROTOCOLS.md, "Outcomes"). The names are snake_case as summary.json, the
// console, the report, live metrics and gate thresholds (outcome.NAME) spell them.
type Outcome string

// Session outcomes.
const (
	// OutcomeCompleted: the stream ended with its terminal (violations, if any, are counted
	// apart: a completed session with violations failed by them).
	OutcomeCompleted Outcome = "completed"
	// OutcomeScriptedError: the scenario scripted a provider failure and it came as scripted:
	// the scripted HTTP status to a client that talks to the provider, or the dialect's
	// in-band error terminal. Any other failure of such a session is one of the errors below.
	OutcomeScriptedError Outcome = "scripted_error"
	// OutcomeAborted: the client aborted or stopped the stream on purpose, as scripted.
	OutcomeAborted Outcome = "aborted"
	// OutcomeInBandError: the response was 200 but the stream ended in an error frame the
	// script did not plan (or any error frame without ground truth).
	OutcomeInBandError Outcome = "in_band_error"
	// OutcomeHTTPError: a status other than 200 that was not the scripted one.
	OutcomeHTTPError Outcome = "http_error"
	// OutcomeTransportError: the connection, TLS, the HTTP framing or a read failed (a failed
	// stop request of a stopped session included).
	OutcomeTransportError Outcome = "transport_error"
	// OutcomeDecodeError: the body broke the SSE decoder's limits (a line or event too long).
	OutcomeDecodeError Outcome = "decode_error"
	// OutcomeTruncated: the body ended cleanly but without the dialect's terminal.
	OutcomeTruncated Outcome = "truncated"
	// OutcomeStalled: no byte arrived for --idle-timeout while the stream was open.
	OutcomeStalled Outcome = "stalled"
	// OutcomeOverTime: the stream was still delivering when --stream-timeout ended it: slow,
	// not hung, and not a protocol violation.
	OutcomeOverTime Outcome = "over_time"
	// OutcomeCut: the run ended (its grace period, or a second Ctrl-C) while the stream was
	// still delivering; it was not judged.
	OutcomeCut Outcome = "cut"
)

// outcomes is the closed set, in the order reports list it, each with what it means (for
// --help and the report) and whether it is an error: a failure of the session by itself.
var outcomes = []struct {
	o     Outcome
	error bool
	doc   string
}{
	{OutcomeCompleted, false, "the stream ended with its terminal"},
	{OutcomeScriptedError, false, "the provider failure the scenario scripted, as scripted"},
	{OutcomeAborted, false, "the client aborted or stopped on purpose, as scripted"},
	{OutcomeInBandError, true, "HTTP 200, then an error frame the script did not plan"},
	{OutcomeHTTPError, true, "a status other than 200 (and other than the scripted one)"},
	{OutcomeTransportError, true, "connection, TLS, HTTP framing or read failure"},
	{OutcomeDecodeError, true, "a line or event over the SSE decoder's limits"},
	{OutcomeTruncated, true, "the body ended without the dialect's terminal"},
	{OutcomeStalled, true, "no byte for --idle-timeout"},
	{OutcomeOverTime, true, "still delivering at --stream-timeout (slow, not hung)"},
	{OutcomeCut, true, "still delivering when the run ended (grace period or second Ctrl-C); not judged"},
}

// Outcomes is the closed set, in the order reports list it.
func Outcomes() []Outcome {
	out := make([]Outcome, len(outcomes))
	for i, x := range outcomes {
		out[i] = x.o
	}
	return out
}

// OutcomeNames lists Outcomes comma-separated, for help texts and errors.
func OutcomeNames() string {
	names := make([]string, len(outcomes))
	for i, x := range outcomes {
		names[i] = string(x.o)
	}
	return strings.Join(names, ", ")
}

// IsError tells whether the outcome is a failure of the session by itself: every outcome
// but completed, scripted_error and aborted (an unknown one too). Errors fail a run unless a
// threshold relaxes them by name (errors<…, outcome.NAME<…).
func (o Outcome) IsError() bool {
	i := o.index()
	return i < 0 || outcomes[i].error
}

// Valid tells whether o is one of Outcomes.
func (o Outcome) Valid() bool { return o.index() >= 0 }

// Doc says in a few words what the outcome means, for --help and the report.
func (o Outcome) Doc() string {
	if i := o.index(); i >= 0 {
		return outcomes[i].doc
	}
	return "unknown outcome"
}

func (o Outcome) index() int {
	for i, x := range outcomes {
		if x.o == o {
			return i
		}
	}
	return -1
}
