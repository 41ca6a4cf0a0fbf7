package simchat

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

const block = "b1"

// relay returns the frames a conforming runtime sends a sim-chat client for script: live
// chunks and a chunk_reset per intermediate turn with text for opted-in clients, settled final
// text for legacy ones, thinking and tool frames behind header and policy, a redacted final
// envelope or the error terminal, then "[DONE]".
func relay(t testing.TB, script *scenarios.Script, optedIn bool, pol Policy) []string {
	t.Helper()
	rec := &dialecttest.Recorder{}
	w := NewWriter(rec)
	must := dialecttest.Must(t)
	thinking := optedIn && pol.IncludeThinking
	tools := optedIn && pol.IncludeToolCalls
	var summaries []ToolSummary
	var budget ThinkingBudget
	for _, turn := range script.Turns {
		if turn.HTTPStatus != 0 {
			must(w.Error(turn.ErrorMessage))
			must(w.Done())
			return rec.Frames
		}
		var text strings.Builder
		for i, step := range turn.Steps {
			switch step.Kind {
			case scenarios.StepThinking:
				if piece := budget.Admit(step.Text); thinking && piece != "" {
					must(w.Thinking(block, piece))
				}
			case scenarios.StepText:
				text.WriteString(step.Text)
				if optedIn {
					must(w.Chunk(block, step.Text))
				}
			}
			if i == turn.ErrorAfterStep {
				must(w.Error(turn.ErrorMessage))
				must(w.Done())
				return rec.Frames
			}
		}
		if turn.ErrorAfterStep >= len(turn.Steps) {
			must(w.Error(turn.ErrorMessage))
			must(w.Done())
			return rec.Frames
		}
		if len(turn.ToolCalls) == 0 {
			if !optedIn {
				must(w.Chunk(block, text.String()))
			}
			must(w.Final(FinalOutput{Content: text.String(), ToolCalls: summaries}))
			must(w.Done())
			return rec.Frames
		}
		if optedIn && text.Len() > 0 {
			must(w.Reset(block))
		}
		for _, call := range turn.ToolCalls {
			if tools {
				must(w.ToolStart(block, call.ID, call.Name))
			}
		}
		for _, call := range turn.ToolCalls {
			if tools {
				must(w.ToolEnd(block, call.ID, call.Name, call.Outcome))
			}
			summaries = append(summaries, ToolSummary{ID: call.ID, Name: call.Name, Status: call.Outcome})
		}
		for _, call := range turn.ToolCalls {
			switch {
			case call.Pause:
				must(w.FinalPaused(FinalOutput{ToolCalls: summaries}))
				must(w.Done())
				return rec.Frames
			case call.TimesOut:
				must(w.Error(scenarios.ExecutionTimeoutResult))
				must(w.Done())
				return rec.Frames
			}
		}
	}
	t.Fatalf("script %s ends without a final turn", script.Scenario)
	return nil
}

// check judges frames as the load generator does, with a fresh checker for s.
func check(t testing.TB, frames []string, s *testSession) []protocol.Violation {
	t.Helper()
	return dialecttest.Check(t, frames, s.Session, func() protocol.Checker { return s.checker() })
}

// testSession is a session with the client settings its checker takes.
type testSession struct {
	*protocol.Session
	optedIn bool
	policy  Policy
}

func (s *testSession) checker() *Checker { return NewChecker(s.Session, s.optedIn, s.policy) }

func session(sc *scenarios.Script, optedIn bool, pol Policy) *testSession {
	return &testSession{Session: dialecttest.Session(sc), optedIn: optedIn, policy: pol}
}

// clients are the sim-chat client profiles: legacy, and opted in under every policy.
var clients = []struct {
	name    string
	optedIn bool
	policy  Policy
}{
	{"legacy", false, Policy{}},
	{"legacy-policy-all", false, Policy{IncludeThinking: true, IncludeToolCalls: true}},
	{"opted-none", true, Policy{}},
	{"opted-thinking", true, Policy{IncludeThinking: true}},
	{"opted-tools", true, Policy{IncludeToolCalls: true}},
	{"opted-all", true, Policy{IncludeThinking: true, IncludeToolCalls: true}},
}

