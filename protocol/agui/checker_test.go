package agui

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// session is a script of one tool turn (thinking, text, a call) and a final text turn.
func session() *protocol.Session {
	return &protocol.Session{ID: "s1", Expected: scenarios.Expected{Turns: []scenarios.ExpectedTurn{
		{Thinking: "hmm", Text: "Let me look. ", ToolCalls: []scenarios.ScriptToolCall{{ID: "call_1", Name: "search", Arguments: `{"q":"x"}`}}},
		{Text: "Done.", Final: true},
	}, FailedTurn: -1}}
}

// good is a correct stream of session's script.
var good = []string{
	`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`,
	`{"type":"STATE_SNAPSHOT","snapshot":{"turn":0,"tools":[]}}`,
	`{"type":"STEP_STARTED","stepName":"turn-0"}`,
	`{"type":"REASONING_START","messageId":"rs"}`,
	`{"type":"REASONING_MESSAGE_START","messageId":"rs","role":"reasoning"}`,
	`{"type":"REASONING_MESSAGE_CONTENT","messageId":"rs","delta":"hmm"}`,
	`{"type":"REASONING_MESSAGE_END","messageId":"rs"}`,
	`{"type":"REASONING_END","messageId":"rs"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"m0","role":"assistant"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m0","delta":"Let me look. "}`,
	`{"type":"TEXT_MESSAGE_END","messageId":"m0"}`,
	`{"type":"TOOL_CALL_START","toolCallId":"call_1","toolCallName":"search"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"{\"q\":"}`,
	`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"\"x\"}"}`,
	`{"type":"TOOL_CALL_END","toolCallId":"call_1"}`,
	`{"type":"STEP_FINISHED","stepName":"turn-0"}`,
	`{"type":"TOOL_CALL_RESULT","messageId":"res1","toolCallId":"call_1","content":"ok","role":"tool"}`,
	`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/tools/-","value":{"id":"call_1"}},{"op":"replace","path":"/turn","value":1}]}`,
	`{"type":"STEP_STARTED","stepName":"turn-1"}`,
	`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
	`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Done."}`,
	`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
	`{"type":"STEP_FINISHED","stepName":"turn-1"}`,
	`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`,
}

// edit returns good with the event at index i replaced by repl (none when repl is empty), and
// extra events appended.
func edit(i int, repl string, extra ...string) []string {
	out := slices.Clone(good)
	if i >= 0 {
		if repl == "" {
			out = slices.Delete(out, i, i+1)
		} else {
			out[i] = repl
		}
	}
	return append(out, extra...)
}

func at(prefix string) int {
	return slices.IndexFunc(good, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

// play runs events through a checker and returns the rules broken and the last observation.
func play(s *protocol.Session, noGround bool, events []string, streamErr error) ([]protocol.Rule, protocol.Observation) {
	c := NewChecker(s, noGround)
	var last protocol.Observation
	for _, e := range events {
		last = c.Observe(&sse.Event{Data: []byte(e)})
	}
	rules := map[protocol.Rule]bool{}
	for _, v := range c.Finish(streamErr) {
		rules[v.Rule] = true
	}
	return slices.Sorted(maps.Keys(rules)), last
}

func TestCheckerRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		events []string
		want   []protocol.Rule
	}{
		// The script, correctly streamed.
		{"good", good, nil},
		// The older THINKING_* events for the reasoning.
		{"thinking events", append(append(slices.Clone(good[:3]), `{"type":"THINKING_START"}`, `{"type":"THINKING_TEXT_MESSAGE_START"}`, `{"type":"THINKING_TEXT_MESSAGE_CONTENT","delta":"hmm"}`, `{"type":"THINKING_TEXT_MESSAGE_END"}`, `{"type":"THINKING_END"}`), good[8:]...), nil},
		// verifyEvents: the first event must be RUN_STARTED.
		{"no RUN_STARTED", edit(0, ""), []protocol.Rule{RRun}},
		// verifyEvents: nothing after RUN_FINISHED.
		{"event after RUN_FINISHED", edit(-1, "", `{"type":"CUSTOM","name":"x","value":1}`), []protocol.Rule{RRun}},
		// verifyEvents misses: a second run in one request.
		{"two runs", edit(-1, "", `{"type":"RUN_STARTED","threadId":"t","runId":"r2"}`), []protocol.Rule{RRun}},
		// RUN_FINISHED's ids are not RUN_STARTED's.
		{"RUN_FINISHED other run", edit(len(good)-1, `{"type":"RUN_FINISHED","threadId":"t","runId":"other"}`), []protocol.Rule{RRun}},
		// verifyEvents: a message left open at RUN_FINISHED.
		{"text not ended", edit(at(`{"type":"TEXT_MESSAGE_END","messageId":"m1"`), ""), []protocol.Rule{RMessage}},
		// verifyEvents: content for an id never started.
		{"content for unknown id", edit(at(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"`), `{"type":"TEXT_MESSAGE_CONTENT","messageId":"zz","delta":"Done."}`), []protocol.Rule{RMessage}},
		// An empty delta is no fault: @ag-ui/core 1.0.0's schema takes any string, and its
		// client makes empty deltas itself (0.0.x refused one; interop/agui).
		{"empty delta", slices.Insert(slices.Clone(good), at(`{"type":"TEXT_MESSAGE_END","messageId":"m1"`), `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}`), nil},
		// A reasoning message left open (verifyEvents 1.0.0 catches it too).
		{"reasoning not ended", edit(at(`{"type":"REASONING_MESSAGE_END"`), ""), []protocol.Rule{RReasoning}},
		// verifyEvents: a tool call left open (its result then comes before its end).
		{"tool not ended", edit(at(`{"type":"TOOL_CALL_END"`), ""), []protocol.Rule{RTool}},
		// verifyEvents misses: a result for an unknown call.
		// (and call_1 then has none: R-agui-content's).
		{"result for unknown call", edit(at(`{"type":"TOOL_CALL_RESULT"`), `{"type":"TOOL_CALL_RESULT","messageId":"res1","toolCallId":"nope","content":"ok"}`), []protocol.Rule{RContent, RTool}},
		// verifyEvents misses: the scripted call the runtime ran, and no result for it (a relay
		// that drops TOOL_CALL_RESULT passed before).
		{"result missing", edit(at(`{"type":"TOOL_CALL_RESULT"`), ""), []protocol.Rule{RContent}},
		// verifyEvents misses: two results for one call.
		{"two results", edit(at(`{"type":"STATE_DELTA"`), `{"type":"TOOL_CALL_RESULT","messageId":"res2","toolCallId":"call_1","content":"ok"}`), []protocol.Rule{RTool}},
		// verifyEvents: a step never finished.
		{"step not finished", edit(at(`{"type":"STEP_FINISHED","stepName":"turn-1"`), ""), []protocol.Rule{RStep}},
		// verifyEvents: a step finished that never started.
		{"step finished unstarted", edit(at(`{"type":"STEP_STARTED","stepName":"turn-1"`), `{"type":"STEP_STARTED","stepName":"other"}`), []protocol.Rule{RStep}},
		// verifyEvents misses: a patch that does not apply to the snapshot.
		{"bad state delta", edit(at(`{"type":"STATE_DELTA"`), `{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/nothing"}]}`), []protocol.Rule{RState}},
		// verifyEvents misses: text not the script's.
		{"wrong text", edit(at(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"`), `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Nope."}`), []protocol.Rule{RContent}},
		// verifyEvents misses: tool arguments not the script's.
		{"wrong args", edit(at(`{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"\"x`), `{"type":"TOOL_CALL_ARGS","toolCallId":"call_1","delta":"\"y\"}"}`), []protocol.Rule{RContent}},
		// Not JSON at all.
		{"not json", edit(at(`{"type":"STATE_DELTA"`), `not json`), []protocol.Rule{protocol.RFraming}},
		// An unknown event type.
		{"unknown type", edit(at(`{"type":"STATE_DELTA"`), `{"type":"STATE_PATCH"}`), []protocol.Rule{protocol.RFraming}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := play(session(), false, tc.events, nil)
			if !slices.Equal(got, tc.want) {
				t.Errorf("rules %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCheckerEnds: the end of a stream.
func TestCheckerEnds(t *testing.T) {
	t.Parallel()
	// No RUN_FINISHED: the loadgen sees no terminal (truncated) and says so with ErrTruncated;
	// the checker judges only what arrived.
	got, last := play(session(), false, good[:len(good)-1], protocol.ErrTruncated)
	if len(got) != 0 || last.Kind == protocol.FrameTerminal {
		t.Errorf("truncated: rules %v, last %+v", got, last)
	}
	// RUN_FINISHED is the terminal.
	if _, last = play(session(), false, good, nil); last.Kind != protocol.FrameTerminal || last.Error != "" {
		t.Errorf("RUN_FINISHED: %+v", last)
	}
	// An unscripted RUN_ERROR mid-stream: an in-band error (Observation.Error), no violation.
	runErr := append(slices.Clone(good[:10]), `{"type":"RUN_ERROR","message":"boom"}`)
	got, last = play(session(), false, runErr, errors.New("in-band"))
	if len(got) != 0 || last.Kind != protocol.FrameTerminal || last.Error != "boom" {
		t.Errorf("RUN_ERROR: rules %v, last %+v", got, last)
	}
	// A scripted failure that ends in RUN_FINISHED.
	s := session()
	s.Expected.ProviderError, s.Expected.FailedTurn = "overloaded", 1
	if got, _ = play(s, false, good, nil); !slices.Equal(got, []protocol.Rule{RError}) {
		t.Errorf("scripted error, RUN_FINISHED: %v", got)
	}
	// Without ground truth, other text and arguments are not judged.
	other := slices.Clone(good)
	other[at(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1"`)] = `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Something else entirely."}`
	if got, _ = play(session(), true, other, nil); len(got) != 0 {
		t.Errorf("no ground truth: %v", got)
	}
	if got, _ = play(session(), false, other, nil); !slices.Equal(got, []protocol.Rule{RContent}) {
		t.Errorf("ground truth: %v", got)
	}
}

func TestApplyPatch(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"a":[1,2],"b":{"c":"x"}}`)
	// replace at "-" (past the end) fails, and the whole patch with it.
	if out, err := applyPatch(doc, []byte(`[{"op":"add","path":"/a/1","value":9},{"op":"remove","path":"/b/c"},{"op":"copy","from":"/a","path":"/d"},{"op":"move","from":"/d","path":"/b/e"},{"op":"test","path":"/a/1","value":9},{"op":"replace","path":"/a/-","value":0}]`)); err == nil {
		t.Fatalf("replace at /a/- applied: %s", out)
	}
	out, err := applyPatch(doc, []byte(`[{"op":"add","path":"/a/1","value":9},{"op":"remove","path":"/b/c"},{"op":"copy","from":"/a","path":"/d"},{"op":"move","from":"/d","path":"/b/e"},{"op":"test","path":"/b/e/1","value":9}]`))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{"a":[1,9,2],"b":{"e":[1,9,2]}}`), &want)
	if fmtAny(got) != fmtAny(want) {
		t.Errorf("got %s, want %v", out, want)
	}
	if string(doc) != `{"a":[1,2],"b":{"c":"x"}}` {
		t.Errorf("the patched document changed: %s", doc)
	}
	if _, err := applyPatch(doc, []byte(`[{"op":"test","path":"/a/0","value":2}]`)); err == nil {
		t.Error("a failing test op applied")
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }
