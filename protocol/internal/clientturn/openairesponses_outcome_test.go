package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// TestOpenAIResponsesUnscriptedErrorIsTheOutcome: an error event (then response.failed) in a session whose
// script does not fail is reported in Observation.Error (the load generator's in_band_error
// outcome) and is no violation; the turn is judged as a partial one from there. The error's own
// shape and what follows it are still judged, a scripted error keeps its checks (at the wrong
// turn too), and with ground truth off no error is scripted. A cut is partial too.
func TestOpenAIResponsesUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	cut := CutAnswer(t, orNewWriter, "")
	ErrorOutcomes(t, orNewWriter, orNewChecker, openairesponses.RError, openairesponses.RContent,
		// response.failed alone (no error event before it) is the error terminal too.
		Outcome{Name: "failed alone", Scenario: "plain-answer", Stream: cut +
			orEv("response.failed", 1000, `,"response":{"id":"r","status":"failed","error":{"code":"server_error","message":"overloaded"}}`),
			Errors: []string{"overloaded"}},
		// An error event without a message: its shape is judged; "error" is its message.
		Outcome{Name: "no message", Scenario: "plain-answer", Stream: cut +
			orEv("error", 1000, `,"code":"server_error"`) + orEv("response.failed", 1001, `,"response":{"status":"failed","error":{"message":"x"}}`),
			Errors: []string{"error"}, Want: []protocol.Rule{openairesponses.RError}},
		// The error event not followed by response.failed.
		Outcome{Name: "no failed", Scenario: "plain-answer", Stream: cut +
			orEv("error", 1000, `,"message":"runtime crashed"`) + orEv("response.queued", 1001, ""),
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{openairesponses.RError}})
}