func TestConformingStreamsHaveNoViolations(t *testing.T) {
	t.Parallel()
	dialecttest.EachScript(t, func(sc *scenarios.Script, label string) {
		for _, cl := range clients {
			dialecttest.NoViolations(t, label+" "+cl.name, relay(t, sc, cl.optedIn, cl.policy), func(frames []string, aborted bool) []protocol.Violation {
				s := session(sc, cl.optedIn, cl.policy)
				s.Aborted = aborted
				return check(t, frames, s)
			})
		}
	})
}

// edit changes a conforming frame sequence into a broken one.
type edit func(t *testing.T, frames []string) []string

func TestBrokenStreamsReportTheirRule(t *testing.T) {
	t.Parallel()
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	none := Policy{}
	cases := []struct {
		name     string
		scenario string
		optedIn  bool
		relayPol Policy // the policy the stream is produced with
		checkPol Policy // the policy the client assumes
		aborted  bool
		edit     edit
		want     []protocol.Rule
	}{
		// A reset at the end of the final turn, then the text again (runtime fault
		// reset-in-final): the client still converges.
		{"reset in final turn", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			final := dialecttest.Script(t, "preamble-tool", 1).Expected().FinalText()
			return dialecttest.Insert(f, dialecttest.Index(t, f, `"event":"final"`, 0), dialecttest.Raw(`{"blockId":"b1","event":"chunk_reset"}`),
				dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, final))+`}`))
		}, []protocol.Rule{protocol.RResetScope}},
		// A reset at the end of the final turn that wipes the answer for good.
		{"reset in final turn, not re-sent", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.Index(t, f, `"event":"final"`, 0), dialecttest.Raw(`{"blockId":"b1","event":"chunk_reset"}`))
		}, []protocol.Rule{protocol.RResetScope, protocol.RConverge}},
		// A reset of a block that streamed nothing since its last reset.
		{"reset without text", "preamble-tool", true, none, none, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `chunk_reset`, 0)
			return dialecttest.Insert(f, i+1, f[i])
		}, []protocol.Rule{protocol.RResetScope}},
		// A reset sent late, after the last tool settled, belongs to the final turn.
		{"reset after last tool", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			r := dialecttest.Index(t, f, `chunk_reset`, 0)
			reset := f[r]
			f = dialecttest.Remove(f, r)
			return dialecttest.Insert(f, dialecttest.LastIndex(t, f, `"phase":"end"`)+1, reset)
		}, []protocol.Rule{protocol.RResetScope}},
		// The preamble is never retracted: the client ends with preamble + answer.
		{"missing reset", "preamble-tool", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `chunk_reset`, 0))
		}, []protocol.Rule{protocol.RConverge}},
		// One answer chunk is altered.
		{"wrong answer text", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[dialecttest.Index(t, f, `"chunk"`, 1)] = dialecttest.Raw(`{"blockId":"b1","chunk":" WRONG"}`)
			return f
		}, []protocol.Rule{protocol.RConverge}},
		// The stream stops short of the final text but ends cleanly.
		{"truncated answer", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"chunk"`, 2))
		}, []protocol.Rule{protocol.RConverge}},
		// The preamble before the reset is not what the script streamed.
		{"wrong preamble", "preamble-tool", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"chunk"`, 1))
		}, []protocol.Rule{protocol.RConverge}},
		// Thinking text sent as an answer chunk (runtime fault leak-thinking).
		{"thinking leaked into chunk", "thinking-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			sc := dialecttest.Script(t, "thinking-answer", 1)
			var leaks []string
			for _, st := range sc.Turns[0].Steps {
				if st.Kind == scenarios.StepThinking {
					leaks = append(leaks, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, st.Text))+`}`))
				}
			}
			return dialecttest.Insert(f, 0, leaks...)
		}, []protocol.Rule{protocol.RNoThinkingAnswer}},
		// Thinking leaked in a turn without text, then retracted by the turn's reset: the
		// reset is the leak's consequence, not a scope error.
		{"leaked thinking retracted", "tool-chain", true, none, none, false, func(t *testing.T, f []string) []string {
			var leaks []string
			for _, st := range dialecttest.Script(t, "tool-chain", 1).Turns[0].Steps {
				if st.Kind == scenarios.StepThinking {
					leaks = append(leaks, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, st.Text))+`}`))
				}
			}
			return dialecttest.Insert(f, 0, append(leaks, dialecttest.Raw(`{"blockId":"b1","event":"chunk_reset"}`))...)
		}, []protocol.Rule{protocol.RNoThinkingAnswer}},
		// Thinking leaked to a legacy client as well.
		{"thinking leaked to legacy", "thinking-answer", false, none, none, false, func(t *testing.T, f []string) []string {
			th := dialecttest.Script(t, "thinking-answer", 1).Expected().Turns[0].Thinking
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, th))+`}`))
		}, []protocol.Rule{protocol.RNoThinkingAnswer}},
		// Live text and resets to a client without the header (runtime fault ignore-header).
		{"live text to legacy client", "preamble-tool", false, none, none, false, func(t *testing.T, _ []string) []string {
			return relay(t, dialecttest.Script(t, "preamble-tool", 1), true, Policy{})
		}, []protocol.Rule{RLegacySettled}},
		// The settled text arrives in two pieces.
		{"legacy text split", "plain-answer", false, none, none, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"chunk"`, 0)
			text := dialecttest.Script(t, "plain-answer", 1).Expected().FinalText()
			f = dialecttest.Remove(f, i)
			return dialecttest.Insert(f, i, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, text[:5]))+`}`),
				dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, text[5:]))+`}`))
		}, []protocol.Rule{RLegacySettled}},
		// A runtime may settle the text a failed turn streamed before the error...
		{"legacy settles failed turn", "provider-error-midstream", false, none, none, false, func(t *testing.T, f []string) []string {
			text := dialecttest.Script(t, "provider-error-midstream", 1).Expected().Turns[0].Text
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, text))+`}`))
		}, nil},
		// ...but never an earlier turn's preamble.
		{"legacy gets preamble on failure", "provider-503-after-tool", false, none, none, false, func(t *testing.T, f []string) []string {
			text := dialecttest.Script(t, "provider-503-after-tool", 1).Expected().Turns[0].Text
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, text))+`}`))
		}, []protocol.Rule{RLegacySettled}},
		// A legacy stream that never delivers the answer.
		{"legacy text missing", "plain-answer", false, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"chunk"`, 0))
		}, []protocol.Rule{RLegacySettled}},
		// Thinking frames for a deployment without includeThinking (runtime fault ignore-policy).
		{"thinking without policy", "thinking-answer", true, all, none, false, nil, []protocol.Rule{RThinkingGate}},
		// Thinking frames to a legacy client even though the policy allows them.
		{"thinking to legacy", "thinking-answer", false, all, all, false, func(t *testing.T, _ []string) []string {
			f := relay(t, dialecttest.Script(t, "thinking-answer", 1), false, none)
			return dialecttest.Insert(f, 0, dialecttest.Raw(`{"blockId":"b1","event":"thinking","data":"hmm"}`))
		}, []protocol.Rule{RThinkingGate}},
		// The policy and header allow thinking, but none arrives.
		{"thinking missing", "thinking-answer", true, none, all, false, nil, []protocol.Rule{RThinkingGate}},
		// Thinking frames whose text is not the script's.
		{"thinking altered", "thinking-answer", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[dialecttest.Index(t, f, `"event":"thinking"`, 1)] = dialecttest.Raw(`{"blockId":"b1","event":"thinking","data":" bogus"}`)
			return f
		}, []protocol.Rule{RThinkingGate}},
		// Tool frames for a deployment without includeToolCalls.
		{"tools without policy", "preamble-tool", true, all, none, false, nil, []protocol.Rule{RToolGate}},
		// The policy allows tools, but none arrive.
		{"tools missing", "preamble-tool", true, none, all, false, nil, []protocol.Rule{RToolGate}},
		// A tool settles with the wrong status.
		{"tool wrong status", "tool-error", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"phase":"end"`, 0)
			f[i] = strings.Replace(f[i], `"status":"error"`, `"status":"success"`, 1)
			return f
		}, []protocol.Rule{RToolGate}},
		// Tool arguments in a lifecycle frame (runtime fault expose-tool-args).
		{"tool args in frame", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"phase":"start"`, 0)
			f[i] = strings.Replace(f[i], `"event":"tool"`, `"event":"tool","arguments":{"city":"Paris"}`, 1)
			return f
		}, []protocol.Rule{RToolRedaction}},
		// Tool results in the final envelope.
		{"tool result in final", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"event":"final"`, 0)
			f[i] = strings.Replace(f[i], `"status":"success"`, `"status":"success","result":"14°C"`, 1)
			return f
		}, []protocol.Rule{RToolRedaction}},
		// A tool never settles (runtime fault unbalanced-tool).
		{"tool end dropped", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"phase":"end"`, 0))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// A tool settles twice.
		{"tool end twice", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"phase":"end"`, 0)
			return dialecttest.Insert(f, i, f[i])
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// A start with a status (a runtime saying "running"): the protocol settles a tool only
		// on end, so a status on start is not judged (the canvas sink never judged it either).
		{"status on start", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"phase":"start"`, 0)
			f[i] = strings.Replace(f[i], `"phase":"start"`, `"phase":"start","status":"running"`, 1)
			return f
		}, nil},
		// ... while a start that is never settled still breaks the lifecycle.
		{"status on start, end dropped", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"phase":"start"`, 0)
			f[i] = strings.Replace(f[i], `"phase":"start"`, `"phase":"start","status":"success"`, 1)
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"phase":"end"`, 0))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// A tool settles with a status outside the three.
		{"tool invalid status", "preamble-tool", true, all, all, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			i := dialecttest.Index(t, f, `"phase":"end"`, 0)
			f[i] = strings.Replace(f[i], `"status":"success"`, `"status":"done"`, 1)
			return f
		}, []protocol.Rule{protocol.RToolLifecycle, RToolGate}},
		// Two terminals (runtime fault double-terminal).
		{"double final", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"event":"final"`, 0)
			return dialecttest.Insert(f, i, f[i])
		}, []protocol.Rule{protocol.RTerminal}},
		// A final after an error.
		{"final after error", "provider-error-midstream", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.Index(t, f, `"event":"error"`, 0)+1, dialecttest.Raw(`{"event":"final","data":{"success":true,"output":{}}}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// The stream ends without "[DONE]" (runtime fault missing-done).
		{"missing done", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return f[:len(f)-1]
		}, []protocol.Rule{protocol.RTerminal}},
		// The stream ends without any terminal.
		{"missing terminal", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return f[:len(f)-2]
		}, []protocol.Rule{protocol.RTerminal}},
		// Text after "[DONE]".
		{"text after done", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return append(append([]string(nil), f...), dialecttest.Raw(`{"blockId":"b1","chunk":"late"}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// A success terminal although the provider fails the conversation.
		{"final instead of error", "provider-error-midstream", true, none, none, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[dialecttest.Index(t, f, `"event":"error"`, 0)] = dialecttest.Raw(`{"event":"final","data":{"success":true,"output":{}}}`)
			return f
		}, []protocol.Rule{protocol.RTerminal}},
		// An error terminal although the scenario succeeds: the session's in_band_error
		// outcome (Observation.Error), not a violation (TestUnscriptedErrorIsTheOutcome).
		{"error instead of final", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[dialecttest.Index(t, f, `"event":"final"`, 0)] = dialecttest.Raw(`{"event":"error","error":"boom"}`)
			return f
		}, nil},
		// Not JSON at all.
		{"garbage frame", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"blockId":"b1","chunk":`))
		}, []protocol.Rule{protocol.RFraming}},
		// JSON of an unknown shape.
		{"unknown event", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"blockId":"b1","event":"sparkle"}`))
		}, []protocol.Rule{protocol.RFraming}},
		// An empty chunk, which the protocol never sends.
		{"empty chunk", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"blockId":"b1","chunk":""}`))
		}, []protocol.Rule{protocol.RFraming}},
		// The canvas's raw end marker on the chat wire.
		{"raw done", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[len(f)-1] = "data: [DONE]\n\n"
			return f
		}, []protocol.Rule{protocol.RFraming}},
		// A named event, which sim-chat never sends.
		{"event line", "plain-answer", true, none, none, false, func(t *testing.T, f []string) []string {
			f = append([]string(nil), f...)
			f[0] = "event: message\n" + f[0]
			return f
		}, []protocol.Rule{protocol.RFraming}},
		// An aborted stream whose text so far is already wrong.
		{"aborted with wrong text", "abort-mid-answer", true, none, none, true, func(t *testing.T, f []string) []string {
			return []string{f[0], dialecttest.Raw(`{"blockId":"b1","chunk":" WRONG"}`)}
		}, []protocol.Rule{protocol.RConverge}},
		// An aborted stream still may not carry thinking without the policy.
		{"aborted with gated thinking", "abort-during-thinking", true, all, none, true, func(t *testing.T, f []string) []string {
			return f[:2]
		}, []protocol.Rule{RThinkingGate}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantEdited(t, tc.scenario, tc.optedIn, tc.relayPol, tc.checkPol, tc.aborted, tc.edit, tc.want)
		})
	}
}

