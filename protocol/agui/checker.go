package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// toolCall is one tool call by toolCallId, from TOOL_CALL_START to its result.
type toolCall struct {
	id, name string
	args     []byte
	ended    bool
	result   bool
	scripted int // the script's call it was matched to (judgeArgs), -1 none
}

// Checker judges one AG-UI event stream (every ag-ui rule). Not safe for concurrent use.
type Checker struct {
	s      *protocol.Session
	ground bool
	tokens scenarios.TokenCounter
	v      protocol.Violations

	events   int
	started  bool
	threadID string
	runID    string
	ended    string // RUN_FINISHED or RUN_ERROR once seen
	after    int    // events after ended
	// unscripted: a RUN_ERROR the script does not call for (the session's in_band_error).
	unscripted bool

	messages  map[string]bool // open text messages
	reasoning map[string]bool // open reasoning phases (REASONING_START … END)
	reasonMsg map[string]bool // open reasoning messages
	thinking  bool            // THINKING_START … THINKING_END open
	thinkMsg  bool            // THINKING_TEXT_MESSAGE_START … END open
	calls     []toolCall
	steps     map[string]bool
	state     []byte // the state's JSON: {} until a snapshot

	text, thought jsonwire.Text
	script        []scenarios.ScriptToolCall
	used          []bool
}

// NewChecker returns a checker for one stream of s, sent RunAgentInput with threadID and runID.
func NewChecker(s *protocol.Session, noGroundTruth bool) *Checker {
	c := &Checker{s: s, ground: !noGroundTruth && !s.NoGroundTruth,
		messages: map[string]bool{}, reasoning: map[string]bool{}, reasonMsg: map[string]bool{}, steps: map[string]bool{},
		state: []byte("{}")}
	if c.ground {
		c.script = protocol.ScriptedCalls(&s.Expected)
		c.text = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, false)...)
		c.thought = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, true)...)
		c.used = make([]bool, len(c.script))
	}
	return c
}

var other = protocol.Observation{Kind: protocol.FrameOther}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	if ev.Type != "" && ev.Type != "message" {
		c.v.Add(protocol.RFraming, "unexpected named event %q: AG-UI sends data: frames only", ev.Type)
		return other
	}
	var e Event
	data := bytes.TrimSpace(ev.Data)
	if err := json.Unmarshal(data, &e); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON event object, saw %s", protocol.Quote(data, 80))
		return other
	}
	if e.Type == "" {
		c.v.Add(protocol.RFraming, "expected an event with a type, saw %s", protocol.Quote(data, 80))
		return other
	}
	c.events++
	if c.ended != "" {
		c.after++
		if c.after == 1 {
			c.v.Add(RRun, "expected nothing after %s, saw %s", c.ended, e.Type)
		}
		return other
	}
	if c.events == 1 && e.Type != TypeRunStarted && e.Type != TypeRunError {
		c.v.Add(RRun, "expected RUN_STARTED as the first event, saw %s", e.Type)
	}
	return c.onEvent(&e)
}

