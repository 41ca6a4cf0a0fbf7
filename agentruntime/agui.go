package agentruntime

import (
	"cmp"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/streambench/streambench/protocol/agui"
)

// handleAGUI serves an AG-UI agent run: a RunAgentInput whose last user message is the input.
func (s *Server) handleAGUI(w http.ResponseWriter, r *http.Request) {
	rn, body, ok := startRun(s, w, r, "agent", "agentId", agui.Name, func(b *agui.RunAgentInput) *string {
		var last string
		for _, m := range b.Messages {
			var text string
			if m.Role == "user" && json.Unmarshal(m.Content, &text) == nil {
				last = text
			}
		}
		return &last
	}, `request body: no user message with a string "content" in "messages"`)
	if !ok {
		return
	}
	rn.id = newRunID()
	e := &aguiEmitter{rn: rn, w: agui.NewWriter(rn.cs), threadID: body.ThreadID, runID: body.RunID}
	e.threadID, e.runID = cmp.Or(e.threadID, "thread_"+rn.id[len(runIDPrefix):]), cmp.Or(e.runID, rn.id)
	rn.execute(e)
}

// aguiEmitter writes the AG-UI event stream: a step per model turn, its messages and tool calls,
// and the run's state (the turn, the settled tools) as a snapshot, then JSON Patch deltas.
type aguiEmitter struct {
	rn               *run
	w                *agui.Writer
	threadID, runID  string
	turn             int
	step             string // the open step ("" when none)
	textID, reasonID string // the open text and reasoning messages
	calls            []*toolRun
	ended            map[string]bool // tool calls whose TOOL_CALL_END was sent
	deltas           int
}

func (e *aguiEmitter) id(kind string) string {
	return kind + "_" + e.rn.id[len(runIDPrefix):] + "_" + strconv.Itoa(e.turn)
}

func (e *aguiEmitter) open() {
	agui.SetResponseHeaders(e.rn.w.Header())
	if !e.rn.faults.has("agui-no-run-started") {
		_ = e.w.RunStarted(e.threadID, e.runID)
	}
	_ = e.w.StateSnapshot(json.RawMessage(`{"turn":0,"tools":[]}`))
	e.ended = map[string]bool{}
}

func (e *aguiEmitter) modelStart(turn int) {
	e.turn = turn
	e.step = "turn-" + strconv.Itoa(turn)
	_ = e.w.StepStarted(e.step)
	if turn > 0 {
		_ = e.stateDelta(`[{"op":"replace","path":"/turn","value":` + strconv.Itoa(turn) + `}]`)
	}
}

func (e *aguiEmitter) stateDelta(patch string) error {
	if e.deltas == 0 && e.rn.faults.has("agui-bad-state-delta") {
		patch = `[{"op":"replace","path":"/no-such-member","value":1}]` // the fault: a path the state lacks
	}
	e.deltas++
	return e.w.StateDelta(json.RawMessage(patch))
}

func (e *aguiEmitter) thinking(text string) {
	if text == "" {
		return
	}
	e.endText()
	if e.reasonID == "" {
		e.reasonID = e.id("reasoning")
		_ = e.w.ReasoningStart(e.reasonID)
		_ = e.w.ReasoningMessageStart(e.reasonID)
	}
	_ = e.w.ReasoningContent(e.reasonID, text)
}

func (e *aguiEmitter) endReasoning() {
	if e.reasonID == "" {
		return
	}
	if !e.rn.once("agui-open-reasoning") { // the fault: the message is never ended
		_ = e.w.ReasoningMessageEnd(e.reasonID)
	}
	_ = e.w.ReasoningEnd(e.reasonID)
	e.reasonID = ""
}

func (e *aguiEmitter) text(text string) {
	if text == "" {
		return
	}
	e.endReasoning()
	e.rn.beforeFirstChunk()
	if e.textID == "" {
		e.textID = e.id("msg")
		_ = e.w.TextStart(e.textID)
	}
	_ = e.w.TextContent(e.textID, text)
}

func (e *aguiEmitter) endText() {
	if e.textID != "" && !e.rn.once("agui-open-message") { // the fault: never ended
		_ = e.w.TextEnd(e.textID)
	}
	e.textID = ""
}

func (e *aguiEmitter) startCall(t *toolRun) {
	if slices.Contains(e.calls, t) {
		return
	}
	e.calls = append(e.calls, t)
	_ = e.w.ToolStart(t.ID, t.Name, e.id("msg"))
}

func (e *aguiEmitter) toolArgs(t *toolRun, piece string) {
	e.endReasoning()
	e.endText()
	e.startCall(t)
	_ = e.w.ToolArgs(t.ID, piece)
}

func (e *aguiEmitter) endCalls() {
	for _, t := range e.calls {
		if e.ended[t.ID] {
			continue
		}
		e.ended[t.ID] = true
		if !e.rn.once("agui-open-tool") { // the fault: the call is never ended
			_ = e.w.ToolEnd(t.ID)
		}
	}
}

func (e *aguiEmitter) turnEnd(bool) {
	e.endReasoning()
	e.endText()
	e.endCalls()
	e.endStep()
}

func (e *aguiEmitter) endStep() {
	if e.step != "" && !e.rn.once("agui-open-step") { // the fault: never finished
		_ = e.w.StepFinished(e.step)
	}
	e.step = ""
}

func (e *aguiEmitter) toolStart(t *toolRun) {
	if !e.ended[t.ID] { // a call whose model streamed no arguments
		e.startCall(t)
		e.endCalls()
	}
}

func (e *aguiEmitter) toolEnd(t *toolRun) {
	_ = e.w.ToolResult("result_"+t.ID, t.ID, t.Result)
	entry, _ := json.Marshal(map[string]string{"id": t.ID, "name": t.Name, "status": string(t.Status)})
	_ = e.stateDelta(`[{"op":"add","path":"/tools/-","value":` + string(entry) + `}]`)
}

func (e *aguiEmitter) finish(res *runResult) {
	switch res.outcome {
	case outcomeDone, outcomePaused:
		e.turnEnd(true)
		result := json.RawMessage(`{"status":"done"}`)
		if res.outcome == outcomePaused {
			result = json.RawMessage(`{"status":"paused"}`)
		}
		_ = e.w.RunFinished(e.threadID, e.runID, result)
	default:
		_ = e.w.RunError(errorMessage(res.err), "provider_error") // alone: what was open stays open, as AG-UI allows
	}
}
