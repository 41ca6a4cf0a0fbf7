package agentruntime

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// weiPerToken prices the receipt: a fixed, made-up rate so receipts carry a plausible amount.
const weiPerToken = 1_000_000_000

func (s *Server) handleCompose(w http.ResponseWriter, r *http.Request) {
	rn, _, ok := startRun(s, w, r, "agent", "agentId", compose.Name, func(b *compose.RequestBody) *string { return b.Message },
		`request body: missing "message" (the user message)`)
	if !ok {
		return
	}
	rn.id = newRunID()
	gate := &planGate{}
	s.runs.add(rn.id, &runEntry{agentID: rn.dep.Slug, stop: rn.cancel, plan: gate})
	defer s.runs.remove(rn.id)
	rn.execute(&composeEmitter{rn: rn, w: compose.NewWriter(rn.cs), side: composeSide{gate: gate}})
}

// handleComposeStop ends a run at once: its stream writes its stopped terminal.
func (s *Server) handleComposeStop(w http.ResponseWriter, r *http.Request) {
	agentID, runID := r.PathValue("agentId"), r.PathValue("runId")
	if !validRunID(runID) {
		s.writeError(w, http.StatusBadRequest, "run id "+strconv.Quote(runID)+" is not a run id of this runtime (want "+runIDPrefix+" and 20 characters A-Z2-7, as in the x-compose-run-id header)")
		return
	}
	e, ok := s.runs.get(runID)
	if !ok || e.agentID != agentID {
		s.writeError(w, http.StatusNotFound, "no open run "+strconv.Quote(runID)+" for agent "+strconv.Quote(agentID)+" (it may have finished already)")
		return
	}
	s.stopRun(w, e, `{"stopped":true}`)
}

func (s *Server) stopRun(w http.ResponseWriter, e *runEntry, body string) {
	e.stop(errStopped)
	s.metrics.runsStopped.Inc()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(body + "\n"))
}

// composeEmitter writes the compose agent stream: text live and never reset, thinking bracketed,
// tool arguments as generated, timing marks, and a receipt after the terminal.
type composeEmitter struct {
	rn            *run
	w             *compose.Writer
	inThinking    bool
	firstText     bool
	side          composeSide // plan approval and conclave state (plan.go)
	mangled       []string    // Swarm fault state (swarm.go).
	heldChildDone *compose.ChildDone
}

func (e *composeEmitter) open() {
	compose.SetResponseHeaders(e.rn.w.Header(), e.rn.id)
	// The runtime has no memory service: its memory phase is empty but still marked.
	_ = e.w.Timing(compose.MarkMSMStart, e.rn.elapsedMs())
	_ = e.w.Timing(compose.MarkMSMEnd, e.rn.elapsedMs())
	if e.rn.faults.has("timing-out-of-order") {
		e.firstText = true // the fault: first_text_delta before any model_start
		_ = e.w.Timing(compose.MarkFirstTextDelta, e.rn.elapsedMs())
	}
}

func (e *composeEmitter) modelStart(int) {
	_ = e.w.Timing(compose.MarkModelStart, e.rn.elapsedMs())
}

func (e *composeEmitter) thinking(text string) {
	if !e.inThinking {
		e.inThinking = true
		_ = e.w.ThinkingStart("Thinking...")
	}
	_ = e.w.Reasoning(text)
}

func (e *composeEmitter) endThinking() {
	if e.inThinking {
		e.inThinking = false
		_ = e.w.ThinkingEnd()
	}
}

func (e *composeEmitter) text(text string) {
	if text == "" {
		return
	}
	e.endThinking()
	e.rn.beforeFirstChunk()
	if !e.firstText {
		e.firstText = true
		_ = e.w.Timing(compose.MarkFirstTextDelta, e.rn.elapsedMs())
	}
	_ = e.w.Text(text)
}

func (e *composeEmitter) toolArgs(t *toolRun, piece string) {
	e.endThinking()
	_ = e.w.ToolArgsDelta(t.ID, t.Name, piece, t.Index)
}

func (e *composeEmitter) turnEnd(bool) { e.endThinking() }

func (e *composeEmitter) toolStart(t *toolRun) {
	_ = e.w.ToolStart(t.Name, t.input(), "<invoke>\n"+t.Name+"\n</invoke>", compose.Display{Kind: "tool", Name: t.Name, Summary: t.Name})
	e.sideEvents(t) // a plan proposal (waits for approval) or scripted side events (plan.go)
}

func (e *composeEmitter) toolEnd(t *toolRun) {
	if e.rn.once("unbalanced-tool") {
		return
	}
	msg := t.Name + " " + cmp.Or(toolEndings[t.Status], "completed")
	_ = e.w.ToolEnd(t.Name, t.Status == scenarios.OutcomeSuccess, t.Result, msg,
		compose.Display{Kind: "tool", Name: t.Name, Summary: msg})
}

// toolEndings end a tool_end's message by the tool's status; a success's is "completed".
var toolEndings = map[scenarios.Outcome]string{scenarios.OutcomeError: "failed", scenarios.OutcomeCancelled: "cancelled"}

func (e *composeEmitter) finish(res *runResult) {
	f := e.rn.faults
	e.endThinking()
	switch res.outcome {
	case outcomeDone:
		_ = e.w.Timing(compose.MarkDone, e.rn.elapsedMs())
		if f.has("double-terminal") {
			_ = e.w.Stopped(compose.ReasonUserStop, res.usage)
		}
		_ = e.w.DoneEvent(e.rn.dep.Model, res.usage)
		if e.heldChildDone != nil { // what the done-before-children fault held back
			_ = e.w.ChildDone(*e.heldChildDone)
		}
	case outcomeStopped:
		_ = e.w.Stopped(compose.ReasonUserStop, res.usage)
	default:
		_ = e.w.Error(errorMessage(res.err))
	}
	if f.has("double-terminal") && res.outcome != outcomeDone {
		_ = e.w.DoneEvent(e.rn.dep.Model, res.usage)
	}
	if res.outcome == outcomeDone || res.outcome == outcomeStopped { // a receipt for what was served
		tokens := int64(res.usage.InputTokens + res.usage.OutputTokens)
		_ = e.w.Receipt("rct_"+e.rn.id[len("run_"):], strconv.FormatInt(tokens*weiPerToken, 10))
	}
	if !f.has("missing-done") {
		_ = e.w.Done()
	}
}
