package compose

import (
	"errors"
	"io"
	"strings"
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
	for _, tc := range []struct {
		name    string
		sc      *scenarios.Script
		noTruth bool
		frames  []string
		cut     error // the streamErr Finish gets
		errs    []string
		want    []protocol.Rule
	}{
		// Cut by a transport error while the first call's arguments stream: the second
		// scripted call, the answer and the terminal never come.
		{"cut mid arguments", chain, false, upTo(chain, argsDelta, 1), io.ErrUnexpectedEOF, nil, nil},
		// Cut by a stall inside a running tool (tool_start without tool_end).
		{"cut in a tool", chain, false, upTo(chain, toolEnd, 0), errors.New("stalled: no frame for 30s"), nil, nil},
		// Cut inside thinking.
		{"cut in thinking", thinking, false, upTo(thinking, `"type":"thinking_end"`, 0), errors.New("truncated"), nil, nil},
		// An unscripted error terminal after the first call: the second call never streams.
		{"error after first call", chain, false, upTo(chain, argsDelta, 1, crash, dialecttest.Raw("[DONE]")), nil, []string{"runtime crashed"}, nil},
		// An unscripted error terminal inside a tool, without receipt or [DONE].
		{"error in a tool", chain, false, upTo(chain, toolEnd, 0, crash), nil, []string{"runtime crashed"}, nil},
		// An unscripted error terminal inside thinking.
		{"error in thinking", thinking, false, upTo(thinking, `"type":"thinking_end"`, 0, crash), nil, []string{"runtime crashed"}, nil},
		// Both: an error terminal, then the connection drops.
		{"error then cut", chain, false, upTo(chain, argsDelta, 1, crash), io.ErrUnexpectedEOF, []string{"runtime crashed"}, nil},
		// The error terminal's own shape is still judged: it has no message ("error").
		{"error without message", chain, false, upTo(chain, argsDelta, 1, dialecttest.Raw(`{"type":"error"}`)), nil, []string{"error"}, []protocol.Rule{protocol.RFraming}},
		// What follows it is R-terminal's alone (not R-compose-answer for the late text).
		{"text after error", chain, false, upTo(chain, argsDelta, 1, crash, dialecttest.Raw(`{"choices":[{"delta":{"content":"late"}}]}`), dialecttest.Raw("[DONE]")), nil, []string{"runtime crashed"}, []protocol.Rule{protocol.RTerminal}},
		// A scripted error keeps its checks: its [DONE] must come.
		{"scripted, no done", failing, false, upTo(failing, "[DONE]", 0), nil, []string{failing.Expected().ProviderError}, []protocol.Rule{protocol.RTerminal}},
		// Without ground truth nothing is scripted.
		{"no ground truth, no done", failing, true, upTo(failing, "[DONE]", 0), nil, []string{failing.Expected().ProviderError}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := dialecttest.Session(tc.sc)
			s.NoGroundTruth = tc.noTruth
			c := NewChecker(s)
			errs := dialecttest.ObserveErrors(t, c, tc.frames)
			if strings.Join(errs, "|") != strings.Join(tc.errs, "|") {
				t.Errorf("Observation.Error %q, want %q", errs, tc.errs)
			}
			dialecttest.WantRules(t, c.Finish(tc.cut), tc.want, tc.frames)
		})
	}
}
