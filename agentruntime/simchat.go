package agentruntime

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// blockID is the single agent block every dialect reports text under.
const blockID = "b1"

// simBlockWriter is what the Sim dialects' writers (simchat, simcanvas) share for the block.
type simBlockWriter interface {
	Chunk(blockID, text string) error
	Thinking(blockID, text string) error
	ToolStart(blockID, id, name string) error
	ToolEnd(blockID, id, name string, status scenarios.Outcome) error
}

// simBlock streams the Sim dialects' one agent block: live text with a chunk reset after an
// intermediate turn, thinking and tool frames where the client may see them.
type simBlock struct {
	rn    *run
	bw    simBlockWriter
	reset func(blockID string) error // the writer's chunk reset frame

	optedIn      bool // the client opted in to live, resettable text (sim-canvas always is).
	live         bool // streams text as it arrives (opted in, or the ignore-header fault).
	quiet        bool // streams nothing live: a PII-redacted canvas block.
	showThinking bool
	showTools    bool

	streamed bool // the block streamed text since its last reset.
}

func (b *simBlock) modelStart(int)            {}
func (b *simBlock) toolArgs(*toolRun, string) {}

func (b *simBlock) thinking(text string) {
	switch {
	case b.quiet:
	case b.rn.faults.has("leak-thinking"): // to every client, live
		b.chunk(text)
	case b.showThinking:
		_ = b.bw.Thinking(blockID, text)
	}
}

func (b *simBlock) text(text string) {
	if b.live {
		b.chunk(text)
	}
}

func (b *simBlock) chunk(text string) {
	if text == "" {
		return
	}
	b.rn.beforeFirstChunk()
	_ = b.bw.Chunk(blockID, text)
	b.streamed = true
}

func (b *simBlock) turnEnd(final bool) {
	f := b.rn.faults
	switch {
	case !final && b.live && b.streamed && !f.has("no-reset"):
		b.resetBlock()
	case final && !b.live && !b.quiet: // legacy: the settled final text in one piece
		if settled := b.rn.turnText.String(); settled != "" {
			b.rn.beforeFirstChunk()
			_ = b.bw.Chunk(blockID, settled)
		}
	case final && b.optedIn && f.has("reset-in-final") && b.streamed: // then the text again, to converge
		b.resetBlock()
		_ = b.bw.Chunk(blockID, b.rn.turnText.String())
	}
}

func (b *simBlock) resetBlock() {
	_ = b.reset(blockID)
	b.streamed = false
	b.rn.s.metrics.resetsSent.Inc()
}

func (b *simBlock) toolStart(t *toolRun) {
	if b.showTools {
		_ = b.bw.ToolStart(blockID, t.ID, t.Name)
	}
}

func (b *simBlock) toolEnd(t *toolRun) {
	if !b.showTools || b.rn.once("unbalanced-tool") {
		return
	}
	_ = b.bw.ToolEnd(blockID, t.ID, t.Name, t.Status)
}

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
	simBlock
	w *simchat.Writer
}

func newSimChatEmitter(rn *run, optedIn bool) *simChatEmitter {
	f := rn.faults
	p := rn.dep.Policy()
	gate := func(policy bool) bool { return optedIn && (policy || f.has("ignore-policy")) }
	w := simchat.NewWriter(rn.cs)
	return &simChatEmitter{w: w, simBlock: simBlock{
		rn: rn, bw: w, reset: w.Reset,
		optedIn:      optedIn,
		live:         optedIn || f.has("ignore-header"),
		showThinking: gate(p.IncludeThinking),
		showTools:    gate(p.IncludeToolCalls),
	}}
}

func (e *simChatEmitter) open() {
	simchat.SetResponseHeaders(e.rn.w.Header(), e.optedIn)
}

func (e *simChatEmitter) toolStart(t *toolRun) {
	if e.showTools && e.rn.faults.has("expose-tool-args") {
		frame, _ := json.Marshal(map[string]any{"blockId": blockID, "event": "tool", "phase": "start", "id": t.ID, "name": t.Name, "arguments": t.Args})
		_ = e.w.Raw(frame)
		return
	}
	e.simBlock.toolStart(t)
}

func (e *simChatEmitter) finish(res *runResult) {
	f := e.rn.faults
	switch res.outcome {
	case outcomeDone:
		e.final(res)
	case outcomePaused: // success with status paused
		if f.has("pause-not-reported") {
			e.final(res)
		} else {
			_ = e.w.FinalPaused(finalOutput(res))
		}
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