func (c *Checker) onEvent(e *Event) protocol.Observation {
	switch e.Type {
	case TypeRunStarted:
		c.onRunStarted(e)
	case TypeRunFinished:
		return c.onRunFinished(e)
	case TypeRunError:
		return c.onRunError(e)
	case TypeStepStarted:
		c.pair(e, e.StepName, "stepName", c.steps, true, RStep, "expected a step not already active, saw it active")
	case TypeStepFinished:
		c.pair(e, e.StepName, "stepName", c.steps, false, RStep, "expected its STEP_STARTED first, saw no active step of that name")
	case TypeTextMessageStart, TypeTextMessageContent, TypeTextMessageEnd:
		return c.onMessage(e, RMessage, c.messages, TypeTextMessageStart, TypeTextMessageContent)
	case TypeReasoningMessageStart, TypeReasoningMessageContent, TypeReasoningMessageEnd:
		return c.onMessage(e, RReasoning, c.reasonMsg, TypeReasoningMessageStart, TypeReasoningMessageContent)
	case TypeReasoningStart:
		c.pair(e, e.MessageID, "messageId", c.reasoning, true, RReasoning, "expected a new reasoning phase, saw one already open")
	case TypeReasoningEnd:
		c.pair(e, e.MessageID, "messageId", c.reasoning, false, RReasoning, "expected its REASONING_START first, saw no open phase")
	case TypeThinkingStart, TypeThinkingEnd:
		open := e.Type == TypeThinkingStart
		if c.thinking == open {
			c.v.Add(RReasoning, "%s: expected THINKING_START and THINKING_END to alternate, saw %s twice", e.Type, e.Type)
		}
		c.thinking = open
	case TypeThinkingMessageStart, TypeThinkingMessageEnd:
		open := e.Type == TypeThinkingMessageStart
		if c.thinkMsg == open {
			c.v.Add(RReasoning, "%s: expected THINKING_TEXT_MESSAGE_START and _END to alternate, saw %s twice", e.Type, e.Type)
		}
		c.thinkMsg = open
	case TypeThinkingMessageContent:
		if !c.thinkMsg {
			c.v.Add(RReasoning, "THINKING_TEXT_MESSAGE_CONTENT: expected THINKING_TEXT_MESSAGE_START first, saw none open")
		}
		return c.content(e, true)
	case TypeTextMessageChunk, TypeReasoningMessageChunk:
		// Convenience events the client expands into START/CONTENT/END itself.
		return c.content(e, e.Type == TypeReasoningMessageChunk)
	case TypeToolCallStart, TypeToolCallArgs, TypeToolCallEnd, TypeToolCallChunk:
		return c.onTool(e)
	case TypeToolCallResult:
		return c.onToolResult(e)
	case TypeStateSnapshot, TypeStateDelta:
		c.onState(e)
	case TypeReasoningEncrypted, TypeMessagesSnapshot, TypeActivitySnapshot, TypeActivityDelta, TypeRaw, TypeCustom:
		// Accepted, not judged.
	default:
		c.v.Add(protocol.RFraming, "unknown event type %q (@ag-ui/core's EventType has no such member)", e.Type)
	}
	return other
}

// onRunStarted takes the run's ids, once.
func (c *Checker) onRunStarted(e *Event) {
	if c.started {
		c.v.Add(RRun, "expected one RUN_STARTED per run, saw another")
		return
	}
	c.started = true
	if c.need(e, e.ThreadID, "threadId") && c.need(e, e.RunID, "runId") {
		c.threadID, c.runID = *e.ThreadID, *e.RunID
	}
}

// onRunError ends the run with its error, the session's in-band error unless scripted.
func (c *Checker) onRunError(e *Event) protocol.Observation {
	c.ended = TypeRunError
	if e.Message == nil {
		c.v.Add(RError, "RUN_ERROR: expected a string message, saw none")
	}
	c.unscripted = !c.ground || !c.s.ScriptedError()
	return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(jsonwire.Deref(e.Message))}
}

// pair opens or closes the id in field among open, reporting rule with detail when it cannot.
func (c *Checker) pair(e *Event, field *string, name string, open map[string]bool, opening bool, rule protocol.Rule, detail string) {
	if !c.need(e, field, name) {
		return
	}
	id := *field
	if open[id] == opening {
		c.v.Add(rule, "%s %q: %s", e.Type, id, detail)
	}
	if opening {
		open[id] = true
	} else {
		delete(open, id)
	}
}

