package agentruntime

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

// blockID is the single agent block every dialect reports text under.
const blockID = "b1"

func (s *Server) handleSimChat(w http.ResponseWriter, r *http.Request) {
	rn, _, ok := startRun(s, w, r, "chat slug", "slug", simchat.Name, func(b *simchat.RequestBody) *string { return b.Input },
		`request body: missing "input" (the user message)`)
	if !ok {
		return
	}
	var em emitter = newSimChatEmitter(rn, simchat.OptedIn(r.Header))
	if rn.dep.Policy().SettledTools && !rn.faults.has("live-settled-tools") {
		em = settledEmitter{emitter: em, rn: rn}
	}
	rn.execute(em)
}

// settledEmitter is the public chat of a deployment whose provider runs its tools settled
// (R-settled-tools): nothing streams until the final turn's text, in one chunk.
type settledEmitter struct {
	emitter
	rn *run
}

func (settledEmitter) thinking(string)    {}
func (settledEmitter) text(string)        {}
func (settledEmitter) toolStart(*toolRun) {}
func (settledEmitter) toolEnd(*toolRun)   {}

func (e settledEmitter) turnEnd(final bool) {
	if final {
		e.emitter.text(e.rn.turnText.String())
	}
	e.emitter.turnEnd(final)
}

// simChatEmitter writes public chat frames: opted-in clients get live text with chunk_reset
// after an intermediate turn, legacy ones the final turn's text in one chunk once settled.
// Thinking and tool frames need the header and the deployment's policy.
type simChatEmitter struct {
	rn *run
	w  *simchat.Writer

	optedIn      bool
	live         bool // streams text as it arrives (opted in, or the ignore-header fault).
	showThinking bool
	showTools    bool

	streamed   bool // the block streamed text since its last reset.
	droppedEnd bool // the unbalanced-tool fault dropped its tool end.
}

func newSimChatEmitter(rn *run, optedIn bool) *simChatEmitter {
	f := rn.faults
	p := rn.dep.Policy()
	gate := func(policy bool) bool { return optedIn && (policy || f.has("ignore-policy")) }
	return &simChatEmitter{
		rn: rn, w: simchat.NewWriter(rn.cs),
		optedIn:      optedIn,
		live:         optedIn || f.has("ignore-header"),
		showThinking: gate(p.IncludeThinking),
		showTools:    gate(p.IncludeToolCalls),
	}
}

func (e *simChatEmitter) open() {
	simchat.SetResponseHeaders(e.rn.w.Header(), e.optedIn)
	e.rn.w.WriteHeader(http.StatusOK)
	_ = e.rn.cs.flushHeaders()
}

func (e *simChatEmitter) modelStart(int) {}

func (e *simChatEmitter) thinking(text string) {
	switch {
	case e.rn.faults.has("leak-thinking"): // to every client, live
		e.chunk(text)
	case e.showThinking:
		_ = e.w.Thinking(blockID, text)
	}
}

func (e *simChatEmitter) text(text string) {
	if e.live {
		e.chunk(text)
	}
}

func (e *simChatEmitter) chunk(text string) {
	if text == "" {
		return
	}
	e.rn.beforeFirstChunk()
	_ = e.w.Chunk(blockID, text)
	e.streamed = true
}

func (e *simChatEmitter) toolArgs(*toolRun, string) {}

func (e *simChatEmitter) turnEnd(final bool) {
	f := e.rn.faults
	switch {
	case !final && e.live && e.streamed && !f.has("no-reset"):
		e.reset()
	case final && !e.live: // legacy: the settled final text in one piece
		if settled := e.rn.turnText.String(); settled != "" {
			e.rn.beforeFirstChunk()
			_ = e.w.Chunk(blockID, settled)
		}
	case final && e.optedIn && f.has("reset-in-final") && e.streamed: // then the text again, to converge
		e.reset()
		_ = e.w.Chunk(blockID, e.rn.turnText.String())
	}
}

func (e *simChatEmitter) reset() {
	_ = e.w.Reset(blockID)
	e.streamed = false
	e.rn.s.metrics.resetsSent.Inc()
}

func (e *simChatEmitter) toolStart(t *toolRun) {
	if !e.showTools {
		return
	}
	if e.rn.faults.has("expose-tool-args") {
		frame, _ := json.Marshal(map[string]any{"blockId": blockID, "event": "tool", "phase": "start", "id": t.ID, "name": t.Name, "arguments": t.Args})
		_ = e.w.Raw(frame)
	} else {
		_ = e.w.ToolStart(blockID, t.ID, t.Name)
	}
}

func (e *simChatEmitter) toolEnd(t *toolRun) {
	if !e.showTools || dropOnce(e.rn.faults.has("unbalanced-tool"), &e.droppedEnd) {
		return
	}
	_ = e.w.ToolEnd(blockID, t.ID, t.Name, t.Status)
}

func (e *simChatEmitter) finish(res *runResult) {
	f := e.rn.faults
	switch res.outcome {
	case outcomeDone:
		e.final(res)
	case outcomePaused:
		e.paused(res)
	default:
		_ = e.w.Error(e.rn.failureMessage(res.err))
	}
	if f.has("double-terminal") && res.outcome != outcomePaused {
		e.final(res)
	}
	if !f.has("missing-done") {
		_ = e.w.Done()
	}
}

// final writes the success envelope, the tool calls reduced to name and status.
func (e *simChatEmitter) final(res *runResult) {
	if e.rn.faults.has("expose-tool-args") {
		type exposed struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Status    string `json:"status"`
			Arguments string `json:"arguments"`
			Result    string `json:"result"`
		}
		out := struct {
			Content   string    `json:"content"`
			ToolCalls []exposed `json:"toolCalls"`
		}{Content: res.finalText}
		for _, t := range res.tools {
			out.ToolCalls = append(out.ToolCalls, exposed{t.ID, t.Name, string(t.Status), t.Args, t.Result})
		}
		_ = e.w.Final(out)
		return
	}
	_ = e.w.Final(finalOutput(res))
}

func finalOutput(res *runResult) simchat.FinalOutput {
	out := simchat.FinalOutput{Content: res.finalText}
	for _, t := range res.tools {
		out.ToolCalls = append(out.ToolCalls, simchat.ToolSummary{ID: t.ID, Name: t.Name, Status: t.Status})
	}
	return out
}

// errorMessage is the text of a dialect's error terminal: the provider's message, if any.
func errorMessage(err error) string {
	var pe *protocol.ProviderError
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
