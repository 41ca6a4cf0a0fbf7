package aisdk

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// openPart is a text or reasoning part between its start and end (its id buffer reused).
type openPart struct {
	reasoning bool
	id        []byte
}

// call is one tool call, keyed by toolCallId, from its first part to its settlement.
type call struct {
	id, name  string
	args      []byte // the streamed inputTextDelta pieces
	started   bool   // tool-input-start seen
	inputDone bool   // tool-input-available or tool-input-error seen
	settled   bool   // a final tool output (available, error, denied) or tool-input-error
	failed    bool
	denied    bool
	scripted  int // index into Checker.script, -1 when not matched
}

// stepMark is the content state at a start-step, restored by reset-step (a retried step).
type stepMark struct {
	text, reasoning jsonwire.Text
	calls           int
}

// Checker judges one UI message stream (every ai-sdk rule). Not safe for concurrent use.
type Checker struct {
	s           *protocol.Session
	tokens      scenarios.TokenCounter // output tokens per part, for the token metrics
	ground      bool
	noReasoning bool
	v           protocol.Violations
	sc          jsonwire.Scanner
	f           frame
	raw         []byte // the part being judged, for details

	text, reasoning jsonwire.Text

	parts   int // parts observed (not counting [DONE])
	started bool
	open    []openPart // open[:nOpen] are open; the rest keep their buffers
	nOpen   int

	stepOpen bool
	steps    int
	mark     stepMark

	calls  []call
	script []scenarios.ScriptToolCall // every scripted call, in turn order
	used   []bool

	errorSeen    bool
	errorText    string
	unscripted   bool   // an error part the script does not call for: judged partial
	terminal     string // "finish" or "abort", once seen
	finishReason string
	end          protocol.DoneMarker
}

// NewChecker returns a checker for one stream of s.
func NewChecker(s *protocol.Session, opts Options) *Checker {
	c := &Checker{s: s, ground: !opts.NoGroundTruth, noReasoning: opts.NoReasoning}
	if c.ground {
		c.script = protocol.ScriptedCalls(&s.Expected)
		c.text = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, false)...)
		if !opts.NoReasoning {
			c.reasoning = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, true)...)
		}
		c.used = make([]bool, len(c.script))
	}
	// A reset-step before any start-step rewinds to the start of the stream.
	c.mark = stepMark{text: c.text, reasoning: c.reasoning}
	return c
}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	other := protocol.Observation{Kind: protocol.FrameOther}
	if c.end.After(&c.v, ev.Data, 80) {
		return other
	}
	if ev.Type != "" {
		c.v.Add(protocol.RFraming, "unknown named event %q: the UI message stream sends data events only", ev.Type)
		return other
	}
	data := bytes.TrimSpace(ev.Data)
	if c.end.Is(&c.v, data) {
		return c.onDone()
	}
	f := &c.f
	c.raw = data
	if err := f.parse(&c.sc, data); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object part, saw %s", protocol.Quote(ev.Data, 80))
		return other
	}
	if f.has&hasType == 0 {
		c.v.Add(protocol.RFraming, "expected a part with a string type, saw %s", protocol.Quote(data, 80))
		return other
	}
	c.parts++
	if c.terminal != "" {
		c.v.Add(protocol.RTerminal, "expected only [DONE] after %s, saw a %s part", c.terminal, f.typ)
		return other
	}
	return c.onPart()
}

