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

// Outcomes is the closed set, in the order reports list it.
func Outcomes() []Outcome {
	return []Outcome{OutcomeCompleted, OutcomeScriptedError, OutcomeAborted, OutcomeInBandError,
		OutcomeHTTPError, OutcomeTransportError, OutcomeDecodeError, OutcomeTruncated,
		OutcomeStalled, OutcomeOverTime, OutcomeCut}
}

// OutcomeNames lists Outcomes comma-separated, for help texts and errors.
func OutcomeNames() string {
	names := make([]string, 0, 11)
	for _, o := range Outcomes() {
		names = append(names, string(o))
	}
	return strings.Join(names, ", ")
}

// IsError tells whether the outcome is a failure of the session by itself: every outcome
// but completed, scripted_error and aborted. Errors fail a run unless a threshold relaxes
// them by name (errors<…, outcome.NAME<…).
func (o Outcome) IsError() bool {
	switch o {
	case OutcomeCompleted, OutcomeScriptedError, OutcomeAborted:
		return false
	}
	return true
}

// Valid tells whether o is one of Outcomes.
func (o Outcome) Valid() bool {
	for _, k := range Outcomes() {
		if k == o {
			return true
		}
	}
	return false
}

// Doc says in a few words what the outcome means, for --help and the report.
func (o Outcome) Doc() string {
	switch o {
	case OutcomeCompleted:
		return "the stream ended with its terminal"
	case OutcomeScriptedError:
		return "the provider failure the scenario scripted, as scripted"
	case OutcomeAborted:
		return "the client aborted or stopped on purpose, as scripted"
	case OutcomeInBandError:
		return "HTTP 200, then an error frame the script did not plan"
	case OutcomeHTTPError:
		return "a status other than 200 (and other than the scripted one)"
	case OutcomeTransportError:
		return "connection, TLS, HTTP framing or read failure"
	case OutcomeDecodeError:
		return "a line or event over the SSE decoder's limits"
	case OutcomeTruncated:
		return "the body ended without the dialect's terminal"
	case OutcomeStalled:
		return "no byte for --idle-timeout"
	case OutcomeOverTime:
		return "still delivering at --stream-timeout (slow, not hung)"
	case OutcomeCut:
		return "still delivering when the run ended (grace period or second Ctrl-C); not judged"
	}
	return "unknown outcome"
}
