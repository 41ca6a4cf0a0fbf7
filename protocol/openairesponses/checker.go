package openairesponses

import (
	"bytes"
	"strconv"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

var other = protocol.Observation{Kind: protocol.FrameOther}

// maxItems bounds the output items followed, so a hostile stream cannot make the checker allocate.
const maxItems = 4096

// Part types that stream text, and the delta and .done events of each.
const (
	partOutputText    = "output_text"
	partRefusal       = "refusal"
	partReasoningText = "reasoning_text"
	partSummaryText   = "summary_text"
)

type item struct {
	id, typ        string
	open           bool
	incomplete     bool
	broken         bool // a part event could not be placed: no comparisons (one defect)
	parts, summary []part
	// args are a function_call's arguments from its deltas; argsDone is set by their .done.
	args     []byte
	argsDone bool
	callID   string
	name     string
	tool     int // index into the checker's tools, -1 for an item that is not a call
}

type part struct {
	typ      string
	open     bool
	text     protocol.RunningText // its deltas, bounded
	textDone bool                 // its response.<type>.done arrived
}

// Checker judges one turn's Responses stream (every rule). Not safe for concurrent use.
type Checker struct {
	clientturn.Judge
	v           protocol.Violations
	scan        jsonwire.Scanner
	view        eventView
	requireDone bool

	seq        int
	haveSeq    bool
	created    bool // response.created arrived
	notFirst   bool // the missing response.created was reported
	progress   bool // response.in_progress arrived
	items      []item
	itemsLost  bool // past maxItems: no longer followed
	tools      clientturn.Tools
	toolsLost  bool   // a call's arguments could not be placed: no checks on the calls
	terminal   string // the terminal event's type, "" before it
	errorEvent bool   // an error event arrived
	failed     bool   // response.failed arrived
	done       bool   // data: [DONE] arrived
	noFailed   bool   // an event other than response.failed followed the error (reported once)
}

// judgeRules name this wire's rules for its Judge; read only, shared by every checker.
var judgeRules = clientturn.Rules{
	Error: RError, Content: RContent,
	ErrorFrame: "error event", Thinking: "reasoning",
}

// NewChecker returns a checker of s's current turn; requireDone asks for the final [DONE].
func NewChecker(s *protocol.Session, requireDone bool) *Checker {
	return &Checker{Judge: clientturn.NewJudge(s, &judgeRules), requireDone: requireDone}
}

// Observe judges one SSE event.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		return c.onDone()
	}
	if c.done {
		c.AfterEnd(&c.v, RLifecycle, "expected the stream to end after data: [DONE], saw %s", protocol.Quote(string(data), 80))
		return other
	}
	if err := parseEvent(&c.scan, data, &c.view); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object event, saw %s", protocol.Quote(string(data), 80))
		return other
	}
	v := &c.view
	c.checkHeader(ev, v, data)
	if c.terminal != "" {
		c.AfterEnd(&c.v, RLifecycle, "expected nothing but data: [DONE] after %s, saw %s", c.terminal, v.typ)
		return other
	}
	typ := string(v.typ)
	if c.errorEvent && typ != "response.failed" && !c.noFailed {
		c.noFailed = true
		c.v.Add(RError, "expected response.failed right after the error event, saw %s", v.typ)
	}
	if !c.created && !c.notFirst && typ != "response.created" && typ != "error" {
		c.notFirst = true
		c.v.Add(RLifecycle, "expected response.created first, saw %s", v.typ)
	}
	return c.onEvent(typ, v)
}

// checkHeader judges a type equal to the event: line and a sequence_number above the last.
func (c *Checker) checkHeader(ev *sse.Event, v *eventView, data []byte) {
	switch {
	case len(v.typ) == 0:
		c.v.Add(REvent, "expected a type on every event, saw %s", protocol.Quote(string(data), 80))
	case ev.Type != string(v.typ):
		c.v.Add(REvent, "expected the event: line to equal the type %q, saw event: %q", v.typ, ev.Type)
	}
	switch {
	case !v.hasSeq:
		c.v.Add(RSequence, "%s: expected a sequence_number, saw none", v.typ)
	case c.haveSeq && v.seq <= c.seq:
		c.v.Add(RSequence, "%s: expected a sequence_number above %d, saw %d", v.typ, c.seq, v.seq)
		c.seq = v.seq
	default:
		c.seq, c.haveSeq = v.seq, true
	}
}

