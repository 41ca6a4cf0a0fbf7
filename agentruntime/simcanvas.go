package agentruntime

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/scenarios"
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
	if !body.Resumable {
		rn.execute(newSimCanvasEmitter(rn, rn.cs, false))
		return
	}
	x, ended := s.resumable(rn, r)
	defer ended()
	e := newSimCanvasEmitter(rn, x, true)
	x.w = e.w
	rn.execute(e)
}

// simCanvasEmitter writes execution events, always opted in; a PII-redacted block streams
// nothing live, as it would carry the PII (docs/PROTOCOLS.md, "PII-redacted blocks").
type simCanvasEmitter struct {
	simBlock
	w *simcanvas.Writer
}

// newSimCanvasEmitter writes to out, with event ids when the execution is resumable.
func newSimCanvasEmitter(rn *run, out io.Writer, ids bool) *simCanvasEmitter {
	w := simcanvas.NewWriter(out, rn.id, rn.dep.Slug)
	w.IDs = ids
	live := !rn.dep.RedactPII || rn.faults.has("redact-live")
	return &simCanvasEmitter{w: w, simBlock: simBlock{rn: rn, bw: w, reset: w.ChunkReset,
		optedIn: true, live: live, quiet: !live, showThinking: live, showTools: live}}
}

func (e *simCanvasEmitter) open() {
	simcanvas.SetResponseHeaders(e.rn.w.Header())
	_ = e.w.ExecutionStarted(e.rn.started)
	_ = e.w.BlockStarted(blockID, "Agent 1", "agent", 1)
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
	case outcomePaused: // no block:completed: the block waits
		if out := e.output(res); f.has("pause-not-reported") {
			_ = e.w.ExecutionCompleted(out, elapsed)
		} else {
			_ = e.w.ExecutionPaused(out, elapsed)
		}
	case outcomeStopped: // the user's cancel
		if f.has("cancel-as-timeout") {
			_ = e.w.ExecutionError(scenarios.ExecutionTimeoutResult, elapsed)
		} else {
			_ = e.w.ExecutionCancelled(elapsed)
		}
	case outcomeShutdown:
		_ = e.w.ExecutionCancelled(elapsed)
		if f.has("double-terminal") {
			_ = e.w.ExecutionError(errorMessage(res.err), elapsed)
		}
	default:
		if f.has("timeout-as-cancel") && errors.Is(res.err, errExecutionTimeout) {
			_ = e.w.ExecutionCancelled(elapsed)
		} else {
			_ = e.w.ExecutionError(errorMessage(res.err), elapsed)
		}
		if f.has("double-terminal") {
			_ = e.w.ExecutionCancelled(elapsed)
		}
	}
	if !f.has("missing-done") {
		_ = e.w.Done()
	}
}