// onState takes a STATE_SNAPSHOT, or applies a STATE_DELTA to the last one (R-agui-state).
func (c *Checker) onState(e *Event) {
	if e.Type == TypeStateSnapshot {
		if e.Snapshot == nil {
			c.v.Add(protocol.RFraming, "STATE_SNAPSHOT: expected a snapshot, saw none")
		} else if json.Valid(e.Snapshot) {
			c.state = append(c.state[:0], e.Snapshot...)
		}
		return
	}
	if len(e.Delta) == 0 || e.Delta[0] != '[' {
		c.v.Add(RState, "STATE_DELTA: expected a JSON Patch array as delta, saw %s", protocol.Quote(e.Delta, 60))
		return
	}
	st, err := applyPatch(c.state, e.Delta)
	if err != nil {
		c.v.Add(RState, "STATE_DELTA %s does not apply to the last snapshot: %v", protocol.Quote(e.Delta, 80), err)
		return
	}
	c.state = st
}

// need reports whether a required string field is present, reporting R-framing when not.
func (c *Checker) need(e *Event, field *string, name string) bool {
	if field != nil {
		return true
	}
	c.v.Add(protocol.RFraming, "%s: expected a string %s, saw none", e.Type, name)
	return false
}

func (c *Checker) onRunFinished(e *Event) protocol.Observation {
	c.ended = TypeRunFinished
	if e.ThreadID == nil || e.RunID == nil || (c.started && (*e.ThreadID != c.threadID || *e.RunID != c.runID)) {
		c.v.Add(RRun, "RUN_FINISHED: expected threadId %q and runId %q as RUN_STARTED said, saw %s and %s", c.threadID, c.runID, quoted(e.ThreadID), quoted(e.RunID))
	}
	for _, open := range []struct {
		rule protocol.Rule
		what string
		ids  map[string]bool
	}{
		{RMessage, "text message", c.messages},
		{RReasoning, "reasoning message", c.reasonMsg},
		{RReasoning, "reasoning phase", c.reasoning},
		{RStep, "step", c.steps},
	} {
		for id := range open.ids {
			c.v.Add(open.rule, "RUN_FINISHED: expected every %s closed, saw %q still open", open.what, id)
		}
	}
	if c.thinking || c.thinkMsg {
		c.v.Add(RReasoning, "RUN_FINISHED: expected THINKING_* closed, saw it open")
	}
	for i := range c.calls {
		if !c.calls[i].ended {
			c.v.Add(RTool, "RUN_FINISHED: expected every tool call ended, saw %q (%s) without TOOL_CALL_END", c.calls[i].id, c.calls[i].name)
		}
	}
	return protocol.Observation{Kind: protocol.FrameTerminal}
}

// onMessage judges a text or reasoning message's START, CONTENT or END by messageId.
func (c *Checker) onMessage(e *Event, rule protocol.Rule, open map[string]bool, start, content string) protocol.Observation {
	if !c.need(e, e.MessageID, "messageId") {
		return other
	}
	id := *e.MessageID
	switch e.Type {
	case start:
		if open[id] {
			c.v.Add(rule, "%s %q: expected a new message, saw one already in progress", e.Type, id)
		}
		open[id] = true
		c.tokens.Break()
	case content:
		if !open[id] {
			c.v.Add(rule, "%s %q: expected its START first (and no END yet), saw no active message with that id", e.Type, id)
		}
		return c.content(e, rule == RReasoning)
	default:
		if !open[id] {
			c.v.Add(rule, "%s %q: expected an active message with that id, saw none (never started, or ended already)", e.Type, id)
		}
		delete(open, id)
	}
	return other
}

// content judges a text or reasoning delta against the script. An empty one breaks no rule:
// @ag-ui/core 1.0.0 takes any string, and the client's transformChunks makes them.
func (c *Checker) content(e *Event, reasoning bool) protocol.Observation {
	var delta string
	if e.Delta != nil && json.Unmarshal(e.Delta, &delta) != nil {
		c.v.Add(protocol.RFraming, "%s: expected a string delta, saw %s", e.Type, protocol.Quote(e.Delta, 60))
		return other
	}
	if delta == "" {
		return other
	}
	switch {
	case c.ground && reasoning:
		jsonwire.Follow(&c.thought, &c.v, RContent, "reasoning", delta, 60)
	case c.ground:
		jsonwire.Follow(&c.text, &c.v, RContent, "text", delta, 60)
	}
	if reasoning {
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(delta), Tokens: c.tokens.ThinkingBytes([]byte(delta))}
	}
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(delta), Tokens: c.tokens.TextBytes([]byte(delta))}
}