func (c *Checker) onEvent(typ string, v *eventView) protocol.Observation {
	switch typ {
	case "response.created":
		c.onCreated(v)
	case "response.in_progress":
		if c.progress {
			c.v.Add(RLifecycle, "expected one response.in_progress, saw another")
		}
		c.progress = true
	case "response.output_item.added":
		return c.onItemAdded(v)
	case "response.output_item.done":
		c.onItemDone(v)
	case "response.content_part.added":
		c.onPartAdded(typ, v, false)
	case "response.reasoning_summary_part.added":
		c.onPartAdded(typ, v, true)
	case "response.content_part.done":
		c.onPartDone(typ, v, false)
	case "response.reasoning_summary_part.done":
		c.onPartDone(typ, v, true)
	case "response.output_text.delta":
		return c.onDelta(typ, v, false, partOutputText)
	case "response.refusal.delta":
		return c.onDelta(typ, v, false, partRefusal)
	case "response.reasoning_text.delta":
		return c.onDelta(typ, v, false, partReasoningText)
	case "response.reasoning_summary_text.delta":
		return c.onDelta(typ, v, true, partSummaryText)
	case "response.output_text.done":
		c.onTextDone(typ, v, false, partOutputText)
	case "response.refusal.done":
		c.onTextDone(typ, v, false, partRefusal)
	case "response.reasoning_text.done":
		c.onTextDone(typ, v, false, partReasoningText)
	case "response.reasoning_summary_text.done":
		c.onTextDone(typ, v, true, partSummaryText)
	case "response.function_call_arguments.delta":
		c.onArgs(typ, v, false)
	case "response.function_call_arguments.done":
		c.onArgs(typ, v, true)
	case "response.completed", "response.incomplete", "response.failed":
		return c.onTerminal(typ, v)
	case "error":
		return c.onError(v)
	}
	// The specification has clients ignore the types they do not know.
	return protocol.Observation{Kind: protocol.FrameOther}
}

func (c *Checker) onCreated(v *eventView) {
	switch {
	case c.created:
		c.v.Add(RLifecycle, "expected one response.created, saw another")
	case c.notFirst:
		c.v.Add(RLifecycle, "expected response.created first, saw it after other events")
	}
	c.created = true
	if !v.hasResponse {
		c.v.Add(RLifecycle, "expected response.created to carry the response, saw none")
	} else if s := string(v.response.status); s != "in_progress" && s != "queued" {
		c.v.Add(RLifecycle, "expected response.created's response in_progress or queued, saw status %q", s)
	}
}

// findItem returns the open item v names by output_index and item_id, or nil after reporting
// why there is none (what names the event).
func (c *Checker) findItem(v *eventView, what string, needID bool) *item {
	if c.itemsLost {
		return nil
	}
	switch {
	case !v.hasOutputIndex:
		c.v.Add(REvent, "%s: expected an output_index, saw none", what)
		return nil
	case v.outputIndex < 0 || v.outputIndex >= len(c.items):
		c.v.Add(RItem, "%s: output_index %d names no item added (%d so far)", what, v.outputIndex, len(c.items))
		return nil
	}
	it := &c.items[v.outputIndex]
	switch {
	case needID && v.itemID == nil:
		c.v.Add(REvent, "%s: expected an item_id, saw none", what)
	case needID && string(v.itemID) != it.id:
		c.v.Add(RItem, "%s: item_id %q, but output_index %d is item %q", what, v.itemID, v.outputIndex, it.id)
		return nil
	}
	if !it.open {
		c.v.Add(RItem, "%s: item %d (%s) is not open (output_item.added opens it, output_item.done closes it)", what, v.outputIndex, it.id)
		return nil
	}
	return it
}

