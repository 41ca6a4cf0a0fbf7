package measure

import "strings"

// Outcome is how one session ended: exactly one per session started, from a closed set
// (docs/PROTOCOLS.md, "Outcomes").
type Outcome string

// Session outcomes; outcomes says what each means.
const (
	OutcomeCompleted      Outcome = "completed"
	OutcomeScriptedError  Outcome = "scripted_error"
	OutcomeAborted        Outcome = "aborted"
	OutcomeInBandError    Outcome = "in_band_error"
	OutcomeHTTPError      Outcome = "http_error"
	OutcomeTransportError Outcome = "transport_error"
	OutcomeDecodeError    Outcome = "decode_error"
	OutcomeTruncated      Outcome = "truncated"
	OutcomeStalled        Outcome = "stalled"
	OutcomeOverTime       Outcome = "over_time"
	OutcomeCut            Outcome = "cut"
)

// outcomes is the closed set in report order.
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

// IsError tells whether the outcome is a failure of the session by itself (an unknown one is).
func (o Outcome) IsError() bool {
	i := o.index()
	return i < 0 || outcomes[i].error
}

// Valid tells whether o is one of Outcomes.
func (o Outcome) Valid() bool { return o.index() >= 0 }

// Doc says in a few words what the outcome means.
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
