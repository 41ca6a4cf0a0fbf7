package openaichat

import (
	"errors"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/scenarios"
)

// TestNoGroundTruthOtherText: a valid turn of other text, reasoning and tool calls than the
// script, written by the openai wire's encoder, breaks no rule without ground truth (every
// content rule is off), and only content rules with it.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	clienttest.OtherText(t, Rules(), newWriter, newChecker)
}

// TestUnscriptedErrorIsTheOutcome: a mid-stream {"error":{…}} chunk in a session whose script
// does not fail is reported in Observation.Error (the load generator's in_band_error outcome)
// and is no violation; the turn is judged as a partial one from there (no finish_reason, usage
// or [DONE] owed, the text and tool calls short of the script). The error's own shape and what
// follows it are still judged, a scripted error keeps its checks (at the wrong turn too), and
// with ground truth off no error is scripted. A cut (any non-nil streamErr) is partial too.
func TestUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	text := func(scenario string, turn, nth int) int {
		return clienttest.StepIndex(t, scenario, turn, scenarios.StepText, nth)
	}
	args := clienttest.StepIndex(t, "parallel-tools", 0, scenarios.StepToolArgs, 1)
	crash := func(scenario string, turn, after int) string {
		return clienttest.FailingTurn(t, newWriter, scenario, turn, after, "runtime crashed")
	}
	clienttest.CheckOutcomes(t, newChecker, []clienttest.Outcome{
		// The answer cut short by an error chunk.
		{Name: "mid answer", Scenario: "plain-answer", Stream: crash("plain-answer", 0, text("plain-answer", 0, 5)), Errors: []string{"runtime crashed"}},
		// Inside the tool calls' arguments.
		{Name: "mid tool call", Scenario: "parallel-tools", Stream: crash("parallel-tools", 0, args), Errors: []string{"runtime crashed"}},
		// The error chunk without a message: its shape is judged; "error" is its message.
		{Name: "no message", Scenario: "plain-answer", Stream: clienttest.FailingTurn(t, newWriter, "plain-answer", 0, text("plain-answer", 0, 5), "") + `data: {"error":{"type":"server_error"}}` + "\n\n",
			Errors: []string{"error"}, Want: []protocol.Rule{RError}},
		// Something after it: the stream must end there.
		{Name: "after error", Scenario: "plain-answer", Stream: crash("plain-answer", 0, text("plain-answer", 0, 5)) + "data: [DONE]\n\n",
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{RError}},
		// The scripted error: no violation, and its message reported all the same.
		{Name: "scripted", Scenario: "provider-error-midstream", Stream: clienttest.FailingTurn(t, newWriter, "provider-error-midstream", 0, text("provider-error-midstream", 0, 39), "upstream model crashed (scripted)"),
			Errors: []string{"upstream model crashed (scripted)"}},
		// A script that fails at turn 1 (HTTP 503), an error frame at turn 0: the wrong turn,
		// and the turn's text short of the script.
		{Name: "wrong turn", Scenario: "provider-503-after-tool", Stream: crash("provider-503-after-tool", 0, text("provider-503-after-tool", 0, 0)),
			Errors: []string{"runtime crashed"}, Want: []protocol.Rule{RError, RContent}},
		// Without ground truth nothing is scripted.
		{Name: "no ground truth", Scenario: "provider-503-after-tool", NoTruth: true, Stream: crash("provider-503-after-tool", 0, text("provider-503-after-tool", 0, 0)), Errors: []string{"runtime crashed"}},
		// Cut inside the tool calls (a transport error, a stall, a truncation).
		{Name: "cut", Scenario: "parallel-tools", Stream: clienttest.FailingTurn(t, newWriter, "parallel-tools", 0, args, ""), Cut: errors.Join(io.ErrUnexpectedEOF, errors.New("stalled"))},
	})
}