func (c *Checker) onPart() protocol.Observation {
	f := &c.f
	switch string(f.typ) {
	case typeStart:
		if c.parts > 1 {
			c.v.Add(RParts, "expected start as the first part (and only once), saw it as part %d", c.parts)
		}
		c.started = true
	case typeTextStart, typeReasoningStart:
		if c.need(hasID, "id") {
			c.openPart(f.typ[0] == 'r', f.id)
		}
	case typeTextDelta, typeReasoningDelta:
		if c.need(hasID|hasDelta, "id and delta") {
			return c.onDelta(f.typ[0] == 'r')
		}
	case typeTextEnd, typeReasoningEnd:
		if c.need(hasID, "id") {
			c.closePart(f.typ[0] == 'r', f.id)
		}
	case typeStartStep:
		c.onStartStep()
	case typeFinishStep:
		if !c.stepOpen {
			c.v.Add(RParts, "expected start-step before finish-step, saw finish-step with no open step")
		}
		c.stepOpen = false
	case typeResetStep:
		c.onResetStep()
	case typeToolInputStart:
		if c.need(hasToolCallID|hasToolName, "toolCallId and toolName") {
			return c.onToolInputStart()
		}
	case typeToolInputDelta:
		if c.need(hasToolCallID|hasInputTextDelta, "toolCallId and inputTextDelta") {
			c.onToolInputDelta()
		}
	case typeToolInputAvailable, typeToolInputError:
		want, what := hasToolCallID|hasToolName|hasInput, "toolCallId, toolName and input"
		if f.typ[len("tool-input-")] == 'e' {
			want, what = want|hasErrorText, "toolCallId, toolName, input and errorText"
		}
		if c.need(want, what) {
			return c.onToolInput()
		}
	case typeToolOutputAvailable, typeToolOutputError, typeToolOutputDenied:
		want, what := hasToolCallID, "toolCallId"
		if string(f.typ) == typeToolOutputError {
			want, what = hasToolCallID|hasErrorText, "toolCallId and errorText"
		}
		if c.need(want, what) {
			return c.onToolOutput()
		}
	case typeToolApprovalRequest, typeToolApprovalResponse:
		// Human-in-the-loop approval: accepted, not judged (the mock's scripts never ask).
	case typeError:
		return c.onError()
	case typeFinish, typeAbort:
		return c.onTerminal()
	default:
		if !unjudged(f.typ) {
			c.v.Add(protocol.RFraming, "unknown part type %q (ai 7's uiMessageChunkSchema rejects it)", f.typ)
		}
	}
	return protocol.Observation{Kind: protocol.FrameOther}
}

// onStartStep opens a step: a model turn, whose content state a reset-step restores.
func (c *Checker) onStartStep() {
	c.content()
	if c.stepOpen {
		c.v.Add(RParts, "expected finish-step before the next start-step, saw start-step inside step %d", c.steps)
	}
	c.stepOpen = true
	c.steps++
	c.tokens.Break() // a step is a model turn: its first word is a token
	c.mark = stepMark{text: c.text, reasoning: c.reasoning, calls: len(c.calls)}
}

// onResetStep rewinds to the step's start: the SDK streams the step again.
func (c *Checker) onResetStep() {
	c.text, c.reasoning = c.mark.text, c.mark.reasoning
	for i := c.mark.calls; i < len(c.calls); i++ {
		if sc := c.calls[i].scripted; sc >= 0 {
			c.used[sc] = false
		}
	}
	c.calls = c.calls[:c.mark.calls]
	c.nOpen = 0
}

func (c *Checker) onError() protocol.Observation {
	f := &c.f
	// Without errorText the part is still the error terminal (R-framing says what it lacks).
	c.need(hasErrorText, "errorText")
	if c.errorSeen {
		c.v.Add(protocol.RTerminal, "expected at most one error part, saw a second: %s", protocol.Quote(f.errorText, 60))
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	c.errorSeen = true
	c.errorText = string(f.errorText)
	c.unscripted = !c.ground || !c.s.ScriptedError()
	return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(c.errorText)}
}

func (c *Checker) onTerminal() protocol.Observation {
	c.terminal = string(c.f.typ)
	c.finishReason = string(c.f.finishReason)
	if c.terminal == typeFinish && !c.errorSeen {
		switch {
		case c.finishReason == "error" && !(c.ground && c.s.ScriptedError()):
			// The run failed without an error part: the in-band error all the same.
			c.unscripted = true
			return protocol.Observation{Kind: protocol.FrameTerminal, Error: "finish with finishReason error, and no error part"}
		case c.finishReason == "tool-calls" && len(c.calls) == 0 && !c.ground: // with ground truth, judgeTerminal's
			c.v.Add(protocol.RTerminal, "finish with finishReason tool-calls, but no tool part was streamed")
		}
	}
	return protocol.Observation{Kind: protocol.FrameTerminal}
}