// findPart returns the open part of it v names, or nil after reporting why there is none.
func (c *Checker) findPart(it *item, v *eventView, summary bool, what string) *part {
	parts, index, has, field := it.parts, v.contentIndex, v.hasContentIndex, "content_index"
	if summary {
		parts, index, has, field = it.summary, v.summaryIndex, v.hasSummaryIndex, "summary_index"
	}
	switch {
	case !has:
		c.v.Add(REvent, "%s: expected a %s, saw none", what, field)
		return nil
	case index < 0 || index >= len(parts) || !parts[index].open:
		opens := "content_part"
		if summary {
			opens = "reasoning_summary_part"
		}
		c.v.Add(RItem, "%s: %s %d of item %s is not an open part (response.%s.added opens one, .done closes it)",
			what, field, index, it.id, opens)
		return nil
	}
	return &parts[index]
}

func (c *Checker) onItemAdded(v *eventView) protocol.Observation {
	if !v.hasItem {
		c.v.Add(REvent, "response.output_item.added: expected an item, saw none")
		return other
	}
	if c.itemsLost || len(c.items) >= maxItems {
		c.itemsLost = true
		return other
	}
	it := &v.item
	switch {
	case !v.hasOutputIndex || v.outputIndex != len(c.items):
		c.v.Add(RItem, "response.output_item.added: expected output_index %d (the next), saw %s", len(c.items), indexText(v))
	case len(c.items) > 0 && c.items[len(c.items)-1].incomplete:
		c.v.Add(RItem, "response.output_item.added: item %d was incomplete, so it must be the last", len(c.items)-1)
	}
	if len(it.id) == 0 || len(it.typ) == 0 {
		c.v.Add(RItem, "response.output_item.added: expected the item's id and type, saw id %q type %q", it.id, it.typ)
	}
	if it.status != nil && string(it.status) != "in_progress" {
		c.v.Add(RItem, "response.output_item.added: expected item %s in_progress, saw status %q", it.id, it.status)
	}
	n := item{id: string(it.id), typ: string(it.typ), open: true, tool: -1}
	kind := protocol.FrameOther
	switch n.typ {
	case "message":
		if len(it.role) == 0 {
			c.v.Add(RItem, "response.output_item.added: message %s without its role", it.id)
		}
	case "function_call":
		if len(it.name) == 0 || len(it.callID) == 0 {
			c.v.Add(RItem, "response.output_item.added: function_call %s without its name and call_id (saw %q, %q)", it.id, it.name, it.callID)
		}
		n.callID, n.name = string(it.callID), string(it.name)
		n.tool = len(c.tools.List)
		c.tools.Start(it.callID, it.name)
		kind = protocol.FrameToolStart
	}
	c.items = append(c.items, n)
	return protocol.Observation{Kind: kind}
}

// onPartAdded, onPartDone, onDelta, onTextDone and onArgs judge the event what of an item.
func (c *Checker) onPartAdded(what string, v *eventView, summary bool) {
	it := c.findItem(v, what, true)
	if it == nil {
		return
	}
	if !v.hasPart {
		c.v.Add(REvent, "%s: expected a part, saw none", what)
		return
	}
	parts, index, has := &it.parts, v.contentIndex, v.hasContentIndex
	switch {
	case summary:
		parts, index, has = &it.summary, v.summaryIndex, v.hasSummaryIndex
		if it.typ != "reasoning" {
			c.v.Add(RItem, "%s: a summary part in a %s item (%s), only reasoning items have them", what, it.typ, it.id)
		}
	case it.typ == "function_call":
		c.v.Add(RItem, "%s: a content part in function_call %s, which streams its arguments without one", what, it.id)
	}
	switch {
	case !has || index != len(*parts):
		c.v.Add(RItem, "%s: expected index %d (the item's next part), saw %d", what, len(*parts), index)
	case len(*parts) > 0 && (*parts)[len(*parts)-1].open:
		c.v.Add(RItem, "%s: part %d of item %s is still open", what, len(*parts)-1, it.id)
	}
	*parts = append(*parts, part{typ: string(v.part.typ), open: true})
}

