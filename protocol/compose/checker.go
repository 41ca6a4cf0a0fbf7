package compose

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// head is the first decode of every frame: the type, or the choices of a text delta.
type head struct {
	Type    *string  `json:"type"`
	Choices []choice `json:"choices"`
}

type choice struct {
	Delta struct {
		Content *string `json:"content"`
	} `json:"delta"`
}

type typed struct {
	Delta     *string         `json:"delta"`
	ID        string          `json:"id"`
	ToolName  string          `json:"toolName"`
	ArgsDelta *string         `json:"argsDelta"`
	Index     *int            `json:"index"`
	Input     json.RawMessage `json:"input"`
	Output    *struct {
		Success *bool `json:"success"`
	} `json:"output"`
	Failed *bool   `json:"failed"`
	Reason string  `json:"reason"`
	Error  *string `json:"error"`
}

// call is one tool call's argument stream, keyed by call id in order of first delta.
type call struct {
	id, toolName string
	args         []byte
	started      bool
}

type settledTool struct {
	call   int
	failed bool
}

// Checker judges one compose stream (every compose rule). Not safe for concurrent use.
type Checker struct {
	s                  *protocol.Session
	noTruth            bool // Session.NoGroundTruth, structure only
	stopped            bool // the client sent a stop request, so the stream must end stopped
	unscripted         bool // an error terminal the script does not call for: judged partial
	v                  protocol.Violations
	text               jsonwire.Text // text deltas against every turn's text
	thinking           jsonwire.Text // reasoning against every turn's thinking
	thinkingOpen       bool
	script             protocol.ScriptCalls // every turn's scripted calls
	calls              []call
	byIndex            map[int]int // each wire index's call: LangChain names a call on its first delta only
	openTools          []string    // toolNames of tool_start frames not yet closed, in order
	startedCalls       []int       // per tool_start, the index into calls (or -1)
	settled            []settledTool
	terminal           string // the first terminal's type
	terminalDetail     string // the stopped reason or error message
	completeAtTerminal bool   // the whole answer had arrived when the terminal did
	terminals          int
	receipts           int
	end                protocol.DoneMarker
	scan               jsonwire.Scanner       // decodes the fast path's strings
	generalOnly        bool                   // tests turn the fast path off to compare it with the general path
	tokens             scenarios.TokenCounter // output tokens per frame, for the token metrics
	side               sideState              // plan approval and side events (plan.go)
	swarm              swarmState             // swarm children (swarm.go)
}

// StopSent tells the checker a stop was sent: the stream must end stopped (or done, if complete).
func (c *Checker) StopSent() { c.stopped = true }

