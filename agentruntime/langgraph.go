package agentruntime

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol/langgraph"
	"github.com/streambench/streambench/scenarios"
)

// handleLangGraph serves the LangGraph Agent Server's run stream: a ReAct graph on the deployment
// assistant_id names. A second run on a busy thread gets 409 (multitask_strategy reject).
func (s *Server) handleLangGraph(w http.ResponseWriter, r *http.Request) {
	var body langgraph.RunRequest
	if !s.readBody(w, r, &body) {
		return
	}
	dep, ok := s.deployment(w, "assistant", body.AssistantID)
	if !ok {
		return
	}
	var input string
	if body.Input != nil {
		for _, m := range body.Input.Messages {
			if m.Role == "user" || m.Role == "human" {
				input = m.Content
			}
		}
	}
	if input == "" {
		s.writeError(w, http.StatusUnprocessableEntity, `request body: expected input.messages with a user message`)
		return
	}
	switch body.OnDisconnect {
	case "", langgraph.OnDisconnectCancel, langgraph.OnDisconnectContinue:
	default:
		s.writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf("request body: on_disconnect %q, want cancel or continue", body.OnDisconnect))
		return
	}
	if thread := r.PathValue("thread_id"); thread != "" {
		if !s.lgThreads.add(thread, struct{}{}) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]string{"detail": "Thread " + thread + " is busy with another run (multitask_strategy reject)"})
			return
		}
		defer s.lgThreads.remove(thread)
	}
	detached := body.OnDisconnect == langgraph.OnDisconnectContinue && !s.opts.Faults.has("langgraph-cancel-on-continue")
	rn := s.newRun(w, r, dep, langgraph.Name, input, detached)
	rn.id = newUUID()
	rn.execute(&langGraphEmitter{rn: rn, w: langgraph.NewWriter(rn.cs, rn.started.UnixMilli()),
		state: langgraph.State{Messages: []langgraph.Message{{Type: langgraph.TypeHuman, ID: newUUID(), Content: langgraph.TextContent(input)}}}})
}

// newUUID returns a random version 4 UUID, the shape of LangGraph's run and message ids.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// langGraphEmitter writes the run stream in stream_mode messages-tuple, values and updates: per
// node step its messages, its update and the state. Reasoning is dropped, as a chat model
// adapter does.
type langGraphEmitter struct {
	rn    *run
	w     *langgraph.Writer
	state langgraph.State
	step  int

	aiID      string // the current turn's AI message.
	aiText    strings.Builder
	lastChunk string
	calls     []langgraph.ToolCall // Args as streamed so far.
	tools     []langgraph.Message  // the current turn's tool messages, for the tools node's update.
}

func (e *langGraphEmitter) message(m *langgraph.Message, node string) {
	_ = e.w.Message(m, &langgraph.ChunkMetadata{RunID: e.rn.id, Node: node, Step: e.step})
}

func (e *langGraphEmitter) open() {
	h := e.rn.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Location", "/runs/"+e.rn.id)
	e.w.DescendingIDs = e.rn.faults.has("langgraph-bad-id")
	if !e.rn.faults.has("langgraph-no-metadata") {
		_ = e.w.Metadata(e.rn.id, 1)
	}
	_ = e.w.Values(&e.state)
}

func (e *langGraphEmitter) modelStart(int) {
	e.flushTools()
	e.step++
	e.aiID = "run-" + newUUID()
	e.aiText.Reset()
	e.lastChunk = ""
	e.calls = nil
}

func (e *langGraphEmitter) thinking(string) {}

func (e *langGraphEmitter) text(text string) {
	if text == "" {
		return
	}
	e.rn.beforeFirstChunk()
	e.aiText.WriteString(text)
	e.lastChunk = text
	e.message(&langgraph.Message{Type: langgraph.TypeAIChunk, ID: e.aiID, Content: langgraph.TextContent(text)}, "agent")
}

func (e *langGraphEmitter) toolArgs(t *toolRun, piece string) {
	index := t.Index
	ch := langgraph.ToolCallChunk{Args: &piece, Index: &index, Type: "tool_call_chunk"}
	for len(e.calls) <= t.Index {
		e.calls = append(e.calls, langgraph.ToolCall{})
	}
	call := &e.calls[t.Index]
	if call.ID == "" {
		id, name := t.ID, t.Name
		ch.ID, ch.Name = &id, &name
		*call = langgraph.ToolCall{ID: t.ID, Name: t.Name, Type: "tool_call"}
	}
	call.Args = append(call.Args, piece...)
	e.message(&langgraph.Message{Type: langgraph.TypeAIChunk, ID: e.aiID, Content: langgraph.TextContent(""),
		ToolCallChunks: []langgraph.ToolCallChunk{ch}}, "agent")
}

// turnEnd writes the agent node's update and the state with the turn's whole AI message.
func (e *langGraphEmitter) turnEnd(bool) {
	text := e.aiText.String()
	if e.rn.faults.has("langgraph-state-mismatch") {
		text = strings.TrimSuffix(text, e.lastChunk)
	}
	ai := langgraph.Message{Type: langgraph.TypeAI, ID: e.aiID, Content: langgraph.TextContent(text)}
	for _, c := range e.calls {
		if !json.Valid(c.Args) {
			c.Args = json.RawMessage("{}")
		}
		ai.ToolCalls = append(ai.ToolCalls, c)
	}
	e.state.Messages = append(e.state.Messages, ai)
	_ = e.w.Updates("agent", []langgraph.Message{ai})
	_ = e.w.Values(&e.state)
}

func (e *langGraphEmitter) toolStart(*toolRun) {}

// toolEnd streams the tool's message whole, as LangGraph streams a node's returned messages.
func (e *langGraphEmitter) toolEnd(t *toolRun) {
	status := "success"
	if t.Status != scenarios.OutcomeSuccess {
		status = "error"
	}
	m := langgraph.Message{Type: langgraph.TypeTool, ID: newUUID(), Content: langgraph.TextContent(t.Result),
		ToolCallID: t.ID, Name: t.Name, Status: status}
	e.message(&m, "tools")
	e.tools = append(e.tools, m)
}

// flushTools writes the tools node's update and the state once the turn's tools settled.
func (e *langGraphEmitter) flushTools() {
	if len(e.tools) == 0 {
		return
	}
	e.step++
	e.state.Messages = append(e.state.Messages, e.tools...)
	_ = e.w.Updates("tools", e.tools)
	_ = e.w.Values(&e.state)
	e.tools = nil
}

func (e *langGraphEmitter) finish(res *runResult) {
	e.flushTools()
	if res.outcome == outcomeFailed {
		msg := errorMessage(res.err)
		if e.rn.faults.has("langgraph-bad-error") {
			_ = e.w.Event(langgraph.EventError, map[string]string{"detail": msg})
		} else {
			_ = e.w.Error("ProviderError", msg)
		}
	}
}
