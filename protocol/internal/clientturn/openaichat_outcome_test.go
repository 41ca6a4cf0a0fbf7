package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openaichat"
)

// TestOpenAIChatUnscriptedErrorIsTheOutcome: a mid-stream {"error":{…}} chunk in a session whose script
// does not fail is reported in Observation.Error (the load generator's in_band_error outcome)
// and is no violation; the turn is judged as a partial one from there (no finish_reason, usage
// or [DONE] owed, the text and tool calls short of the script). The error's own shape and what
// follows it are still judged, a scripted error keeps its checks (at the wrong turn too), and
// with ground truth off no error is scripted. A cut (any non-nil streamErr) is partial too.
func TestOpenAIChatUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	ErrorOutcomes(t, ocNewWriter, ocNewChecker, openaichat.RError, openaichat.RContent,
		// The error chunk without a message: its shape is judged; "error" is its message.
		Outcome{Name: "no message", Scenario: "plain-answer", Stream: CutAnswer(t, ocNewWriter, "") + `data: {"error":{"type":"server_error"}}` + "\n\n",
			Errors: []string{"error"}, Want: []protocol.Rule{openaichat.RError}},
		// Something after it: the stream must end there.
		Outcome{Name: "after error", Scenario: "plain-answer", Stream: CutAnswer(t, ocNewWriter, "runtime crashed") + "data: [DONE]\n\n",
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{openaichat.RError}})
}