// wantEdited judges scenario's conforming stream to a client (opted in or not, relayed under
// relayPol), edited by edit when set, with the client's policy checkPol and the session aborted
// or not: exactly want breaks.
func wantEdited(t *testing.T, scenario string, optedIn bool, relayPol, checkPol Policy, aborted bool, edit func(*testing.T, []string) []string, want []protocol.Rule) {
	sc := dialecttest.Script(t, scenario, 1)
	frames := relay(t, sc, optedIn, relayPol)
	if edit != nil {
		frames = edit(t, frames)
	}
	s := session(sc, optedIn, checkPol)
	s.Aborted = aborted
	dialecttest.WantRules(t, check(t, frames, s), want, frames)
}

// A transport or decode error is judged like an abort: nothing is missing, but what arrived
// still counts. The error itself is the session's outcome (transport_error, decode_error), not
// a violation.
func TestStreamErrorJudgesOnlyWhatWasSeen(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "plain-answer", 3)
	frames := relay(t, sc, true, Policy{})
	c := session(sc, true, Policy{}).checker()
	dec := sse.NewDecoder(strings.NewReader(strings.Join(frames[:3], "")))
	var ev sse.Event
	for dec.Next(&ev) == nil {
		c.Observe(&ev)
	}
	if vs := c.Finish(io.ErrUnexpectedEOF); len(vs) != 0 {
		t.Errorf("violations after a transport error = %v, want none", vs)
	}
	c = session(sc, true, Policy{}).checker()
	limit := &sse.LimitError{What: "line", Limit: 10}
	if vs := c.Finish(limit); len(vs) != 0 {
		t.Errorf("violations after a limit error = %v, want none (the decode_error outcome)", vs)
	}
}

func TestObservationKinds(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "preamble-tool", 1)
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	frames := relay(t, sc, true, all)
	c := session(sc, true, all).checker()
	dec := sse.NewDecoder(bytes.NewReader([]byte(strings.Join(frames, ""))))
	var ev sse.Event
	counts := map[protocol.FrameKind]int{}
	answerBytes := 0
	for dec.Next(&ev) == nil {
		o := c.Observe(&ev)
		counts[o.Kind]++
		if o.Kind == protocol.FrameAnswer {
			answerBytes += o.TextBytes
		}
	}
	exp := sc.Expected()
	want := map[protocol.FrameKind]int{
		protocol.FrameReset: 1, protocol.FrameToolStart: 1, protocol.FrameToolEnd: 1,
		protocol.FrameTerminal: 1, protocol.FrameDone: 1,
	}
	for k, n := range want {
		if counts[k] != n {
			t.Errorf("frames of kind %d = %d, want %d", k, counts[k], n)
		}
	}
	if got := len(exp.AllText()); answerBytes != got {
		t.Errorf("answer bytes = %d, want %d", answerBytes, got)
	}
}