func (c *Checker) findCall(id string) int {
	return slices.IndexFunc(c.calls, func(cl toolCall) bool { return cl.id == id })
}

func (c *Checker) onTool(e *Event) protocol.Observation {
	if !c.need(e, e.ToolCallID, "toolCallId") {
		return other
	}
	id := *e.ToolCallID
	i := c.findCall(id)
	switch e.Type {
	case TypeToolCallStart, TypeToolCallChunk:
		if e.Type == TypeToolCallChunk && i >= 0 {
			return c.toolArgs(e, i)
		}
		if e.Type == TypeToolCallStart && !c.need(e, e.ToolCallName, "toolCallName") {
			return other
		}
		if i >= 0 {
			c.v.Add(RTool, "TOOL_CALL_START %q: expected a new toolCallId, saw one already started", id)
			return other
		}
		c.calls = append(c.calls, toolCall{id: id, name: jsonwire.Deref(e.ToolCallName), scripted: -1})
		c.tokens.Break()
		if e.Type == TypeToolCallChunk {
			c.toolArgs(e, len(c.calls)-1)
		}
		return protocol.Observation{Kind: protocol.FrameToolStart}
	case TypeToolCallArgs:
		if i < 0 {
			c.v.Add(RTool, "TOOL_CALL_ARGS %q: expected its TOOL_CALL_START first, saw no such tool call", id)
			return other
		}
		return c.toolArgs(e, i)
	}
	// TOOL_CALL_END
	if i < 0 || c.calls[i].ended {
		c.v.Add(RTool, "TOOL_CALL_END %q: expected an active tool call with that id, saw none (never started, or ended already)", id)
		return other
	}
	cl := &c.calls[i]
	cl.ended = true
	if len(cl.args) > 0 && !json.Valid(cl.args) {
		c.v.Add(RTool, "tool call %q (%s): expected its arguments to be JSON, saw %s", cl.id, cl.name, protocol.Quote(cl.args, 80))
	}
	if c.ground {
		c.judgeArgs(cl)
	}
	return other
}

func (c *Checker) toolArgs(e *Event, i int) protocol.Observation {
	cl := &c.calls[i]
	if cl.ended {
		c.v.Add(RTool, "%s %q: expected every argument delta before TOOL_CALL_END, saw one after", e.Type, cl.id)
		return other
	}
	var delta string
	if e.Delta != nil && json.Unmarshal(e.Delta, &delta) != nil {
		c.v.Add(protocol.RFraming, "%s: expected a string delta, saw %s", e.Type, protocol.Quote(e.Delta, 60))
	} else if e.Delta == nil && e.Type == TypeToolCallArgs {
		c.v.Add(protocol.RFraming, "TOOL_CALL_ARGS: expected a string delta, saw none")
	}
	cl.args = append(cl.args, delta...)
	return other
}

// judgeArgs matches an ended call to the script and compares its arguments as JSON.
func (c *Checker) judgeArgs(cl *toolCall) {
	si := protocol.MatchToolCall(c.script, c.used, cl.id, cl.name)
	if si < 0 || c.used[si] {
		c.v.Add(RContent, "tool call %q (%s): expected one of the script's calls, saw one it does not have", cl.id, cl.name)
		return
	}
	c.used[si] = true
	cl.scripted = si
	sc := &c.script[si]
	if sc.Name != cl.name {
		c.v.Add(RContent, "tool call %q: expected toolCallName %q, saw %q", cl.id, sc.Name, cl.name)
	} else if !jsonwire.Equal([]byte(sc.Arguments), cl.args) {
		c.v.Add(RContent, "tool call %q (%s): expected arguments %s, saw %s", cl.id, cl.name, protocol.Quote(sc.Arguments, 80), protocol.Quote(cl.args, 80))
	}
}