// openPart returns the open part (and item) v names, marking the item broken when there is none.
func (c *Checker) openPart(v *eventView, summary bool, what string) (*item, *part) {
	it := c.findItem(v, what, true)
	if it == nil {
		return nil, nil
	}
	p := c.findPart(it, v, summary, what)
	if p == nil {
		it.broken = true
	}
	return it, p
}

func (c *Checker) onPartDone(what string, v *eventView, summary bool) {
	it, p := c.openPart(v, summary, what)
	if p == nil {
		return
	}
	p.open = false
	if !p.textDone && streamable(p.typ) {
		c.v.Add(RItem, "%s: the %s part of item %s closed without its response.%s.done", what, p.typ, it.id, p.typ)
	}
	if v.hasPart && v.part.hasText && !p.text.Equal(v.part.text) {
		c.v.Add(RText, "%s: the part's text (%d bytes) is not its deltas' concatenation (%d bytes)%s",
			what, len(v.part.text), p.text.Len(), p.text.FirstDiff(v.part.text))
	}
}

// streamable reports whether parts of type typ stream their text with delta and .done events.
func streamable(typ string) bool {
	return typ == partOutputText || typ == partRefusal || typ == partReasoningText || typ == partSummaryText
}

func (c *Checker) onDelta(what string, v *eventView, summary bool, typ string) protocol.Observation {
	if !v.hasDelta {
		c.v.Add(REvent, "%s: expected a delta, saw none", what)
		return other
	}
	// Where the text went is R-responses-item's; what it is, the script's (judged all the same).
	if _, p := c.openPart(v, summary, what); p != nil {
		switch {
		case p.typ != typ:
			c.v.Add(RItem, "%s: in a part of type %q, want %q", what, p.typ, typ)
		case p.textDone:
			c.v.Add(RItem, "%s: after the part's response.%s.done", what, typ)
		}
		p.text.Append(v.delta)
	}
	switch typ {
	case partOutputText:
		return c.Text(&c.v, v.delta)
	case partReasoningText:
		return c.Thinking(&c.v, v.delta)
	case partSummaryText:
		// A summary is the model's account, not the script's reasoning: never compared.
		if len(v.delta) > 0 {
			return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(v.delta)}
		}
	}
	return other
}

func (c *Checker) onTextDone(what string, v *eventView, summary bool, typ string) {
	_, p := c.openPart(v, summary, what)
	if p == nil {
		return
	}
	switch {
	case p.typ != typ:
		c.v.Add(RItem, "%s: in a part of type %q", what, p.typ)
	case p.textDone:
		c.v.Add(RItem, "%s: the part's text is done already", what)
	}
	p.textDone = true
	if !v.hasText {
		c.v.Add(REvent, "%s: expected the text, saw none", what)
		return
	}
	if !p.text.Equal(v.text) {
		c.v.Add(RText, "%s: text (%d bytes) is not its deltas' concatenation (%d bytes)%s", what, len(v.text), p.text.Len(), p.text.FirstDiff(v.text))
	}
}

func (c *Checker) onArgs(what string, v *eventView, done bool) {
	it := c.findItem(v, what, true)
	if it == nil {
		c.toolsLost = true
		return
	}
	if it.typ != "function_call" {
		c.toolsLost = true
		c.v.Add(RItem, "%s: item %s is a %s, not a function_call", what, it.id, it.typ)
		return
	}
	if it.argsDone {
		c.v.Add(RItem, "%s: after the call's arguments were done", what)
	}
	if !done {
		if !v.hasDelta {
			c.v.Add(REvent, "%s: expected a delta, saw none", what)
			return
		}
		it.args = append(it.args, v.delta...)
		c.tools.List[it.tool].Args = append(c.tools.List[it.tool].Args, v.delta...)
		return
	}
	it.argsDone = true
	if !v.hasArguments {
		c.v.Add(REvent, "%s: expected the arguments, saw none", what)
		return
	}
	if !bytes.Equal(v.arguments, it.args) {
		c.v.Add(RText, "%s: arguments %s are not their deltas' concatenation %s",
			what, protocol.Quote(string(v.arguments), 60), protocol.Quote(string(it.args), 60))
	}
}

