package measure

import (
	"slices"
	"strings"
)

// Outcome is how one session ended: exactly one per session started, from a closed set
// (docs/PROTOCOLS.md, "Outcomes", says what each means).
type Outcome string

// Session outcomes.
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

// outcomes is the closed set in report order; the first three are not errors.
var outcomes = []Outcome{OutcomeCompleted, OutcomeScriptedError, OutcomeAborted, OutcomeInBandError, OutcomeHTTPError,
	OutcomeTransportError, OutcomeDecodeError, OutcomeTruncated, OutcomeStalled, OutcomeOverTime, OutcomeCut}

// Outcomes is the closed set, in the order reports list it.
func Outcomes() []Outcome { return slices.Clone(outcomes) }

// OutcomeNames lists Outcomes comma-separated, for help texts and errors.
func OutcomeNames() string { return JoinNames(outcomes) }

// JoinNames joins names with ", ".
func JoinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

// IsError tells whether the outcome is a failure of the session by itself (an unknown one is).
func (o Outcome) IsError() bool { return !slices.Contains(outcomes[:3], o) }

// Valid tells whether o is one of Outcomes.
func (o Outcome) Valid() bool { return slices.Contains(outcomes, o) }
