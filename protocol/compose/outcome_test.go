package compose

import (
	"errors"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// TestNoGroundTruthOtherText: a valid stream of other text, reasoning, tool calls and children
// than the script breaks no rule without ground truth (every content rule is off), and only
// content rules with it.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	for _, opt := range []relayOptions{{}, {hideSim: true}} {
		dialecttest.OtherText(t, New().Rules(), func(sc *scenarios.Script) []string {
			if sc.Expected().EndsByTool() {
				return nil // a Sim pause or execution timeout: compose has no such terminal
			}
			return relay(t, sc, opt)
		}, func(frames []string, s *protocol.Session) []protocol.Violation {
			return check(t, frames, s)
		})
	}
}

// TestUnplannedErrorIsOneFinding: a stream the script does not plan to fail, cut by an error,
// is one finding, the session's outcome, and no violation: neither R-terminal for the error
// nor R-compose-args for the scripted tool calls that never came, the answer cut short, the
// tool or thinking left open or the missing [DONE]. That holds for a cut (a non-nil
// streamErr: a transport or decode error, a stall, a truncation) and for an error terminal
// the script does not call for, whose message is Observation.Error. The error terminal's own
// shape and what follows it are still judged, and a scripted error keeps its checks.
func TestUnplannedErrorIsOneFinding(t *testing.T) {
	t.Parallel()
	chain := dialecttest.Script(t, "tool-chain", 1) // three turns, two scripted calls
	thinking := dialecttest.Script(t, "thinking-answer", 1)
	failing := dialecttest.Script(t, "provider-error-midstream", 1)
	crash := dialecttest.Raw(`{"type":"error","error":"runtime crashed"}`)
	// upTo keeps the frames of sc's stream before the nth frame containing sub, then tail.
	upTo := func(sc *scenarios.Script, sub string, nth int, tail ...string) []string {
		f := relay(t, sc, relayOptions{})
		i := dialecttest.Index(t, f, sub, nth)
		return append(f[:i:i], tail...)
	}
	dialecttest.ErrorCases(t, []dialecttest.ErrorCase{
		// Cut by a transport error while the first call's arguments stream: the second
		// scripted call, the answer and the terminal never come.
		{Name: "cut mid arguments", Sc: chain, Frames: upTo(chain, argsDelta, 1), Cut: io.ErrUnexpectedEOF},
		// Cut by a stall inside a running tool (tool_start without tool_end).
		{Name: "cut in a tool", Sc: chain, Frames: upTo(chain, toolEnd, 0), Cut: errors.New("stalled: no frame for 30s")},
		// Cut inside thinking.
		{Name: "cut in thinking", Sc: thinking, Frames: upTo(thinking, `"type":"thinking_end"`, 0), Cut: errors.New("truncated")},
		// An unscripted error terminal after the first call: the second call never streams.
		{Name: "error after first call", Sc: chain, Frames: upTo(chain, argsDelta, 1, crash, dialecttest.Raw("[DONE]")), Errs: []string{"runtime crashed"}},
		// An unscripted error terminal inside a tool, without receipt or [DONE].
		{Name: "error in a tool", Sc: chain, Frames: upTo(chain, toolEnd, 0, crash), Errs: []string{"runtime crashed"}},
		// An unscripted error terminal inside thinking.
		{Name: "error in thinking", Sc: thinking, Frames: upTo(thinking, `"type":"thinking_end"`, 0, crash), Errs: []string{"runtime crashed"}},
		// Both: an error terminal, then the connection drops.
		{Name: "error then cut", Sc: chain, Frames: upTo(chain, argsDelta, 1, crash), Cut: io.ErrUnexpectedEOF, Errs: []string{"runtime crashed"}},
		// The error terminal's own shape is still judged: it has no message ("error").
		{Name: "error without message", Sc: chain, Frames: upTo(chain, argsDelta, 1, dialecttest.Raw(`{"type":"error"}`)), Errs: []string{"error"}, Want: []protocol.Rule{protocol.RFraming}},
		// What follows it is R-terminal's alone (not R-compose-answer for the late text).
		{Name: "text after error", Sc: chain, Frames: upTo(chain, argsDelta, 1, crash, dialecttest.Raw(`{"choices":[{"delta":{"content":"late"}}]}`), dialecttest.Raw("[DONE]")), Errs: []string{"runtime crashed"}, Want: []protocol.Rule{protocol.RTerminal}},
		// A scripted error keeps its checks: its [DONE] must come.
		{Name: "scripted, no done", Sc: failing, Frames: upTo(failing, "[DONE]", 0), Errs: []string{failing.Expected().ProviderError}, Want: []protocol.Rule{protocol.RTerminal}},
		// Without ground truth nothing is scripted.
		{Name: "no ground truth, no done", Sc: failing, NoTruth: true, Frames: upTo(failing, "[DONE]", 0), Errs: []string{failing.Expected().ProviderError}},
	}, func(s *protocol.Session) protocol.Checker { return NewChecker(s) })
}