func (c *Checker) onItemDone(v *eventView) {
	const what = "response.output_item.done"
	if !v.hasItem {
		c.v.Add(REvent, "%s: expected an item, saw none", what)
		return
	}
	d := &v.item
	if !v.hasOutputIndex || v.outputIndex < 0 || v.outputIndex >= len(c.items) {
		if !c.itemsLost {
			c.v.Add(RItem, "%s: output_index %s names no item added", what, indexText(v))
		}
		return
	}
	it := &c.items[v.outputIndex]
	switch {
	case !it.open:
		c.v.Add(RItem, "%s: item %d (%s) is not open", what, v.outputIndex, it.id)
		return
	case string(d.id) != it.id || string(d.typ) != it.typ:
		c.v.Add(RItem, "%s: item %d was added as %s %q, done as %s %q", what, v.outputIndex, it.typ, it.id, d.typ, d.id)
	}
	it.open = false
	for i := range it.parts {
		if it.parts[i].open {
			c.v.Add(RItem, "%s: item %s closed with its content part %d still open", what, it.id, i)
		}
	}
	for i := range it.summary {
		if it.summary[i].open {
			c.v.Add(RItem, "%s: item %s closed with its summary part %d still open", what, it.id, i)
		}
	}
	switch s := string(d.status); s {
	case "in_progress":
		c.v.Add(RItem, "%s: item %s still in_progress, want completed or incomplete", what, it.id)
	case "incomplete":
		it.incomplete = true
	}
	if it.typ == "function_call" {
		if !it.argsDone {
			c.v.Add(RItem, "%s: function_call %s closed without response.function_call_arguments.done", what, it.id)
		}
		if string(d.callID) != it.callID || string(d.name) != it.name {
			c.v.Add(RItem, "%s: function_call %s was added as %s %q, done as %s %q", what, it.id, it.callID, it.name, d.callID, d.name)
		}
	}
	c.compareItem(what, d, it)
}

// compareItem checks an item's final content d is what its events streamed.
func (c *Checker) compareItem(what string, d *itemView, it *item) {
	if it.broken {
		return
	}
	if it.typ == "function_call" {
		if !d.hasArguments || !bytes.Equal(d.arguments, it.args) {
			c.v.Add(RText, "%s: function_call %s's arguments %s are not the streamed %s",
				what, it.id, protocol.Quote(string(d.arguments), 60), protocol.Quote(string(it.args), 60))
		}
		return
	}
	for _, side := range [2]struct {
		name     string
		final    []partView
		streamed []part
	}{{"content", d.content, it.parts}, {"summary", d.summary, it.summary}} {
		if len(side.final) != len(side.streamed) {
			c.v.Add(RText, "%s: item %s has %d %s part(s), %d streamed", what, it.id, len(side.final), side.name, len(side.streamed))
			continue
		}
		for i := range side.final {
			if st := &side.streamed[i].text; !st.Equal(side.final[i].text) {
				c.v.Add(RText, "%s: item %s's %s part %d (%d bytes) is not the streamed text (%d bytes)%s",
					what, it.id, side.name, i, len(side.final[i].text), st.Len(), st.FirstDiff(side.final[i].text))
			}
		}
	}
}

