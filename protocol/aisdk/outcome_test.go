package aisdk

import (
	"errors"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// frames makes SSE frames of parts (data payloads).
func frames(parts []string) []string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = dialecttest.Raw(p)
	}
	return out
}

// TestNoGroundTruthOtherText: a valid stream of other text, reasoning and tool calls than the
// script breaks no rule without ground truth (every content rule is off), and only content
// rules with it; with reasoning forwarded or not.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	for _, reasoning := range []bool{false, true} {
		dialecttest.OtherText(t, New(Options{}).Rules(), func(sc *scenarios.Script) []string {
			if sc.Expected().EndsByTool() {
				return nil // a Sim pause or execution timeout: no streamText route scripts them
			}
			return frames(scriptParts(sc, reasoning, false))
		}, func(f []string, s *protocol.Session) []protocol.Violation {
			d := New(Options{NoReasoning: !reasoning})
			return dialecttest.Check(t, f, s, func() protocol.Checker { return d.NewChecker(s) })
		})
	}
}

// TestUnscriptedErrorIsTheOutcome: an error part the script does not call for is reported in
// Observation.Error (the load generator's in_band_error outcome) and is no violation; the
// stream is judged as a partial one from there (no missing finish or [DONE], no parts left
// open, no scripted call owed). What follows it is still judged (no new content), a scripted
// error keeps its checks, and with ground truth off no error is scripted.
func TestUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	script := func(name string) *scenarios.Script { return dialecttest.Script(t, name, 1) }
	plain, chain, failing := script("plain-answer"), script("tool-chain"), script("provider-error-midstream")
	crash := part("type", "error", "errorText", "runtime crashed")
	// upTo keeps sc's parts before the nth part containing sub, then tail.
	upTo := func(sc *scenarios.Script, sub string, nth int, tail ...string) []string {
		p := scriptParts(sc, false, false)
		i := dialecttest.Index(t, p, sub, nth)
		return frames(append(p[:i:i], tail...))
	}
	dialecttest.ErrorCases(t, []dialecttest.ErrorCase{
		// The route's error mid step: the open text ended, the step and the run finished.
		{Name: "mid text", Sc: plain, Frames: upTo(plain, `"text-delta"`, 2, crash, part("type", "text-end", "id", "txt-0"), part("type", "finish-step"), part("type", "finish", "finishReason", "error"), "[DONE]"), Errs: []string{"runtime crashed"}},
		// In a tool call's input, with nothing after: text and call left open, no [DONE].
		{Name: "mid tool input", Sc: chain, Frames: upTo(chain, `"tool-input-delta"`, 1, crash), Errs: []string{"runtime crashed"}},
		// The SDK's masked message.
		{Name: "masked", Sc: chain, Frames: upTo(chain, `"start-step"`, 1, part("type", "error", "errorText", "An error occurred."), "[DONE]"), Errs: []string{"An error occurred."}},
		// The error part's own shape: errorText is required.
		{Name: "no errorText", Sc: chain, Frames: upTo(chain, `"start-step"`, 1, part("type", "error"), "[DONE]"), Errs: []string{"error"}, Want: []protocol.Rule{protocol.RFraming}},
		// New content after it is R-terminal's (and is not compared with the script).
		{Name: "content after error", Sc: chain, Frames: upTo(chain, `"start-step"`, 1, crash, part("type", "text-start", "id", "x"), part("type", "text-delta", "id", "x", "delta", "late"), part("type", "text-end", "id", "x"), "[DONE]"), Errs: []string{"runtime crashed"}, Want: []protocol.Rule{protocol.RTerminal}},
		// A scripted error keeps its checks: [DONE] must follow.
		{Name: "scripted, no done", Sc: failing, Frames: upTo(failing, "[DONE]", 0), Errs: []string{failing.Expected().ProviderError}, Want: []protocol.Rule{protocol.RTerminal}},
		// Without ground truth nothing is scripted.
		{Name: "no ground truth, no done", Sc: failing, NoTruth: true, Frames: upTo(failing, "[DONE]", 0), Errs: []string{failing.Expected().ProviderError}},
		// A finish that says the run failed, without the error part that says why: the
		// outcome all the same (it passed as a clean stream before).
		{Name: "finish error, no error part", Sc: plain, Frames: upTo(plain, `"text-delta"`, 2, part("type", "text-end", "id", "txt-0"), part("type", "finish-step"), part("type", "finish", "finishReason", "error"), "[DONE]"), Errs: []string{"finish with finishReason error, and no error part"}},
		{Name: "finish error, no error part, no ground truth", Sc: plain, NoTruth: true, Frames: upTo(plain, `"type":"finish"`, 0, part("type", "finish", "finishReason", "error"), "[DONE]"), Errs: []string{"finish with finishReason error, and no error part"}},
		// Where the script fails, the missing error part is judgeTerminal's violation.
		{Name: "scripted, finish error, no error part", Sc: failing, Frames: upTo(failing, `"type":"error"`, 0, part("type", "text-end", "id", "txt-0"), part("type", "finish-step"), part("type", "finish", "finishReason", "error"), "[DONE]"), Want: []protocol.Rule{protocol.RTerminal}},
		// Without ground truth, a finish that says the step called tools where none streamed.
		{Name: "tool-calls without a tool part", Sc: plain, NoTruth: true, Frames: upTo(plain, `"type":"finish"`, 0, part("type", "finish", "finishReason", "tool-calls"), "[DONE]"), Want: []protocol.Rule{protocol.RTerminal}},
	}, func(s *protocol.Session) protocol.Checker { return New(Options{NoReasoning: true}).NewChecker(s) })
	// A cut (any non-nil streamErr) is judged partial too: no scripted call owed.
	c := New(Options{NoReasoning: true}).NewChecker(dialecttest.Session(chain))
	for _, ev := range dialecttest.DecodeAll(t, upTo(chain, `"tool-input-delta"`, 1)) {
		c.Observe(&ev)
	}
	if vs := c.Finish(errors.Join(io.ErrUnexpectedEOF, errors.New("stalled"))); len(vs) != 0 {
		t.Errorf("cut stream: %v, want none", vs)
	}
}
