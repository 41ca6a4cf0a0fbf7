package agentruntime

import (
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol/simcanvas"
)

func (s *Server) handleSimCanvas(w http.ResponseWriter, r *http.Request) {
	rn, body, ok := startRun(s, w, r, "workflow", "id", simcanvas.Name, func(b *simcanvas.RequestBody) *string { return b.Input },
		`request body: missing "input" (the workflow input)`)
	if !ok {
		return
	}
	if !body.Stream && !strings.EqualFold(r.Header.Get("X-Stream-Response"), "true") {
		rn.cancel(nil)
		s.writeError(w, http.StatusBadRequest, `this runtime only streams executions: send "stream": true or the header X-Stream-Response: true`)
		return
	}
	rn.id = canvasExecIDPrefix + newRunID()[len(runIDPrefix):]
	w.Header().Set(simcanvas.ExecutionIDHeader, rn.id) // the id cancels and reconnects name
	s.runs.add(rn.id, &runEntry{agentID: rn.dep.Slug, stop: rn.cancel})
	defer s.runs.remove(rn.id)
	em := &simCanvasEmitter{rn: rn, w: simcanvas.NewWriter(rn.cs, rn.id, rn.dep.Slug)}
	if body.Resumable {
		defer s.resumable(rn, r, em)()
	}
	rn.execute(em)
}

// simCanvasEmitter writes execution events, always opted in.
type simCanvasEmitter struct {
	rn         *run
	w          *simcanvas.Writer
	streamed   bool // whether the block streamed text since its last reset
	droppedEnd bool
}

func (e *simCanvasEmitter) open() {
	simcanvas.SetResponseHeaders(e.rn.w.Header())
	e.rn.w.WriteHeader(http.StatusOK)
	_ = e.w.ExecutionStarted(e.rn.started)
	_ = e.w.BlockStarted(blockID, "Agent 1", "agent", 1)
}

func (e *simCanvasEmitter) modelStart(int) {}

func (e *simCanvasEmitter) thinking(text string) {
	if !e.live() {
		return
	}
	if e.rn.faults.has("leak-thinking") {
		e.chunk(text)
		return
	}
	_ = e.w.Thinking(blockID, text)
}

func (e *simCanvasEmitter) text(text string) { e.chunk(text) }

func (e *simCanvasEmitter) chunk(text string) {
	if text == "" || !e.live() {
		return
	}
	e.rn.beforeFirstChunk()
	_ = e.w.Chunk(blockID, text)
	e.streamed = true
}

func (e *simCanvasEmitter) toolArgs(*toolRun, string) {}

func (e *simCanvasEmitter) turnEnd(final bool) {
	f := e.rn.faults
	switch {
	case !final && e.streamed && !f.has("no-reset"):
		e.reset()
	case final && f.has("reset-in-final") && e.streamed:
		e.reset()
		_ = e.w.Chunk(blockID, e.rn.turnText.String())
	}
}

func (e *simCanvasEmitter) reset() {
	_ = e.w.ChunkReset(blockID)
	e.streamed = false
	e.rn.s.metrics.resetsSent.Inc()
}

func (e *simCanvasEmitter) toolStart(t *toolRun) {
	if !e.live() {
		return
	}
	_ = e.w.ToolStart(blockID, t.ID, t.Name)
}

func (e *simCanvasEmitter) toolEnd(t *toolRun) {
	if !e.live() || dropOnce(e.rn.faults.has("unbalanced-tool"), &e.droppedEnd) {
		return
	}
	_ = e.w.ToolEnd(blockID, t.ID, t.Name, t.Status)
}

// canvasToolCall is a tool call in the block output: the authenticated canvas sees everything.
type canvasToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Status    string `json:"status"`
	Result    string `json:"result"`
}

type canvasOutput struct {
	Content   string           `json:"content"`
	ToolCalls []canvasToolCall `json:"toolCalls,omitempty"`
	Model     string           `json:"model"`
	Tokens    map[string]int   `json:"tokens"`
	Redacted  bool             `json:"redacted,omitempty"` // the output's PII was redacted (redact.go).
}

func (e *simCanvasEmitter) finish(res *runResult) {
	f := e.rn.faults
	elapsed := time.Since(e.rn.started)
	switch res.outcome {
	case outcomeDone:
		out := e.output(res)
		e.redactOutput(&out)
		_ = e.w.StreamDone(blockID)
		_ = e.w.BlockCompleted(blockID, out, elapsed)
		_ = e.w.ExecutionCompleted(out, elapsed)
		if f.has("double-terminal") {
			_ = e.w.ExecutionCompleted(out, elapsed)
		}
	case outcomePaused:
		e.paused(res, elapsed)
	case outcomeStopped:
		e.stopped(elapsed)
	case outcomeShutdown:
		_ = e.w.ExecutionCancelled(elapsed)
		if f.has("double-terminal") {
			_ = e.w.ExecutionError(errorMessage(res.err), elapsed)
		}
	default:
		e.failed(res, elapsed)
		if f.has("double-terminal") {
			_ = e.w.ExecutionCancelled(elapsed)
		}
	}
	if !f.has("missing-done") {
		_ = e.w.Done()
	}
}