func (c *Checker) onTerminal(typ string, v *eventView) protocol.Observation {
	c.terminal = typ
	want := typ[len("response."):]
	r := &v.response
	switch {
	case !v.hasResponse:
		c.v.Add(RLifecycle, "%s: expected the response, saw none", typ)
	case string(r.status) != want:
		c.v.Add(RLifecycle, "%s: expected the response's status %q, saw %q", typ, want, r.status)
	}
	if typ == "response.failed" {
		c.failed = true
		if c.errorEvent {
			return protocol.Observation{Kind: protocol.FrameTerminal}
		}
		if !r.hasError || len(r.errMessage) == 0 {
			c.v.Add(RError, "response.failed: expected the response's error with a message, saw none")
		}
		return c.ProviderError(&c.v, r.errMessage)
	}
	if !c.itemsLost {
		incomplete := false
		for i := range c.items {
			if c.items[i].open {
				c.v.Add(RItem, "%s: item %d (%s) never closed by response.output_item.done", typ, i, c.items[i].id)
			}
			incomplete = incomplete || c.items[i].incomplete
		}
		if incomplete && typ == "response.completed" {
			c.v.Add(RItem, "response.completed: an item ended incomplete, so the response must be incomplete")
		}
		if v.hasResponse && r.hasOutput {
			c.compareOutput(typ, r.output)
		}
	}
	obs := protocol.Observation{Kind: protocol.FrameTerminal}
	switch {
	case r.hasUsage && r.hasTokens && (r.outputTokens < 0 || r.outputTokens > protocol.MaxUsageTokens):
		c.v.Add(RUsage, "%s: expected usage.output_tokens, a count in 0…2^40, saw %d", typ, r.outputTokens)
	case r.hasUsage && r.hasTokens:
		obs.UsageTokens = r.outputTokens
	case typ == "response.completed" && !c.S.NoGroundTruth:
		// Optional without ground truth: tokens are then estimated from the text.
		c.v.Add(RUsage, "response.completed: expected usage.output_tokens, saw none")
	}
	return obs
}

// compareOutput checks the terminal's output items against the items streamed.
func (c *Checker) compareOutput(typ string, output []itemView) {
	if len(output) != len(c.items) {
		c.v.Add(RText, "%s: the response's output has %d item(s), %d streamed", typ, len(output), len(c.items))
		return
	}
	for i := range output {
		if string(output[i].id) != c.items[i].id {
			c.v.Add(RText, "%s: output[%d] is %q, the item streamed there %q", typ, i, output[i].id, c.items[i].id)
			continue
		}
		c.compareItem(typ, &output[i], &c.items[i])
	}
}

func (c *Checker) onError(v *eventView) protocol.Observation {
	c.errorEvent = true
	msg := v.message
	if msg == nil {
		msg = v.errMessage
	}
	if len(msg) == 0 {
		c.v.Add(RError, "expected an error event with a message ({\"type\":\"error\",\"message\":…}), saw none")
	}
	return c.ProviderError(&c.v, msg)
}

func (c *Checker) onDone() protocol.Observation {
	switch {
	case c.done:
		c.v.Add(RLifecycle, "expected one data: [DONE], saw another")
	case c.terminal == "" && !c.errorEvent:
		c.v.Add(RLifecycle, "expected data: [DONE] after response.completed, incomplete or failed, saw it before")
	}
	c.done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	if c.errorEvent && !c.failed && !c.noFailed && streamErr == nil && !c.S.Aborted {
		c.v.Add(RError, "expected response.failed after the error event, the stream ended")
	}
	errored := c.errorEvent || c.failed
	if !c.Ended(&c.v, streamErr, errored) {
		return c.v.List()
	}
	if !errored && c.terminal == "" {
		c.v.Add(RLifecycle, "expected response.completed, incomplete or failed, the stream ended without one")
	}
	if c.requireDone && !c.done {
		c.v.Add(RLifecycle, "expected data: [DONE] at the end (requireDone: the Open Responses specification's end of stream), the stream ended without it")
	}
	// Against the script (a failed turn streams no more calls):
	if c.FinishScript(&c.v, c.tools.List, errored || c.toolsLost || c.itemsLost, "") != nil && c.terminal == "response.incomplete" {
		c.v.Add(RContent, "expected response.completed (the script's turn %d ends), saw response.incomplete", c.S.Turn)
	}
	return c.v.List()
}

func indexText(v *eventView) string {
	if !v.hasOutputIndex {
		return "none"
	}
	return strconv.Itoa(v.outputIndex)
}
