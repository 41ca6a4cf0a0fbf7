package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
)

// TestAnthropicMessagesUnscriptedErrorIsTheOutcome: a mid-stream event: error in a session whose script
// does not fail is reported in Observation.Error (the load generator's in_band_error outcome)
// and is no violation; the turn is judged as a partial one from there (no message_delta or
// message_stop owed, blocks left open, the text and tool calls short of the script). The
// error's own shape and what follows it are still judged, a scripted error keeps its checks (at
// the wrong turn too), and with ground truth off no error is scripted. A cut (any non-nil
// streamErr) is partial too.
func TestAnthropicMessagesUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	ErrorOutcomes(t, amNewWriter, amNewChecker, anthropicmessages.RError, anthropicmessages.RContent,
		// The error event without a message: its shape is judged; "error" is its message.
		Outcome{Name: "no message", Scenario: "plain-answer", Stream: CutAnswer(t, amNewWriter, "") + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
			Errors: []string{"error"}, Want: []protocol.Rule{anthropicmessages.RError}},
		// Something after it: the stream must end there.
		Outcome{Name: "after error", Scenario: "plain-answer", Stream: CutAnswer(t, amNewWriter, "runtime crashed") + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{anthropicmessages.RError}})
}
