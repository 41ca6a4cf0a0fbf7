package anthropicmessages

import (
	"bytes"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

var other = protocol.Observation{Kind: protocol.FrameOther}

type block struct {
	kind    anthropic.BlockKind // BlockOther: judged for order only
	stopped bool
	tool    int // index into the checker's tools for tool_use blocks
}

// Checker judges one turn's Messages stream (every rule). Not safe for concurrent use.
type Checker struct {
	clientturn.Judge
	v       protocol.Violations
	scan    jsonwire.Scanner
	view    anthropic.Event
	blocks  []block
	tools   clientturn.Tools
	started bool   // message_start seen
	deltas  int    // message_delta events seen
	stop    string // the stop_reason
	stopped bool   // message_stop seen
	errored bool   // a mid-stream error event arrived
}

// judgeRules name this wire's rules for its Judge; read only, shared by every checker.
var judgeRules = clientturn.Rules{
	Error: RError, Content: RContent, Stop: RMessage,
	ErrorFrame: "error event", Thinking: "thinking",
	StopField: "stop_reason", EndTurn: "end_turn", ToolUse: "tool_use",
}

// NewChecker returns a checker for the stream of s's current turn (s.Turn).
func NewChecker(s *protocol.Session) *Checker {
	return &Checker{Judge: clientturn.NewJudge(s, &judgeRules)}
}

// Observe judges one SSE event.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	data := bytes.TrimSpace(ev.Data)
	if err := anthropic.ParseEvent(&c.scan, data, &c.view); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object event, saw %s", protocol.Quote(string(data), 80))
		return other
	}
	e := &c.view
	typ := anthropic.EventType(e.Type)
	if ev.Type != "" && ev.Type != string(e.Type) {
		c.v.Add(protocol.RFraming, "event: %q carries data of type %q", ev.Type, e.Type)
	}
	if typ == "ping" {
		return other // allowed anywhere, even before message_start
	}
	if c.stopped || c.errored {
		rule, what := RMessage, "message_stop"
		if c.errored {
			rule, what = RError, "the error event"
		}
		c.AfterEnd(&c.v, rule, "expected the stream to end after %s, saw %s", what, protocol.Quote(string(data), 80))
		return other
	}
	if typ == "error" {
		return c.onError(e, data)
	}
	if !c.started && typ != "message_start" {
		c.started = true // reported once; judge the rest as if it had come
		c.v.Add(RMessage, "expected message_start first, saw %s", protocol.Quote(string(data), 80))
	}
	switch typ {
	case "message_start":
		if c.started {
			c.v.Add(RMessage, "expected one message_start, first, saw another")
		}
		c.started = true
		if !e.HasMessage {
			c.v.Add(RMessage, "expected message_start to carry the message, saw %s", protocol.Quote(string(data), 80))
		}
	case "content_block_start":
		return c.onBlockStart(e, data)
	case "content_block_delta":
		return c.onBlockDelta(e, data)
	case "content_block_stop":
		if b := c.block(e, "content_block_stop"); b != nil {
			b.stopped = true
			if b.kind == anthropic.BlockTool {
				if t := &c.tools.List[b.tool]; !clientturn.JSONObject(toolInput(t.Args)) {
					c.v.Add(RBlock, "tool_use block %d (%s %s): input_json_delta pieces do not assemble to a JSON object: %s",
						e.Index, t.ID, t.Name, protocol.Quote(string(t.Args), 80))
				}
			}
		}
	case "message_delta":
		// The stop_reason's message_delta is the turn's terminal; message_stop is the end
		// marker, like [DONE] (a stream without it is R-anthropic-message's, not truncated).
		c.onMessageDelta(e, data)
		obs := protocol.Observation{Kind: protocol.FrameOther}
		if c.deltas == 1 {
			obs.Kind = protocol.FrameTerminal
		}
		if e.Usage.HasOutput && e.Usage.OutputTokens > 0 && e.Usage.OutputTokens <= protocol.MaxUsageTokens {
			obs.UsageTokens = e.Usage.OutputTokens
		}
		return obs
	case "message_stop":
		c.stopped = true
		if c.deltas == 0 { // no terminal came before it: this is the end the stream has
			c.v.Add(RMessage, "expected a message_delta with the stop_reason before message_stop, saw none")
			return protocol.Observation{Kind: protocol.FrameTerminal}
		}
		return protocol.Observation{Kind: protocol.FrameDone}
	}
	// Unknown event types are skipped: the API may add some at any time.
	return other
}

// toolInput is a tool_use block's assembled input: no input_json_delta at all is {}.
func toolInput(args []byte) []byte {
	if len(bytes.TrimSpace(args)) == 0 {
		return []byte("{}")
	}
	return args
}

