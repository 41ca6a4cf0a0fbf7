package langgraph

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

var other = protocol.Observation{Kind: protocol.FrameOther}

// maxMessages bounds the messages followed, so a hostile stream cannot make the checker allocate.
const maxMessages = 4096

// streamed is one message as its messages-tuple chunks built it.
type streamed struct {
	text    protocol.RunningText // its chunks' text, bounded
	calls   []chunkCall
	checked bool // a state held it
	differs bool // a state held it otherwise than streamed: reported once
	broken  bool // a chunk could not be placed: no comparison (one defect, one violation)
}

// chunkCall is one tool call as its tool_call_chunks built it, by index.
type chunkCall struct {
	index    int
	id, name string
	args     []byte
}

// Checker judges one run stream (every langgraph rule). Not safe for concurrent use.
type Checker struct {
	s      *protocol.Session
	ground bool
	v      protocol.Violations
	tokens scenarios.TokenCounter

	events          int
	metadata        bool
	prevID          string
	ended           string // "error" or "end", once seen
	after           int
	final, sawState bool // final: the last state ends in the AI's answer, so the run completed
	unscripted      bool // an error event the script does not call for: judged partial

	msgs  map[string]*streamed
	order []string

	text     jsonwire.Text
	script   []scenarios.ScriptToolCall
	nextCall int
	judged   map[string]bool // AI message ids whose tool calls were judged against the script
}

// NewChecker returns a checker for one stream of s; noGroundTruth judges structure only.
func NewChecker(s *protocol.Session, noGroundTruth bool) *Checker {
	c := &Checker{s: s, ground: !noGroundTruth, msgs: map[string]*streamed{}, judged: map[string]bool{}}
	if c.ground {
		c.script = protocol.ScriptedCalls(&s.Expected)
		c.text = jsonwire.NewText(jsonwire.TurnParts(&s.Expected, false)...)
	}
	return c
}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	if c.ended != "" {
		c.after++
		if c.after == 1 {
			c.v.Add(RLifecycle, "expected nothing after the %s event, saw event %q", c.ended, ev.Type)
		}
		return other
	}
	c.events++
	c.checkID(ev.ID)
	base, _, _ := strings.Cut(ev.Type, "|")
	if c.events == 1 && base != EventMetadata {
		c.v.Add(RLifecycle, "expected the metadata event first, saw %s", eventName(ev.Type))
	}
	switch base {
	case EventMetadata:
		c.onMetadata(ev)
	case EventMessages:
		return c.onMessages(ev)
	case EventValues:
		var st State
		if !c.decode(ev, &st, "a state object") {
			return other
		}
		c.onState(st.Messages, true)
		if c.final { // the ReAct loop reached its end: the server closes the stream next
			return protocol.Observation{Kind: protocol.FrameTerminal}
		}
	case EventUpdates:
		var up map[string]json.RawMessage
		if !c.decode(ev, &up, "an object of node updates") {
			return other
		}
		for node, raw := range up {
			if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
				continue
			}
			var st State
			if err := json.Unmarshal(raw, &st); err != nil {
				c.v.Add(REvent, "updates: node %q: expected an object with messages, saw %s", node, protocol.Quote(raw, 80))
				continue
			}
			c.onState(st.Messages, false)
		}
	case EventError:
		return c.onError(ev)
	case EventEnd:
		c.ended = EventEnd
		return protocol.Observation{Kind: protocol.FrameTerminal}
	default:
		c.v.Add(REvent, "expected an event of the requested stream modes (messages, values, updates) or metadata, error, end; saw %s", eventName(ev.Type))
	}
	return other
}

func eventName(t string) string {
	if t == "" {
		return "an unnamed (message) event"
	}
	return "event " + strconv.Quote(t)
}

// checkID judges the id: lines a resuming client sends back: one sent again, or a {ms}-{seq}
// one going backwards, is R-langgraph-event (an unchanged id is the decoder's, not judged).
func (c *Checker) checkID(id string) {
	if id == "" || id == c.prevID {
		return
	}
	if c.prevID != "" {
		if a, ok := parseStreamID(c.prevID); ok {
			if b, ok := parseStreamID(id); ok && (b[0] < a[0] || b[0] == a[0] && b[1] <= a[1]) {
				c.v.Add(REvent, "expected event ids to increase (a resuming client sends the last back), saw %q after %q", id, c.prevID)
			}
		}
	}
	c.prevID = id
}

// parseStreamID reads an id of the {ms}-{seq} form (a Redis stream id, langgraph-api's).
func parseStreamID(id string) ([2]uint64, bool) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return [2]uint64{}, false
	}
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return [2]uint64{x, y}, err1 == nil && err2 == nil
}