// NewChecker returns a checker for one stream of s.
func NewChecker(s *protocol.Session) *Checker {
	c := &Checker{s: s, noTruth: s.NoGroundTruth, script: protocol.ScriptedCalls(&s.Expected)}
	if !c.noTruth {
		c.text = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, false)...)
		c.thinking = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, true)...)
	}
	return c
}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	if c.end.After(&c.v, ev.Data, 80) {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	data := bytes.TrimSpace(ev.Data)
	switch ev.Type {
	case "":
	case "receipt", "compose.receipt":
		return c.onReceipt(ev.Type, data)
	default:
		c.v.Add(protocol.RFraming, "unknown named event %q (only receipt and compose.receipt are named)", ev.Type)
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if c.end.Is(&c.v, data) {
		return c.onDone()
	}
	if c.terminals == 0 && !c.generalOnly {
		if obs, ok := c.fastPath(data); ok {
			return obs
		}
	}
	var h head
	if err := json.Unmarshal(data, &h); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object frame, saw %s", protocol.Quote(string(ev.Data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if h.Type == nil {
		return c.onText(&h, data)
	}
	typ := *h.Type
	var t typed
	switch typ {
	case "reasoning_delta", "thinking_start", "thinking_end", "tool_args_delta", "tool_start", "tool_end", "done", "stopped", "error":
		if err := json.Unmarshal(data, &t); err != nil {
			c.v.Add(protocol.RFraming, "%s: %v in %s", typ, err, protocol.Quote(string(data), 80))
			return protocol.Observation{Kind: protocol.FrameOther}
		}
	default:
		if c.observeSide(typ, data) { // plan.*, approval.*, task.*, action, conclave, trace, timing (plan.go)
			return protocol.Observation{Kind: protocol.FrameOther}
		}
		if obs, ok := c.observeSwarm(typ, data); ok { // swarm.go
			return obs
		}
		if strings.HasPrefix(typ, "swarm_") { // other swarm frames are not judged
			return protocol.Observation{Kind: protocol.FrameOther}
		}
		c.v.Add(protocol.RFraming, "unknown event type %q in %s", typ, protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	switch typ {
	case "done", "stopped", "error":
		c.onTerminal(typ, &t, data)
		if typ == "error" {
			return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(jsonwire.Deref(t.Error))}
		}
		return protocol.Observation{Kind: protocol.FrameTerminal}
	}
	if c.afterTerminal(typ) {
		return protocol.Observation{Kind: protocol.FrameOther} // R-terminal's finding alone
	}
	switch typ {
	case "reasoning_delta":
		return c.onReasoning(&t, data)
	case "thinking_start":
		if c.thinkingOpen {
			c.v.Add(RThinking, "expected thinking_end before another thinking_start, saw a second thinking_start")
		}
		c.thinkingOpen = true
	case "thinking_end":
		if !c.thinkingOpen {
			c.v.Add(RThinking, "expected thinking_start before thinking_end, saw thinking_end with no open thinking")
		}
		c.thinkingOpen = false
	case "tool_args_delta":
		c.tokens.Break() // a tool call ends the turn's text: the next turn's first word is a token
		c.onArgsDelta(&t, data)
	case "tool_start":
		c.tokens.Break()
		c.onToolStart(&t, data)
		return protocol.Observation{Kind: protocol.FrameToolStart}
	case "tool_end":
		c.tokens.Break()
		c.onToolEnd(&t, data)
		return protocol.Observation{Kind: protocol.FrameToolEnd}
	}
	return protocol.Observation{Kind: protocol.FrameOther}
}

func (c *Checker) onText(h *head, data []byte) protocol.Observation {
	if len(h.Choices) != 1 || h.Choices[0].Delta.Content == nil {
		c.v.Add(protocol.RFraming, "expected a typed frame or {\"choices\":[{\"delta\":{\"content\":…}}]}, saw %s", protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	text := *h.Choices[0].Delta.Content
	if c.afterTerminal("a text delta") {
		return protocol.Observation{Kind: protocol.FrameOther} // R-terminal's finding alone
	}
	if !c.noTruth {
		jsonwire.Follow(&c.text, &c.v, RAnswer, "answer", text, 60)
	}
	if text == "" {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(text), Tokens: c.tokens.Text(text)}
}

func (c *Checker) onReasoning(t *typed, data []byte) protocol.Observation {
	if t.Delta == nil {
		c.v.Add(protocol.RFraming, "reasoning_delta: expected a string delta, saw %s", protocol.Quote(string(data), 80))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if !c.noTruth {
		jsonwire.Follow(&c.thinking, &c.v, RThinking, "reasoning", *t.Delta, 60)
	}
	return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(*t.Delta), Tokens: c.tokens.Thinking(*t.Delta)}
}

// onArgsDelta follows one tool_args_delta: a call's first delta names its id (its toolName on
// that or a later one), later ones the id or only the index, and argsDelta may be absent or
// empty on any (docs/PROTOCOLS.md, "Variants real runtimes send").
func (c *Checker) onArgsDelta(t *typed, data []byte) {
	ci := c.findCall(t.ID, t.Index)
	if ci < 0 && t.ID == "" {
		if t.Index == nil {
			c.v.Add(protocol.RFraming, "tool_args_delta: expected an id or an index, saw neither in %s", protocol.Quote(string(data), 80))
		} else {
			c.v.Add(protocol.RFraming, "tool_args_delta: index %d was never introduced by a delta with an id, saw %s", *t.Index, protocol.Quote(string(data), 80))
		}
		return
	}
	if ci < 0 {
		c.calls = append(c.calls, call{id: t.ID})
		ci = len(c.calls) - 1
	}
	c.bindIndex(t.Index, ci)
	cl := &c.calls[ci]
	switch {
	case t.ToolName == "" || t.ToolName == cl.toolName:
	case cl.toolName == "":
		cl.toolName = t.ToolName
	default:
		c.v.Add(RArgs, "call %s: expected toolName %q on every delta that names one, saw %q", cl.id, cl.toolName, t.ToolName)
	}
	if t.ArgsDelta == nil || *t.ArgsDelta == "" {
		return // nothing to add: absent and empty argsDelta are both allowed
	}
	if cl.started {
		c.v.Add(RArgs, "call %s (%s): expected every argsDelta before tool_start, saw one after", cl.id, cl.toolName)
	}
	cl.args = append(cl.args, *t.ArgsDelta...)
}

// findCall returns the call a delta belongs to, by id, else by index; -1 for none.
func (c *Checker) findCall(id string, index *int) int {
	if id != "" {
		return slices.IndexFunc(c.calls, func(cl call) bool { return cl.id == id })
	}
	if index == nil {
		return -1
	}
	if ci, ok := c.byIndex[*index]; ok {
		return ci
	}
	return -1
}

// bindIndex makes index refer to call ci: a later turn reusing an index rebinds it.
func (c *Checker) bindIndex(index *int, ci int) {
	if index == nil {
		return
	}
	if c.byIndex == nil {
		c.byIndex = map[int]int{}
	}
	c.byIndex[*index] = ci
}

// onToolStart opens a tool and judges its input against the call's streamed arguments. It
// carries no id, so its call is the earliest unstarted one of its toolName whose arguments
// equal the input, else the earliest of that toolName: a call the runtime declined to run
// must not capture a later call's tool_start.
func (c *Checker) onToolStart(t *typed, data []byte) {
	if t.ToolName == "" {
		c.v.Add(protocol.RFraming, "tool_start: expected a toolName, saw %s", protocol.Quote(string(data), 80))
	}
	c.openTools = append(c.openTools, t.ToolName)
	var input any
	inputErr := json.Unmarshal(t.Input, &input)
	ci, candidates := -1, 0
	for i := range c.calls {
		if !c.calls[i].started && c.calls[i].toolName == t.ToolName {
			candidates++
			if ci < 0 {
				ci = i
			}
		}
	}
	// Only when several calls could own it are the arguments compared: one decodes nothing extra.
	for i := ci; candidates > 1 && inputErr == nil && i < len(c.calls); i++ {
		if c.calls[i].started || c.calls[i].toolName != t.ToolName {
			continue
		}
		var args any
		if json.Unmarshal(c.calls[i].args, &args) == nil && sameArgs(args, input) {
			ci = i
			break
		}
	}
	c.startedCalls = append(c.startedCalls, ci)
	if ci < 0 {
		c.v.Add(RArgs, "tool_start %s: expected tool_args_delta frames for it first, saw none", t.ToolName)
		return
	}
	cl := &c.calls[ci]
	cl.started = true
	args, ok := c.judgeArgs(cl)
	if !ok {
		return
	}
	if inputErr != nil {
		c.v.Add(RArgs, "tool_start %s (call %s): expected input equal to the streamed arguments, saw %s", t.ToolName, cl.id, protocol.Quote(string(t.Input), 80))
		return
	}
	if !sameArgs(args, input) {
		c.v.Add(RArgs, "tool_start %s (call %s): expected input %s (the streamed arguments), saw %s",
			t.ToolName, cl.id, protocol.Quote(string(cl.args), 80), protocol.Quote(string(t.Input), 80))
	}
}

// judgeArgs parses a call's streamed arguments and compares them with the script.
func (c *Checker) judgeArgs(cl *call) (any, bool) {
	var got any
	if err := json.Unmarshal(cl.args, &got); err != nil {
		c.v.Add(RArgs, "call %s (%s): expected the concatenated argsDelta to be JSON, saw %s (%v)", cl.id, cl.toolName, protocol.Quote(string(cl.args), 80), err)
		return nil, false
	}
	if c.noTruth {
		return got, true
	}
	sc, ok := c.scripted(cl.id)
	if !ok && c.s.Expected.ProviderError != "" {
		// The failed turn's calls are not in the ground truth: nothing to compare with.
		return got, false
	}
	if !ok {
		c.v.Add(RArgs, "call %s (%s): not a scripted tool call", cl.id, cl.toolName)
		return got, true
	}
	var want any
	if err := json.Unmarshal([]byte(sc.Arguments), &want); err == nil && !reflect.DeepEqual(got, want) {
		c.v.Add(RArgs, "call %s (%s): expected arguments %s, saw %s", cl.id, cl.toolName, protocol.Quote(sc.Arguments, 80), protocol.Quote(string(cl.args), 80))
	}
	if sc.Name != cl.toolName {
		c.v.Add(RArgs, "call %s: expected toolName %q, saw %q", cl.id, sc.Name, cl.toolName)
	}
	return got, true
}

// sameArgs compares a tool_start input with the streamed arguments; a runtime may hide the
// "_sim" directive (streambench's simulation control) from the input.
func sameArgs(args, input any) bool {
	if reflect.DeepEqual(args, input) {
		return true
	}
	m, ok := args.(map[string]any)
	if _, has := m["_sim"]; !ok || !has {
		return false
	}
	stripped := maps.Clone(m)
	delete(stripped, "_sim")
	return reflect.DeepEqual(stripped, input)
}

func (c *Checker) scripted(id string) (scenarios.ScriptToolCall, bool) {
	if i := c.script.Index(id); i >= 0 {
		return c.script[i], true
	}
	return scenarios.ScriptToolCall{}, false
}

// onToolEnd closes an open tool_start of its toolName. It carries no call id and parallel tools
// settle in any order, so it closes the earliest whose scripted outcome agrees with failed,
// else the earliest (whose outcome is then reported).
func (c *Checker) onToolEnd(t *typed, data []byte) {
	if t.Failed == nil {
		// failed is how the seed says to read a tool's result; output is informational.
		c.v.Add(protocol.RFraming, "tool_end: expected failed, saw %s", protocol.Quote(string(data), 80))
	}
	open := -1
	for i, name := range c.openTools {
		if name != t.ToolName {
			continue
		}
		if open < 0 {
			open = i
		}
		if t.Failed != nil && c.outcomeAgrees(c.startedCalls[i], *t.Failed) {
			open = i
			break
		}
	}
	if open < 0 {
		c.v.Add(protocol.RToolLifecycle, "tool_end %s: expected an open tool_start of the same toolName, saw none", t.ToolName)
		return
	}
	ci := c.startedCalls[open]
	c.openTools = append(c.openTools[:open], c.openTools[open+1:]...)
	c.startedCalls = append(c.startedCalls[:open], c.startedCalls[open+1:]...)
	if ci >= 0 && t.Failed != nil {
		c.settled = append(c.settled, settledTool{call: ci, failed: *t.Failed})
	}
}

// outcomeAgrees reports whether call ci's scripted outcome is the one failed says.
func (c *Checker) outcomeAgrees(ci int, failed bool) bool {
	if ci < 0 {
		return false
	}
	sc, ok := c.scripted(c.calls[ci].id)
	return ok && (sc.Outcome == scenarios.OutcomeError) == failed
}

// judgeOutcomes checks settled tools' outcomes, unless the client stopped or aborted (cancelled).
func (c *Checker) judgeOutcomes() {
	if c.stopped || c.s.Aborted || c.noTruth {
		return
	}
	for _, st := range c.settled {
		sc, ok := c.scripted(c.calls[st.call].id)
		if !ok {
			continue
		}
		if wantFailed := sc.Outcome == scenarios.OutcomeError; st.failed != wantFailed {
			c.v.Add(protocol.RToolLifecycle, "tool_end %s (call %s): expected failed=%t (outcome %s), saw failed=%t", sc.Name, sc.ID, wantFailed, sc.Outcome, st.failed)
		}
	}
}

// afterTerminal reports whether a frame but a receipt or [DONE] came after the terminal.
func (c *Checker) afterTerminal(what string) bool {
	if c.terminals > 0 {
		c.v.Add(protocol.RTerminal, "expected only a receipt and [DONE] after %s, saw %s", c.terminal, what)
		return true
	}
	return false
}

func (c *Checker) onTerminal(typ string, t *typed, data []byte) {
	c.terminals++
	if c.terminals > 1 {
		c.v.Add(protocol.RTerminal, "expected exactly one of done/stopped/error, saw %s after %s", typ, c.terminal)
		return
	}
	c.terminal = typ
	c.swarmTerminal(typ)
	c.terminalDetail = t.Reason
	c.completeAtTerminal = !c.text.Off && c.text.Done()
	if c.receipts > 0 {
		c.v.Add(protocol.RTerminal, "expected the receipt after the terminal, saw it before %s", typ)
	}
	if typ == "error" {
		if t.Error == nil {
			c.v.Add(protocol.RFraming, "error: expected an error message, saw %s", protocol.Quote(string(data), 80))
		}
		c.terminalDetail = jsonwire.Deref(t.Error)
		c.unscripted = !c.errorScripted()
	}
}

// errorScripted reports whether the provider or plan fails the run (never without ground truth).
func (c *Checker) errorScripted() bool {
	return c.s.ScriptedError() || (!c.noTruth && c.s.Expected.Plan.EndsInError())
}

// judgeTerminal checks a done or stopped terminal against the session, in Finish since the
// client sets Aborted only then (an error terminal is the script's or the session's outcome).
func (c *Checker) judgeTerminal() {
	perr := c.s.Expected.ProviderError
	switch c.terminal {
	case "done":
		switch {
		case c.noTruth:
			// Whether the provider fails, and when the answer is complete, is the script's.
		case perr != "":
			c.v.Add(protocol.RTerminal, "expected error (the provider fails with %s), saw done", protocol.Quote(perr, 60))
		case c.stopped && !c.completeAtTerminal:
			c.v.Add(protocol.RTerminal, "expected stopped after the stop request, saw done before the answer was complete (%d of %d bytes)", c.text.Matched(), c.text.Total())
		}
	case "stopped":
		if !c.stopped {
			c.v.Add(protocol.RTerminal, "expected %s, saw stopped (reason %q) without a stop request", c.wantTerminal(), c.terminalDetail)
		}
	}
}

func (c *Checker) wantTerminal() string {
	switch {
	case c.stopped:
		return "stopped"
	case c.errorScripted():
		return "error"
	}
	return "done"
}

func (c *Checker) onReceipt(name string, data []byte) protocol.Observation {
	var r struct {
		ID *string `json:"id"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.ID == nil {
		c.v.Add(protocol.RFraming, "%s: expected a JSON object with an id, saw %s", name, protocol.Quote(string(data), 80))
	}
	c.receipts++
	switch {
	case c.terminals == 0:
		c.v.Add(protocol.RTerminal, "expected the %s after the terminal, saw it before any terminal", name)
	case c.receipts > 1:
		c.v.Add(protocol.RTerminal, "expected at most one receipt, saw %d", c.receipts)
	}
	return protocol.Observation{Kind: protocol.FrameOther}
}

func (c *Checker) onDone() protocol.Observation {
	if c.terminals == 0 {
		c.v.Add(protocol.RTerminal, "expected %s before [DONE], saw no terminal", c.wantTerminal())
	}
	c.end.Done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	// A cut, aborted or unscripted-error stream is judged on what arrived only; one that claims
	// to have finished normally owes everything scripted (a wrong terminal is R-terminal's alone).
	clean := streamErr == nil && !c.s.Aborted && !c.unscripted
	full := clean && !c.noTruth && c.s.Expected.ProviderError == "" && c.terminal == "done" && !c.stopped
	if clean {
		if c.terminals == 0 {
			c.v.Add(protocol.RTerminal, "expected %s then [DONE], the stream ended without a terminal", c.wantTerminal())
		} else if !c.end.Done {
			c.v.Add(protocol.RTerminal, "expected [DONE] after %s, the stream ended without it", c.terminal)
		}
		if c.thinkingOpen {
			c.v.Add(RThinking, "expected thinking_end for every thinking_start, the stream ended inside thinking")
		}
		for _, name := range c.openTools {
			c.v.Add(protocol.RToolLifecycle, "tool_start %s: expected a tool_end, the stream ended without one", name)
		}
	}
	if full {
		c.text.Short(&c.v, RAnswer, "expected answer to continue with %s, saw only the first %d of %d bytes", 60)
		c.thinking.Short(&c.v, RThinking, "expected reasoning to continue with %s, saw only the first %d of %d bytes", 60)
	}
	c.judgeTerminal()
	c.judgeOutcomes()
	c.finishArgs(clean && !c.stopped && (c.terminal == "done" || c.terminal == "error"))
	c.finishSide(clean)
	c.finishSwarm(clean)
	return c.v.List()
}

// finishArgs judges, when every completed turn was owed, the arguments of calls without a
// tool_start (a runtime may decline to run a call of a tool it does not have) and scripted
// calls whose arguments never came.
func (c *Checker) finishArgs(all bool) {
	if !all {
		return
	}
	for i := range c.calls {
		if _, ok := c.scripted(c.calls[i].id); !ok && c.s.Expected.ProviderError != "" {
			continue // a call of the failed turn, cut off by the provider error
		}
		if !c.calls[i].started {
			c.judgeArgs(&c.calls[i])
		}
	}
	if c.noTruth {
		return // which calls must come is the script's
	}
	for _, tc := range c.script {
		if !slices.ContainsFunc(c.calls, func(cl call) bool { return cl.id == tc.ID }) {
			c.v.Add(RArgs, "expected tool_args_delta frames for scripted call %s (%s), saw none", tc.ID, tc.Name)
		}
	}
}

// Nearly every frame (text, reasoning and argument deltas) is recognized in the exact shape
// the Writer encodes and judged without decoding JSON, since the checker's per-event cost is the
// load generator's. The fast path accepts only what the general path would accept without a
// violation; anything else takes the general path.
const (
	textOpen      = `{"choices":[{"delta":{"content":`
	reasoningOpen = `{"type":"reasoning_delta","delta":`
	argsOpen      = `{"type":"tool_args_delta","id":"`
	// argsOnlyOpen is the id-less delta real runtimes send after a call's first one.
	argsOnlyOpen = `{"type":"tool_args_delta","argsDelta":`
)

// fastPath judges a text, reasoning or argument delta before the terminal, if it can.
func (c *Checker) fastPath(data []byte) (protocol.Observation, bool) {
	switch {
	case bytes.HasPrefix(data, []byte(textOpen)):
		text, rest, ok := c.cutString(data[len(textOpen):])
		if ok && string(rest) == "}}]}" && len(text) > 0 && (c.noTruth || !c.text.Off && jsonwire.Advance(&c.text.Cursor, text)) {
			return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(text), Tokens: c.tokens.TextBytes(text)}, true
		}
	case bytes.HasPrefix(data, []byte(reasoningOpen)):
		delta, rest, ok := c.cutString(data[len(reasoningOpen):])
		if ok && string(rest) == "}" && (c.noTruth || !c.thinking.Off && jsonwire.Advance(&c.thinking.Cursor, delta)) {
			return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(delta), Tokens: c.tokens.ThinkingBytes(delta)}, true
		}
	case bytes.HasPrefix(data, []byte(argsOpen)):
		if c.fastArgs(data[len(argsOpen):]) {
			c.tokens.Break()
			return protocol.Observation{Kind: protocol.FrameOther}, true
		}
	case bytes.HasPrefix(data, []byte(childDeltaOpen)):
		if c.fastChildDelta(data[len(childDeltaOpen):]) { // swarm.go
			return protocol.Observation{Kind: protocol.FrameOther}, true
		}
	case bytes.HasPrefix(data, []byte(argsOnlyOpen)):
		if c.fastIndexArgs(data[len(argsOnlyOpen):]) {
			c.tokens.Break()
			return protocol.Observation{Kind: protocol.FrameOther}, true
		}
	}
	return protocol.Observation{}, false
}

// cutString decodes the JSON string at b as encoding/json would, and what follows it.
func (c *Checker) cutString(b []byte) (value, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	c.scan.Reset(b)
	value = c.scan.Str("")
	return value, c.scan.Rest(), c.scan.Err() == nil
}

// fastArgs follows {"type":"tool_args_delta","id":"…","toolName":"…","argsDelta":"…","index":N}
// (from after the id's opening quote) for a call whose tool_start has not been seen.
func (c *Checker) fastArgs(b []byte) bool {
	id, rest, ok := jsonwire.CutPlainString(b)
	if !ok || len(id) == 0 {
		return false
	}
	name, rest, ok := jsonwire.CutPlainAfter(rest, `","toolName":"`)
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`","argsDelta":`))
	}
	if !ok {
		return false
	}
	args, index, ok := c.argsTail(rest)
	if !ok {
		return false
	}
	ci := c.findCall(string(id), nil)
	if ci >= 0 {
		cl := &c.calls[ci]
		if (cl.started && len(args) > 0) || (len(name) > 0 && cl.toolName != string(name)) {
			return false // a late delta or a renamed call: the general path reports it
		}
		cl.args = append(cl.args, args...)
	} else {
		c.calls = append(c.calls, call{id: string(id), toolName: string(name), args: bytes.Clone(args)})
		ci = len(c.calls) - 1
	}
	c.bindIndex(&index, ci)
	return true
}

// fastIndexArgs follows {"type":"tool_args_delta","argsDelta":"…","index":N} (from the
// argsDelta) for an index bound to a call whose tool_start has not been seen.
func (c *Checker) fastIndexArgs(b []byte) bool {
	args, index, ok := c.argsTail(b)
	if !ok {
		return false
	}
	ci := c.findCall("", &index)
	if ci < 0 || (c.calls[ci].started && len(args) > 0) {
		return false // an unknown index or a late delta: the general path reports it
	}
	c.calls[ci].args = append(c.calls[ci].args, args...)
	return true
}

// argsTail reads `"…","index":N}` from an argsDelta's string to the end: the arguments and the index.
func (c *Checker) argsTail(b []byte) (args []byte, index int, ok bool) {
	args, rest, ok := c.cutString(b)
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(`,"index":`))
	}
	var n int64
	if ok {
		n, rest, ok = jsonwire.CutUint(rest, 9)
	}
	return args, int(n), ok && string(rest) == "}"
}