// need reports whether the part carries every field in want, reporting R-framing when not.
func (c *Checker) need(want fieldSet, what string) bool {
	if c.f.has&want == want {
		return true
	}
	c.v.Add(protocol.RFraming, "%s: expected %s (strings; input any value), saw %s", c.f.typ, what, protocol.Quote(c.raw, 80))
	return false
}

// content reports new content after an error part (the SDK only closes what was open).
func (c *Checker) content() {
	if c.errorSeen {
		c.v.Add(protocol.RTerminal, "expected no new content after the error part, saw %s", c.f.typ)
	}
}

func (c *Checker) findOpen(reasoning bool, id []byte) int {
	return slices.IndexFunc(c.open[:c.nOpen], func(p openPart) bool {
		return p.reasoning == reasoning && string(p.id) == string(id)
	})
}

func kindName(reasoning bool) string {
	if reasoning {
		return "reasoning"
	}
	return "text"
}

func (c *Checker) openPart(reasoning bool, id []byte) {
	c.content()
	if c.findOpen(reasoning, id) >= 0 {
		c.v.Add(RParts, "%s-start %q: expected a new id, saw one whose part is still open", kindName(reasoning), id)
		return
	}
	if c.nOpen == len(c.open) {
		c.open = append(c.open, openPart{})
	}
	p := &c.open[c.nOpen]
	p.reasoning, p.id = reasoning, append(p.id[:0], id...)
	c.nOpen++
}

// closePart ends an open part (an id may be reused once closed: "0" in every step).
func (c *Checker) closePart(reasoning bool, id []byte) {
	i := c.findOpen(reasoning, id)
	if i < 0 {
		c.v.Add(RParts, "%s-end %q: expected an open %s part with that id, saw none (never started, or ended already)", kindName(reasoning), id, kindName(reasoning))
		return
	}
	last := c.nOpen - 1
	c.open[i], c.open[last] = c.open[last], c.open[i]
	c.nOpen--
}

func (c *Checker) onDelta(reasoning bool) protocol.Observation {
	c.content()
	f := &c.f
	if c.findOpen(reasoning, f.id) < 0 {
		c.v.Add(RParts, "%s-delta %q: expected its %s-start first (and no %s-end yet), saw no open part with that id", kindName(reasoning), f.id, kindName(reasoning), kindName(reasoning))
	}
	switch ground := c.ground && !c.errorSeen; { // new content after the error is R-terminal's alone
	case ground && reasoning:
		jsonwire.Follow(&c.reasoning, &c.v, RText, "reasoning", f.delta, 60)
	case ground:
		jsonwire.Follow(&c.text, &c.v, RText, "text", f.delta, 60)
	}
	switch {
	case len(f.delta) == 0:
		return protocol.Observation{Kind: protocol.FrameOther}
	case reasoning:
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(f.delta), Tokens: c.tokens.ThinkingBytes(f.delta)}
	}
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(f.delta), Tokens: c.tokens.TextBytes(f.delta)}
}

func (c *Checker) findCall(id []byte) int {
	return slices.IndexFunc(c.calls, func(cl call) bool { return cl.id == string(id) })
}