func (c *Checker) onBlockStart(e *anthropic.Event, data []byte) protocol.Observation {
	if c.deltas > 0 {
		c.v.Add(RMessage, "expected no content after message_delta, saw content_block_start %d", e.Index)
	}
	switch {
	case !e.HasIndex || !e.HasBlock:
		c.v.Add(RBlock, "expected content_block_start with index and content_block, saw %s", protocol.Quote(string(data), 80))
		return other
	case e.Index != len(c.blocks) || e.Index >= anthropic.MaxBlocks:
		c.v.Add(RBlock, "expected content_block_start index %d (the next block), saw %d", len(c.blocks), e.Index)
		return other
	}
	b := block{}
	obs := other
	switch string(e.Block.Type) {
	case "thinking":
		b.kind = anthropic.BlockThinking
		obs = c.Thinking(&c.v, e.Block.Thinking)
	case "text":
		b.kind = anthropic.BlockText
		obs = c.Text(&c.v, e.Block.Text)
	case "tool_use":
		b.kind, b.tool = anthropic.BlockTool, len(c.tools.List)
		if len(e.Block.ID) == 0 || len(e.Block.Name) == 0 {
			c.v.Add(RBlock, "tool_use block %d: expected id and name, saw %s", e.Index, protocol.Quote(string(data), 80))
		}
		c.tools.Start(e.Block.ID, e.Block.Name)
		obs = protocol.Observation{Kind: protocol.FrameToolStart}
	}
	c.blocks = append(c.blocks, b)
	return obs
}

// block returns the started, unstopped block e addresses, or nil after reporting why not.
func (c *Checker) block(e *anthropic.Event, what string) *block {
	switch {
	case !e.HasIndex:
		c.v.Add(RBlock, "expected %s with an index", what)
	case e.Index < 0 || e.Index >= len(c.blocks):
		c.v.Add(RBlock, "%s for block %d, which was never started", what, e.Index)
	case c.blocks[e.Index].stopped:
		c.v.Add(RBlock, "%s for block %d, which was already stopped", what, e.Index)
	default:
		return &c.blocks[e.Index]
	}
	return nil
}

func (c *Checker) onBlockDelta(e *anthropic.Event, data []byte) protocol.Observation {
	b := c.block(e, "content_block_delta")
	if b == nil {
		return other
	}
	if !e.HasDelta {
		c.v.Add(RBlock, "expected content_block_delta with a delta, saw %s", protocol.Quote(string(data), 80))
		return other
	}
	want, ok := anthropic.DeltaKind(e.Delta.Type)
	if !ok {
		return other // future delta types: tolerated
	}
	if b.kind != want {
		c.v.Add(RBlock, "%s on block %d, which is not a %s block", e.Delta.Type, e.Index, want)
		return other
	}
	switch string(e.Delta.Type) {
	case "thinking_delta":
		return c.Thinking(&c.v, e.Delta.Thinking)
	case "text_delta":
		return c.Text(&c.v, e.Delta.Text)
	case "input_json_delta":
		t := &c.tools.List[b.tool]
		t.Args = append(t.Args, e.Delta.PartialJSON...)
	}
	return other
}

func (c *Checker) onMessageDelta(e *anthropic.Event, data []byte) {
	c.deltas++
	if c.deltas > 1 {
		c.v.Add(RMessage, "expected one message_delta, saw another: %s", protocol.Quote(string(data), 80))
		return
	}
	for i := range c.blocks {
		if !c.blocks[i].stopped {
			c.v.Add(RBlock, "block %d is still open at message_delta: expected content_block_stop first", i)
			break
		}
	}
	if !e.HasDelta || len(e.Delta.StopReason) == 0 {
		c.v.Add(RMessage, "expected message_delta to carry delta.stop_reason, saw %s", protocol.Quote(string(data), 80))
		return
	}
	if (!e.Usage.HasOutput && !c.S.NoGroundTruth) || (e.Usage.HasOutput && (e.Usage.OutputTokens < 0 || e.Usage.OutputTokens > protocol.MaxUsageTokens)) {
		// Optional without ground truth (tokens are then estimated); out of range never.
		c.v.Add(RMessage, "expected message_delta to carry usage.output_tokens, a count in 0…2^40, saw %s", protocol.Quote(string(data), 80))
	}
	c.stop = stopName(e.Delta.StopReason)
	switch c.stop {
	case "end_turn", "max_tokens", "stop_sequence", "pause_turn", "refusal", "model_context_window_exceeded":
	case "tool_use":
		if len(c.tools.List) == 0 {
			c.v.Add(RMessage, "stop_reason \"tool_use\" without a tool_use block")
		}
	default:
		c.v.Add(RMessage, "unknown stop_reason %q", c.stop)
	}
}

// stopName returns the known stop reason as a constant (no allocation), else a copy.
func stopName(b []byte) string {
	if s, ok := jsonwire.Known(b, "end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal", "model_context_window_exceeded"); ok {
		return s
	}
	return string(b)
}

func (c *Checker) onError(e *anthropic.Event, data []byte) protocol.Observation {
	c.errored = true
	if !e.HasError || e.ErrorMessage == nil {
		c.v.Add(RError, "expected an error event {\"type\":\"error\",\"error\":{\"type\":…,\"message\":…}}, saw %s", protocol.Quote(string(data), 80))
	}
	return c.ProviderError(&c.v, e.ErrorMessage)
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	if !c.Ended(&c.v, streamErr, c.errored) {
		return c.v.List()
	}
	if !c.errored {
		switch {
		case !c.started:
			c.v.Add(RMessage, "expected message_start … message_stop, the stream was empty")
		case !c.stopped:
			c.v.Add(RMessage, "expected message_stop last, the stream ended without it")
		}
		if c.deltas == 0 {
			for i := range c.blocks {
				if !c.blocks[i].stopped {
					c.v.Add(RBlock, "block %d was never stopped", i)
					break
				}
			}
		}
	}
	// Against the script (a failed turn streams no stop_reason):
	c.FinishScript(&c.v, c.tools.List, c.errored, c.stop)
	return c.v.List()
}
