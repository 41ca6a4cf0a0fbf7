package simchat

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
// without ground truth (every content rule is off), for every client profile, and only
// content rules with it.
func TestNoGroundTruthOtherText(t *testing.T) {
	t.Parallel()
	for _, cl := range clients {
		t.Run(cl.name, func(t *testing.T) {
			t.Parallel()
			dialecttest.OtherText(t, New().Rules(), func(sc *scenarios.Script) []string {
				return relay(t, sc, cl.optedIn, cl.policy)
			}, func(frames []string, s *protocol.Session) []protocol.Violation {
				return check(t, frames, &testSession{Session: s, optedIn: cl.optedIn, policy: cl.policy})
			})
		})
	}
}

// TestUnscriptedErrorIsTheOutcome: an error terminal the script does not call for is reported
// in Observation.Error (the load generator's in_band_error outcome) and is no violation; the
// stream is judged as a partial one from there (an answer cut short, no "[DONE]", a tool left
// open: nothing). Its own shape and what follows it are still judged, a scripted error keeps
// its checks, and with ground truth off no error is scripted.
func TestUnscriptedErrorIsTheOutcome(t *testing.T) {
	t.Parallel()
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	plain := dialecttest.Script(t, "plain-answer", 1)
	tool := dialecttest.Script(t, "preamble-tool", 1)
	failing := dialecttest.Script(t, "provider-error-midstream", 1)
	errFrame := dialecttest.Raw(`{"event":"error","error":"runtime crashed"}`)
	// cut keeps frames up to (not including) the first containing sub, then adds tail.
	cut := func(frames []string, sub string, tail ...string) []string {
		return append(append([]string(nil), frames[:dialecttest.Index(t, frames, sub, 0)]...), tail...)
	}
	for _, tc := range []struct {
		name    string
		sc      *scenarios.Script
		optedIn bool
		noTruth bool
		frames  []string
		errs    []string
		want    []protocol.Rule
	}{
		// The answer cut short by an error, with its "[DONE]".
		{"mid answer", plain, true, false, cut(relay(t, plain, true, all), `"chunk":" `+strings.Fields(plain.Expected().FinalText())[3], errFrame, dialecttest.Raw(`"[DONE]"`)), []string{"runtime crashed"}, nil},
		// Without its "[DONE]", a tool left open, the final text never streamed.
		{"tool open, no done", tool, true, false, cut(relay(t, tool, true, all), `"phase":"end"`, errFrame), []string{"runtime crashed"}, nil},
		// A legacy client that got nothing before the error.
		{"legacy", plain, false, false, cut(relay(t, plain, false, all), `"chunk"`, errFrame, dialecttest.Raw(`"[DONE]"`)), []string{"runtime crashed"}, nil},
		// final with success false is an error terminal too; "error" when it says no more.
		{"final success false", plain, true, false, cut(relay(t, plain, true, all), `"event":"final"`, dialecttest.Raw(`{"event":"final","data":{"success":false}}`)), []string{"error"}, nil},
		// The error frame's own shape is still judged.
		{"error without message", plain, true, false, cut(relay(t, plain, true, all), `"event":"final"`, dialecttest.Raw(`{"event":"error"}`), dialecttest.Raw(`"[DONE]"`)), []string{"error"}, []protocol.Rule{protocol.RFraming}},
		// So is what follows it: one terminal, then only "[DONE]".
		{"text after error", plain, true, false, cut(relay(t, plain, true, all), `"event":"final"`, errFrame, dialecttest.Raw(`{"blockId":"b1","chunk":"late"}`), dialecttest.Raw(`"[DONE]"`)), []string{"runtime crashed"}, []protocol.Rule{protocol.RTerminal}},
		// A scripted error is not the outcome: the stream must still end with "[DONE]".
		{"scripted, no done", failing, true, false, cut(relay(t, failing, true, all), `"[DONE]"`), []string{failing.Expected().ProviderError}, []protocol.Rule{protocol.RTerminal}},
		// Without ground truth nothing is scripted: the same stream is the outcome.
		{"no ground truth, no done", failing, true, true, cut(relay(t, failing, true, all), `"[DONE]"`), []string{failing.Expected().ProviderError}, nil},
		// Without ground truth a scripted error that does not come is no violation either.
		{"no ground truth, error missing", failing, true, true, relay(t, plain, true, all), nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := session(tc.sc, tc.optedIn, all)
			s.NoGroundTruth = tc.noTruth
			c := s.checker()
			errs := dialecttest.ObserveErrors(t, c, tc.frames)
			if strings.Join(errs, "|") != strings.Join(tc.errs, "|") {
				t.Errorf("Observation.Error %q, want %q", errs, tc.errs)
			}
			dialecttest.WantRules(t, c.Finish(nil), tc.want, tc.frames)
		})
	}
	// A cut (a transport error, a stall, a truncation: any non-nil streamErr) is judged
	// partial too: a tool left open and the text short are not findings.
	s := session(tool, true, all)
	c := s.checker()
	dialecttest.ObserveErrors(t, c, cut(relay(t, tool, true, all), `"phase":"end"`))
	if vs := c.Finish(errors.Join(io.ErrUnexpectedEOF, errors.New("stalled"))); len(vs) != 0 {
		t.Errorf("cut stream: %v, want none", vs)
	}
}