func (c *Checker) decode(ev *sse.Event, v any, want string) bool {
	if err := json.Unmarshal(ev.Data, v); err != nil {
		c.v.Add(REvent, "%s: expected %s (JSON, joined over its data: lines), saw %s", ev.Type, want, protocol.Quote(ev.Data, 80))
		return false
	}
	return true
}

func (c *Checker) onMetadata(ev *sse.Event) {
	if c.metadata || c.events != 1 {
		c.v.Add(RLifecycle, "expected one metadata event, first; saw one as event %d", c.events)
	}
	c.metadata = true
	var m Metadata
	if !c.decode(ev, &m, `an object with "run_id"`) {
		return
	}
	if m.RunID == "" {
		c.v.Add(RLifecycle, "metadata: expected the run's run_id, saw %s", protocol.Quote(ev.Data, 80))
	}
}

func isAI(typ string) bool { return typ == TypeAIChunk || typ == TypeAI }

func (c *Checker) onMessages(ev *sse.Event) protocol.Observation {
	var tuple []json.RawMessage
	if !c.decode(ev, &tuple, "a [message chunk, metadata] pair") {
		return other
	}
	var m Message
	if len(tuple) != 2 || json.Unmarshal(tuple[0], &m) != nil || m.Type == "" || !isObject(tuple[1]) {
		c.v.Add(REvent, "messages: expected a [message chunk with a type, metadata object] pair, saw %s", protocol.Quote(ev.Data, 80))
		return other
	}
	text, ok := ContentText(m.Content)
	if !ok {
		c.v.Add(REvent, "messages: message %q: expected content as a string or text blocks, saw %s", m.ID, protocol.Quote(m.Content, 80))
		return other
	}
	if m.ID == "" {
		c.v.Add(RMessage, "messages: expected every chunk to carry its message's id, saw a %s chunk without one", m.Type)
		return other
	}
	st := c.msgs[m.ID]
	if st == nil {
		if len(c.msgs) >= maxMessages {
			return other
		}
		st = &streamed{}
		c.msgs[m.ID] = st
		c.order = append(c.order, m.ID)
	} else if st.checked {
		c.v.Add(RMessage, "message %s: expected its chunks before the state that holds it, saw one after", m.ID)
	}
	switch {
	case m.Type == TypeTool:
		st.text.Append([]byte(text))
		return protocol.Observation{Kind: protocol.FrameToolEnd}
	case m.Type == TypeHuman:
		st.text.Append([]byte(text))
		return other
	case !isAI(m.Type):
		c.v.Add(REvent, "messages: message %s: expected an AI, tool or human message, saw type %q", m.ID, m.Type)
		return other
	}
	obs := other
	if text != "" {
		st.text.Append([]byte(text))
		obs = protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(text), Tokens: c.tokens.Text(text)}
		if c.ground && !c.unscripted {
			jsonwire.Follow(&c.text, &c.v, RContent, "AI text", text, 60)
		}
	}
	for _, ch := range m.ToolCallChunks {
		if c.onToolChunk(m.ID, st, ch) && obs.Kind == protocol.FrameOther {
			obs = protocol.Observation{Kind: protocol.FrameToolStart}
		}
	}
	return obs
}

// onToolChunk adds one tool_call_chunk to its call; it reports whether it started one.
func (c *Checker) onToolChunk(id string, st *streamed, ch ToolCallChunk) bool {
	if ch.Index == nil {
		if !st.broken {
			c.v.Add(RMessage, "message %s: expected each tool_call_chunk to carry its call's index, saw one without", id)
		}
		st.broken = true
		return false
	}
	i := slices.IndexFunc(st.calls, func(cl chunkCall) bool { return cl.index == *ch.Index })
	started := i < 0
	if started {
		cl := chunkCall{index: *ch.Index, id: jsonwire.Deref(ch.ID), name: jsonwire.Deref(ch.Name)}
		if cl.id == "" || cl.name == "" {
			c.v.Add(RMessage, "message %s: tool call index %d: expected its first chunk to carry the call's id and name, saw id %q name %q", id, cl.index, cl.id, cl.name)
		}
		i, st.calls = len(st.calls), append(st.calls, cl)
	}
	if ch.Args != nil {
		st.calls[i].args = append(st.calls[i].args, *ch.Args...)
	}
	return started
}

// onState compares each message of a state or node update with the chunks streamed for it (the
// first difference reported), and judges new AI messages' tool calls against the script.
func (c *Checker) onState(msgs []Message, values bool) {
	for i := range msgs {
		m := &msgs[i]
		if st := c.msgs[m.ID]; st != nil && m.ID != "" && !st.differs {
			st.checked = true
			c.compare(m, st)
		}
		if isAI(m.Type) && m.ID != "" && !c.judged[m.ID] {
			c.judged[m.ID] = true
			c.judgeCalls(m)
		}
	}
	if values {
		c.sawState = true
		c.final = false
		if n := len(msgs); n > 0 {
			last := &msgs[n-1]
			c.final = isAI(last.Type) && len(last.ToolCalls) == 0
		}
	}
}