func (c *Checker) onToolResult(e *Event) protocol.Observation {
	if !c.need(e, e.ToolCallID, "toolCallId") || !c.need(e, e.MessageID, "messageId") || !c.need(e, e.Content, "content") {
		return other
	}
	id := *e.ToolCallID
	i := c.findCall(id)
	switch {
	case i < 0:
		c.v.Add(RTool, "TOOL_CALL_RESULT %q: expected a result for a tool call of this run, saw one for an unknown toolCallId", id)
		return other
	case !c.calls[i].ended:
		c.v.Add(RTool, "TOOL_CALL_RESULT %q: expected TOOL_CALL_END before the result, saw the call still streaming its arguments", id)
	case c.calls[i].result:
		c.v.Add(RTool, "TOOL_CALL_RESULT %q: expected one result per tool call, saw another", id)
		return other
	}
	if e.Role != nil && *e.Role != "tool" {
		c.v.Add(RTool, "TOOL_CALL_RESULT %q: expected role tool, saw %q", id, *e.Role)
	}
	c.calls[i].result = true
	return protocol.Observation{Kind: protocol.FrameToolEnd}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	// A cut, an abort and an unscripted RUN_ERROR are judged on what arrived only.
	clean := streamErr == nil && !c.s.Aborted && !c.unscripted
	if clean && c.ended == "" && c.events > 0 && !c.started {
		c.v.Add(RRun, "expected RUN_STARTED, the stream never sent it")
	}
	if c.ground && clean {
		if c.s.ScriptedError() && c.ended == TypeRunFinished {
			c.v.Add(RError, "expected RUN_ERROR (the provider fails with %s), saw RUN_FINISHED", protocol.Quote(c.s.Expected.ProviderError, 60))
		}
		if c.ended == TypeRunFinished || c.ended == TypeRunError {
			c.judgeComplete()
		}
	}
	return c.v.List()
}

// judgeComplete checks, at a clean end, that all the script's text, reasoning and calls came.
func (c *Checker) judgeComplete() {
	c.text.Short(&c.v, RContent, "expected the text to continue with %s, saw only the first %d of %d bytes", 60)
	c.thought.Short(&c.v, RContent, "expected the reasoning to continue with %s, saw only the first %d of %d bytes", 60)
	for i := range c.calls {
		if !c.calls[i].ended { // never ended (R-agui-tool): its arguments are judged as they came
			c.judgeArgs(&c.calls[i])
		}
	}
	// Every scripted call's result is owed, a failing tool's too, not a pausing or timing-out one's.
	for i := range c.calls {
		cl := &c.calls[i]
		if si := cl.scripted; si >= 0 && !cl.result && !c.script[si].Pause && !c.script[si].TimesOut {
			c.v.Add(RContent, "tool call %q (%s): expected its TOOL_CALL_RESULT (the script runs it, outcome %s), saw none", cl.id, cl.name, c.script[si].Outcome)
		}
	}
	var missing []string
	for i, u := range c.used {
		if !u {
			missing = append(missing, c.script[i].ID+" ("+c.script[i].Name+")")
		}
	}
	if len(missing) > 0 {
		c.v.Add(RContent, "expected the script's tool calls %s, saw none for them", strings.Join(missing, ", "))
	}
}

func quoted(s *string) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%q", *s)
}

// applyPatch applies a JSON Patch to doc (nil: null) atomically, with evanphx/json-patch
// (Kubernetes's): a kept library beats our own for a format of this many corner cases.
func applyPatch(doc, patch []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("not a JSON Patch: %w", err)
	}
	if doc == nil {
		doc = []byte("null")
	}
	return p.ApplyWithOptions(doc, &jsonpatch.ApplyOptions{SupportNegativeIndices: false, EnsurePathExistsOnAdd: false})
}
