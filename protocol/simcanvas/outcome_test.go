package simcanvas

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
)

// TestNoGroundTruthOtherText: a valid stream of other text than the script breaks no rule
// without ground truth (every content rule is off), and only content rules with it; on a
// PII-redacting workflow too.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	dialecttest.OtherText(t, New().Rules(), func(sc *scenarios.Script) []string { return relay(t, sc) }, func(frames []string, s *protocol.Session) []protocol.Violation {
		return check(t, frames, s)
	})
	dialecttest.OtherText(t, New().Rules(), func(sc *scenarios.Script) []string { return redactedRelay(t, sc) }, func(frames []string, s *protocol.Session) []protocol.Violation {
		return dialecttest.Check(t, frames, s, func() protocol.Checker {
			c := NewChecker(s)
			c.Redacted()
			return c
		})
	})
}

// redactedRelay is relay as a PII-redacting workflow sends it: no live frames, the block's
// output redacted with block:completed.
func redactedRelay(t *testing.T, sc *scenarios.Script) []string {
	var out []string
	for _, f := range relay(t, sc) {
		switch {
		case strings.Contains(f, `"type":"stream:chunk"`), strings.Contains(f, `"type":"stream:chunk_reset"`),
			strings.Contains(f, `"type":"stream:thinking"`), strings.Contains(f, `"type":"stream:tool"`):
		default:
			out = append(out, Redact(f))
		}
	}
	return renumber(out)
}

// TestUnscriptedErrorIsTheOutcome: an execution:error (or a failed execution:completed) the
// script does not call for is reported in Observation.Error (the load generator's
// in_band_error outcome) and is no violation; the stream is judged as a partial one from
// there. What follows it is still judged, a scripted error keeps its checks, and with ground
// truth off no error is scripted.
func TestUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	plain := dialecttest.Script(t, "plain-answer", 1)
	tool := dialecttest.Script(t, "preamble-tool", 1)
	failing := dialecttest.Script(t, "provider-error-midstream", 1)
	// cutWith keeps frames up to (not including) the first containing sub, then tail,
	// renumbered.
	cutWith := func(sc *scenarios.Script, sub string, tail ...string) []string {
		f := relay(t, sc)
		f = append(f[:dialecttest.Index(t, f, sub, 0):dialecttest.Index(t, f, sub, 0)], tail...)
		return renumber(f)
	}
	crash := wrap(TypeExecutionError, 0, `{"error":"runtime crashed","duration":1}`)
	done := dialecttest.Raw("[DONE]")
	dialecttest.ErrorCases(t, []dialecttest.ErrorCase{
		// The answer cut short by an error.
		{Name: "mid answer", Sc: plain, Frames: cutWith(plain, `"type":"stream:chunk"`, crash, done), Errs: []string{"runtime crashed"}},
		// A tool left open, no block:completed, no [DONE].
		{Name: "tool open, no done", Sc: tool, Frames: cutWith(tool, `"phase":"end"`, crash), Errs: []string{"runtime crashed"}},
		// A failed execution:completed; "error" when it says no more.
		{Name: "completed, failed", Sc: plain, Frames: cutWith(plain, `"type":"execution:completed"`, wrap(TypeExecutionCompleted, 0, `{"success":false,"duration":1}`), done), Errs: []string{"error"}},
		// The error's own shape: data must be an object.
		{Name: "error data not an object", Sc: plain, Frames: cutWith(plain, `"type":"execution:completed"`, wrap(TypeExecutionError, 0, `"crashed"`), done), Errs: []string{"error"}, Want: []protocol.Rule{protocol.RFraming}},
		// A frame after the error is R-terminal's.
		{Name: "chunk after error", Sc: plain, Frames: cutWith(plain, `"type":"execution:completed"`, crash, wrap(TypeChunk, 0, `{"blockId":"agent-1","chunk":"late"}`), done), Errs: []string{"runtime crashed"}, Want: []protocol.Rule{protocol.RTerminal}},
		// A scripted error keeps its checks: [DONE] must follow.
		{Name: "scripted, no done", Sc: failing, Frames: func() []string { f := relay(t, failing); return f[:len(f)-1] }(), Errs: []string{failing.Expected().ProviderError}, Want: []protocol.Rule{protocol.RTerminal}},
		// Without ground truth nothing is scripted.
		{Name: "no ground truth, no done", Sc: failing, NoTruth: true, Frames: func() []string { f := relay(t, failing); return f[:len(f)-1] }(), Errs: []string{failing.Expected().ProviderError}},
		// Without ground truth a scripted error that does not come is no violation either.
		{Name: "no ground truth, error missing", Sc: failing, NoTruth: true, Frames: relay(t, plain)},
	}, func(s *protocol.Session) protocol.Checker { return NewChecker(s) })
	// A cut (any non-nil streamErr) is judged partial too.
	c := NewChecker(dialecttest.Session(tool))
	f := relay(t, tool)
	dialecttest.ObserveErrors(t, c, f[:dialecttest.Index(t, f, `"phase":"end"`, 0)])
	if vs := c.Finish(errors.Join(io.ErrUnexpectedEOF, errors.New("stalled"))); len(vs) != 0 {
		t.Errorf("cut stream: %v, want none", vs)
	}
}