func (c *Checker) compare(m *Message, st *streamed) {
	if st.broken {
		return
	}
	text, ok := ContentText(m.Content)
	if !ok {
		c.v.Add(REvent, "state message %s: expected content as a string or text blocks, saw %s", m.ID, protocol.Quote(m.Content, 80))
		return
	}
	if !st.text.Equal([]byte(text)) {
		st.differs = true
		c.v.Add(RMessage, "message %s: expected the state's content to be its chunks' %s, saw %s", m.ID, protocol.Quote(st.text.Head(), 60), protocol.Quote(text, 60))
	}
	if !isAI(m.Type) {
		return
	}
	if len(m.ToolCalls) != len(st.calls) {
		st.differs = true
		c.v.Add(RMessage, "message %s: expected the %d tool call(s) its chunks streamed, the state holds %d", m.ID, len(st.calls), len(m.ToolCalls))
		return
	}
	for i, tc := range m.ToolCalls {
		cl := &st.calls[i]
		args := cl.args
		if len(bytes.TrimSpace(args)) == 0 {
			args = []byte("{}")
		}
		if tc.ID != cl.id || tc.Name != cl.name || !jsonwire.Equal(tc.Args, args) {
			st.differs = true
			c.v.Add(RMessage, "message %s: tool call %d: expected id %q, name %q, args %s as streamed, the state holds id %q, name %q, args %s",
				m.ID, i, cl.id, cl.name, protocol.Quote(args, 60), tc.ID, tc.Name, protocol.Quote(tc.Args, 60))
		}
	}
}

// judgeCalls compares an AI message's tool calls' names and arguments with the script's next.
func (c *Checker) judgeCalls(m *Message) {
	if !c.ground || c.unscripted {
		return
	}
	for _, tc := range m.ToolCalls {
		if c.nextCall >= len(c.script) {
			c.v.Add(RContent, "tool call %s (%s): expected no more calls (the script has %d), saw another", tc.ID, tc.Name, len(c.script))
			return
		}
		sc := &c.script[c.nextCall]
		c.nextCall++
		if tc.Name != sc.Name || !jsonwire.Equal(tc.Args, []byte(sc.Arguments)) {
			c.v.Add(RContent, "tool call %s: expected %s with args %s, saw %s with args %s", tc.ID, sc.Name, protocol.Quote(sc.Arguments, 60), tc.Name, protocol.Quote(tc.Args, 60))
		}
	}
}

func (c *Checker) onError(ev *sse.Event) protocol.Observation {
	c.ended = EventError
	var e RunError
	if err := json.Unmarshal(ev.Data, &e); err != nil || e.Error == "" && e.Message == "" {
		c.v.Add(RError, `error: expected {"error": name, "message": text}, saw %s`, protocol.Quote(ev.Data, 80))
		e = RunError{} // a partly decoded one is no message
	}
	c.unscripted = !c.s.ScriptedError()
	return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(cmp.Or(e.Message, e.Error))}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	// A cut, an abort and an unscripted error are judged on what arrived only.
	clean := streamErr == nil && !c.s.Aborted && !c.unscripted
	if clean {
		switch {
		case c.events == 0:
			c.v.Add(RLifecycle, "expected the metadata event and the run's events, the stream closed with none")
		case c.ended == "" && !c.final:
			last := "no values event"
			if c.sawState {
				last = "a last values state that does not end in the AI's answer (an AI message without tool calls)"
			}
			c.v.Add(RLifecycle, "expected the run's final state, an error or an end event before the stream closed, saw %s", last)
		}
		if c.ended != EventError {
			for _, id := range c.order {
				if st := c.msgs[id]; !st.checked && !st.broken {
					c.v.Add(RMessage, "message %s: streamed, expected it in a later state, saw none hold it", id)
				}
			}
		}
	}
	if c.ground && clean {
		if c.s.ScriptedError() && c.ended != EventError {
			c.v.Add(RError, "expected an error event (the provider fails with %s), the run ended without one", protocol.Quote(c.s.Expected.ProviderError, 60))
		}
		if !c.s.ScriptedError() && c.ended != EventError {
			c.text.Short(&c.v, RContent, "expected the AI text to continue with %s, saw only the first %d of %d bytes", 60)
			if c.nextCall < len(c.script) {
				sc := &c.script[c.nextCall]
				c.v.Add(RContent, "expected the script's %d tool call(s), saw %d (next: %s %s)", len(c.script), c.nextCall, sc.Name, protocol.Quote(sc.Arguments, 60))
			}
		}
	}
	return c.v.List()
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