func (c *Checker) onToolInputStart() protocol.Observation {
	c.content()
	f := &c.f
	if c.findCall(f.toolCallID) >= 0 {
		c.v.Add(RParts, "tool-input-start %s: expected a new toolCallId, saw one already started", f.toolCallID)
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	c.calls = append(c.calls, call{id: string(f.toolCallID), name: string(f.toolName), started: true, scripted: -1})
	c.tokens.Break()
	return protocol.Observation{Kind: protocol.FrameToolStart}
}

func (c *Checker) onToolInputDelta() {
	c.content()
	f := &c.f
	i := c.findCall(f.toolCallID)
	switch {
	case i < 0 || !c.calls[i].started:
		c.v.Add(RParts, "tool-input-delta %s: expected its tool-input-start first, saw none", f.toolCallID)
	case c.calls[i].inputDone:
		c.v.Add(RParts, "tool-input-delta %s: expected every delta before tool-input-available, saw one after", f.toolCallID)
	default:
		c.calls[i].args = append(c.calls[i].args, f.inputTextDelta...)
	}
}

// onToolInput follows tool-input-available (or -error), the call's complete input: the deltas'
// assembly when deltas came (they are optional).
func (c *Checker) onToolInput() protocol.Observation {
	c.content()
	f := &c.f
	isError := f.typ[len("tool-input-")] == 'e'
	kind := protocol.FrameOther
	i := c.findCall(f.toolCallID)
	if i < 0 {
		c.calls = append(c.calls, call{id: string(f.toolCallID), name: string(f.toolName), scripted: -1})
		i = len(c.calls) - 1
		kind = protocol.FrameToolStart
	}
	cl := &c.calls[i]
	if cl.inputDone {
		c.v.Add(RParts, "%s %s: expected the call's input once, saw it again", f.typ, cl.id)
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	cl.inputDone = true
	if cl.name != string(f.toolName) {
		c.v.Add(RParts, "%s %s: expected toolName %q as at its tool-input-start, saw %q", f.typ, cl.id, cl.name, f.toolName)
	}
	if len(cl.args) > 0 && !isError && !jsonwire.Equal(cl.args, f.input) {
		c.v.Add(RParts, "tool-input-available %s: expected the input its deltas assembled, %s, saw %s", cl.id, protocol.Quote(cl.args, 80), protocol.Quote(f.input, 80))
	}
	if c.ground && !c.errorSeen { // new content after the error is R-terminal's alone
		c.judgeInput(cl, f.input)
	}
	if isError {
		cl.settled, cl.failed = true, true
		return protocol.Observation{Kind: protocol.FrameToolEnd}
	}
	return protocol.Observation{Kind: kind}
}

// judgeInput matches the call to the script and compares its input as JSON.
func (c *Checker) judgeInput(cl *call, input []byte) {
	si := protocol.MatchToolCall(c.script, c.used, cl.id, cl.name)
	if si < 0 || c.used[si] {
		c.v.Add(RTool, "tool call %s (%s): expected one of the script's calls, saw one it does not have", cl.id, cl.name)
		return
	}
	c.used[si], cl.scripted = true, si
	sc := &c.script[si]
	switch {
	case sc.Name != cl.name:
		c.v.Add(RTool, "tool call %s: expected toolName %q, saw %q", cl.id, sc.Name, cl.name)
	case !jsonwire.Equal([]byte(sc.Arguments), input):
		c.v.Add(RTool, "tool call %s (%s): expected input %s, saw %s", cl.id, cl.name, protocol.Quote([]byte(sc.Arguments), 80), protocol.Quote(input, 80))
	}
}

func (c *Checker) onToolOutput() protocol.Observation {
	c.content()
	f := &c.f
	i := c.findCall(f.toolCallID)
	if i < 0 || !c.calls[i].inputDone {
		c.v.Add(RParts, "%s %s: expected the call's tool-input-available first, saw none", f.typ, f.toolCallID)
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	cl := &c.calls[i]
	if cl.settled {
		c.v.Add(RParts, "%s %s: expected one final output per call, saw another", f.typ, cl.id)
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	switch string(f.typ) {
	case typeToolOutputAvailable:
		if f.preliminary {
			return protocol.Observation{Kind: protocol.FrameOther} // a streamed partial output; the final one follows
		}
	case typeToolOutputError:
		cl.failed = true
	case typeToolOutputDenied:
		cl.denied = true
	}
	cl.settled = true
	return protocol.Observation{Kind: protocol.FrameToolEnd}
}

func (c *Checker) onDone() protocol.Observation {
	if c.terminal == "" && !c.errorSeen {
		c.v.Add(protocol.RTerminal, "expected finish, abort or error before [DONE], saw no terminal")
	}
	c.end.Done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	// A cut, an abort and an unscripted error are judged on what arrived only.
	clean := streamErr == nil && !c.s.Aborted && !c.unscripted
	ended := c.terminal != "" || c.errorSeen
	if clean {
		switch {
		case !ended:
			c.v.Add(protocol.RTerminal, "expected finish (or error, or abort) then [DONE], the stream ended without a terminal")
		case !c.end.Done:
			c.v.Add(protocol.RTerminal, "expected [DONE] after %s, the stream ended without it", cmp.Or(c.terminal, "error"))
		}
	}
	if clean && c.terminal == typeFinish {
		for _, p := range c.open[:c.nOpen] {
			c.v.Add(RParts, "%s part %q: expected its %s-end before finish, saw none", kindName(p.reasoning), p.id, kindName(p.reasoning))
		}
		if c.stepOpen {
			c.v.Add(RParts, "step %d: expected finish-step before finish, saw none", c.steps)
		}
		for i := range c.calls {
			if cl := &c.calls[i]; !cl.inputDone && !c.errorSeen {
				c.v.Add(RParts, "tool call %s (%s): expected tool-input-available before finish, saw only its start and deltas", cl.id, cl.name)
			}
		}
	}
	if c.terminal == typeAbort && !c.s.Aborted {
		c.v.Add(protocol.RTerminal, "expected finish, saw abort although the client did not abort")
	}
	if c.ground {
		stopped := c.judgeTerminal(clean)
		c.judgeComplete(clean && !stopped && (c.terminal == typeFinish || c.errorSeen))
		c.judgeOutcomes()
	}
	return c.v.List()
}

// judgeTerminal checks the terminal against the script: an error part where the provider
// fails, no finish saying the tool loop stopped while the script goes on; it reports whether
// the loop stopped (the missing turns are then R-terminal's alone).
func (c *Checker) judgeTerminal(clean bool) bool {
	exp := &c.s.Expected
	perr := exp.ProviderError
	if c.s.ScriptedError() && !c.errorSeen && clean && c.terminal != "" {
		c.v.Add(protocol.RTerminal, "expected an error part (the provider fails with %s), saw %s without one", protocol.Quote([]byte(perr), 60), c.terminal)
	}
	if c.terminal == typeFinish && c.finishReason == "tool-calls" && perr == "" && !c.s.Aborted {
		c.v.Add(protocol.RTerminal, "expected the route to run the tool loop to the script's %d turns, saw finish with finishReason tool-calls after %d step(s) (give streamText the tools and a stopWhen)", len(exp.Turns), c.steps)
		return true
	}
	return false
}

// judgeComplete checks, when every scripted turn was owed, the whole text and reasoning, every
// scripted call's input and, where the loop went on past its turn, its output.
func (c *Checker) judgeComplete(full bool) {
	if !full {
		return
	}
	c.text.Short(&c.v, RText, "expected the text to continue with %s, saw only the first %d of %d bytes", 60)
	c.reasoning.Short(&c.v, RText, "expected the reasoning to continue with %s, saw only the first %d of %d bytes", 60)
	for si := range c.script {
		sc := &c.script[si]
		ci := slices.IndexFunc(c.calls, func(cl call) bool { return cl.scripted == si }) // judgeInput matches a scripted call once
		switch {
		case ci < 0:
			c.v.Add(RTool, "scripted tool call %s (%s): expected its input, saw no part for it", sc.ID, sc.Name)
		case !c.calls[ci].settled:
			c.v.Add(RTool, "scripted tool call %s (%s): expected tool-output-available or tool-output-error before the next step, saw neither", sc.ID, sc.Name)
		}
	}
}

// judgeOutcomes checks each settled call's outcome, unless the client aborted.
func (c *Checker) judgeOutcomes() {
	if c.s.Aborted || c.unscripted {
		return
	}
	for i := range c.calls {
		cl := &c.calls[i]
		if !cl.settled || cl.denied || cl.scripted < 0 {
			continue
		}
		sc := &c.script[cl.scripted]
		if want := sc.Outcome == scenarios.OutcomeError; cl.failed != want {
			c.v.Add(RTool, "tool call %s (%s): expected %s (outcome %s), saw %s", cl.id, cl.name, outputName(want), sc.Outcome, outputName(cl.failed))
		}
	}
}

func outputName(failed bool) string {
	if failed {
		return "tool-output-error"
	}
	return "tool-output-available"
}

// frame is what the checker reads of one part, aliasing the event or the scanner until the next.
type frame struct {
	typ, id, delta, toolCallID, toolName, inputTextDelta, errorText, finishReason []byte
	input                                                                         []byte // raw JSON of "input"
	has                                                                           fieldSet
	preliminary                                                                   bool
}

// fieldSet records which fields a part carried (non-null).
type fieldSet uint16

const (
	hasType fieldSet = 1 << iota
	hasID
	hasDelta
	hasToolCallID
	hasToolName
	hasInputTextDelta
	hasErrorText
	hasInput
	hasFinishReason
)

// parse fills f from one part's JSON, skipping the rest (null: absent, as zod's optionals).
func (f *frame) parse(sc *jsonwire.Scanner, data []byte) error {
	sc.Reset(data)
	*f = frame{}
	if sc.Object("part") {
		for key := range sc.Members() {
			switch string(key) {
			case "type":
				f.typ = f.str(sc, "type", hasType)
			case "id":
				f.id = f.str(sc, "id", hasID)
			case "delta":
				f.delta = f.str(sc, "delta", hasDelta)
			case "toolCallId":
				f.toolCallID = f.str(sc, "toolCallId", hasToolCallID)
			case "toolName":
				f.toolName = f.str(sc, "toolName", hasToolName)
			case "inputTextDelta":
				f.inputTextDelta = f.str(sc, "inputTextDelta", hasInputTextDelta)
			case "errorText":
				f.errorText = f.str(sc, "errorText", hasErrorText)
			case "finishReason":
				f.finishReason = f.str(sc, "finishReason", hasFinishReason)
			case "input":
				// Present even when null: tool-input-available's input is z.unknown().
				f.input = sc.Raw()
				f.has |= hasInput
			case "preliminary":
				raw := sc.Raw()
				f.preliminary = string(raw) == "true"
			default:
				sc.Skip()
			}
		}
	}
	return sc.Finish()
}

// str reads a string member, recording its presence unless it was null.
func (f *frame) str(sc *jsonwire.Scanner, field string, bit fieldSet) []byte {
	b := sc.Str(field)
	if b != nil && sc.Err() == nil {
		f.has |= bit
	}
	return b
}

// Part types, as ai 7.0.173's uiMessageChunkSchema lists them.
const (
	typeStart                = "start"
	typeFinish               = "finish"
	typeAbort                = "abort"
	typeError                = "error"
	typeStartStep            = "start-step"
	typeFinishStep           = "finish-step"
	typeResetStep            = "reset-step"
	typeTextStart            = "text-start"
	typeTextDelta            = "text-delta"
	typeTextEnd              = "text-end"
	typeReasoningStart       = "reasoning-start"
	typeReasoningDelta       = "reasoning-delta"
	typeReasoningEnd         = "reasoning-end"
	typeToolInputStart       = "tool-input-start"
	typeToolInputDelta       = "tool-input-delta"
	typeToolInputAvailable   = "tool-input-available"
	typeToolInputError       = "tool-input-error"
	typeToolOutputAvailable  = "tool-output-available"
	typeToolOutputError      = "tool-output-error"
	typeToolOutputDenied     = "tool-output-denied"
	typeToolApprovalRequest  = "tool-approval-request"
	typeToolApprovalResponse = "tool-approval-response"
)

// unjudged reports whether t is a part type accepted without judging (data-*: the app's).
func unjudged(t []byte) bool {
	switch string(t) {
	case "custom", "source-url", "source-document", "file", "reasoning-file", "message-metadata", "steering-message":
		return true
	}
	return len(t) > len("data-") && string(t[:len("data-")]) == "data-"
}
