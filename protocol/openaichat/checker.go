package openaichat

import (
	"bytes"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/sse"
)

// Checker judges one turn's chunk stream (every openai-chat rule). Not safe for concurrent use.
type Checker struct {
	clientturn.Judge
	v         protocol.Violations
	scan      jsonwire.Scanner
	view      openai.Chunk
	tools     clientturn.Tools
	finish    string // the finish_reason seen, "" before
	usage     int    // usage chunks seen
	toolsLost bool   // a tool_calls delta could not be placed: no checks on the calls (one defect)
	errored   bool   // a mid-stream error frame arrived
	done      bool   // data: [DONE] arrived
}

// judgeRules name this wire's rules for its Judge; read only, shared by every checker.
var judgeRules = clientturn.Rules{
	Error: RError, Content: RContent, Stop: RFinish,
	ErrorFrame: "provider error frame", Thinking: "reasoning",
	StopField: "finish_reason", EndTurn: "stop", ToolUse: "tool_calls",
}

// NewChecker returns a checker for the stream of s's current turn (s.Turn).
func NewChecker(s *protocol.Session) *Checker {
	return &Checker{Judge: clientturn.NewJudge(s, &judgeRules)}
}

// Observe judges one SSE event.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	other := protocol.Observation{Kind: protocol.FrameOther}
	data := bytes.TrimSpace(ev.Data)
	switch {
	case c.done || c.errored:
		rule, what := RDone, "data: [DONE]"
		if c.errored {
			rule, what = RError, "the error frame"
		}
		c.AfterEnd(&c.v, rule, "expected the stream to end after %s, saw %s", what, protocol.Quote(string(data), 80))
		return other
	case ev.Type != "":
		c.v.Add(protocol.RFraming, "expected data-only frames (no event: line), saw event %q", ev.Type)
	}
	if string(data) == "[DONE]" {
		return c.onDone()
	}
	if err := openai.ParseChunk(&c.scan, data, &c.view); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected a JSON object chunk, saw %s", protocol.Quote(string(data), 80))
		return other
	}
	v := &c.view
	if v.HasError {
		return c.onError(v, data)
	}
	if !v.HasChoices || string(v.Object) != "chat.completion.chunk" {
		c.v.Add(protocol.RFraming, "expected a chat.completion.chunk with a choices array, saw %s", protocol.Quote(string(data), 80))
	}
	obs := other
	if v.HasUsage {
		c.onUsage(v, data)
	}
	for i := range v.Choices {
		c.onChoice(&v.Choices[i], &obs, data)
	}
	if v.HasUsage && v.HasCompletionTokens && v.CompletionTokens > 0 && v.CompletionTokens <= protocol.MaxUsageTokens {
		obs.UsageTokens = v.CompletionTokens
	}
	return obs
}

func (c *Checker) onChoice(ch *openai.Choice, obs *protocol.Observation, data []byte) {
	if !ch.HasIndex || ch.Index != 0 {
		c.v.Add(protocol.RFraming, "expected the one choice asked for, index 0, saw %s", protocol.Quote(string(data), 80))
		return
	}
	hasDelta := len(ch.Content) > 0 || len(ch.ReasoningContent) > 0 || len(ch.Reasoning) > 0 || len(ch.ToolCalls) > 0
	if hasDelta && c.finish != "" {
		c.v.Add(RFinish, "expected nothing but usage after finish_reason %q, saw a delta %s", c.finish, protocol.Quote(string(data), 80))
	}
	if hasDelta && c.usage > 0 {
		c.v.Add(RUsage, "expected the usage chunk last before [DONE], saw a delta after it")
	}
	reasoning := ch.ReasoningContent
	switch {
	case reasoning == nil:
		reasoning = ch.Reasoning
	case ch.Reasoning != nil && !bytes.Equal(ch.Reasoning, reasoning):
		c.v.Add(protocol.RFraming, "delta carries reasoning_content %s and a different reasoning %s",
			protocol.Quote(string(reasoning), 40), protocol.Quote(string(ch.Reasoning), 40))
	}
	if len(reasoning) > 0 {
		*obs = c.Thinking(&c.v, reasoning)
	}
	if len(ch.Content) > 0 {
		a := c.Text(&c.v, ch.Content)
		*obs = protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: a.TextBytes + obs.TextBytes, Tokens: a.Tokens + obs.Tokens}
	}
	for i := range ch.ToolCalls {
		if c.onToolCall(&ch.ToolCalls[i], data) && obs.Kind == protocol.FrameOther {
			obs.Kind = protocol.FrameToolStart
		}
	}
	if ch.FinishReason != nil {
		c.onFinish(ch.FinishReason)
		if obs.Kind == protocol.FrameOther {
			obs.Kind = protocol.FrameTerminal
		}
	}
}

// onToolCall assembles one tool_calls element and reports whether it opened a call.
func (c *Checker) onToolCall(tc *openai.ToolCall, data []byte) bool {
	if !tc.HasIndex {
		c.toolsLost = true
		c.v.Add(RToolCall, "expected every tool_calls delta to carry its index, saw %s", protocol.Quote(string(data), 100))
		return false
	}
	n := len(c.tools.List)
	switch {
	case tc.Index < 0 || tc.Index >= openai.MaxToolIndex || tc.Index > n:
		c.toolsLost = true
		c.v.Add(RToolCall, "tool_calls index %d: expected an open call or the next one, %d", tc.Index, n)
		return false
	case tc.Index == n:
		if tc.ID == nil || len(tc.Name) == 0 {
			c.v.Add(RToolCall, "tool_calls index %d: expected the first delta to carry id and function.name, saw %s",
				tc.Index, protocol.Quote(string(data), 100))
		}
		if tc.Type != nil && string(tc.Type) != "function" {
			c.v.Add(RToolCall, "tool_calls index %d: expected type \"function\", saw %q", tc.Index, tc.Type)
		}
		t := c.tools.Start(tc.ID, tc.Name)
		t.Args = append(t.Args, tc.Args...)
		return true
	}
	t := &c.tools.List[tc.Index]
	// A later delta may repeat the call's id or name (some servers do), not name another.
	if (len(tc.ID) > 0 && string(tc.ID) != t.ID) || (len(tc.Name) > 0 && string(tc.Name) != t.Name) {
		c.v.Add(RToolCall, "tool_calls index %d: expected id/name only on the first delta (%s %s), saw %s %s",
			tc.Index, t.ID, t.Name, tc.ID, tc.Name)
	}
	t.Args = append(t.Args, tc.Args...)
	return false
}

func (c *Checker) onFinish(reason []byte) {
	if c.finish != "" {
		c.v.Add(RFinish, "expected one finish_reason, saw %q after %q", reason, c.finish)
		return
	}
	c.finish = finishName(reason)
	switch c.finish {
	case "stop", "length", "content_filter", "function_call":
	case "tool_calls":
		if len(c.tools.List) == 0 && !c.toolsLost {
			c.v.Add(RFinish, "finish_reason \"tool_calls\" without any tool call")
		}
	default:
		c.v.Add(RFinish, "expected finish_reason stop, length, tool_calls or content_filter, saw %q", reason)
	}
}

// finishName returns the known finish reason as a constant (no allocation), else a copy.
func finishName(b []byte) string {
	if s, ok := jsonwire.Known(b, "stop", "length", "tool_calls", "content_filter", "function_call"); ok {
		return s
	}
	if len(b) == 0 {
		return `""`
	}
	return string(b)
}

func (c *Checker) onUsage(v *openai.Chunk, data []byte) {
	c.usage++
	// Without ground truth usage may ride on the finish_reason's chunk, as some servers send it.
	onFinish := c.S.NoGroundTruth && len(v.Choices) == 1 && len(v.Choices[0].FinishReason) > 0
	switch {
	case c.usage > 1:
		c.v.Add(RUsage, "expected one usage chunk, saw another: %s", protocol.Quote(string(data), 80))
	case len(v.Choices) > 0 && !onFinish:
		c.v.Add(RUsage, "expected the usage chunk with empty choices, saw %s", protocol.Quote(string(data), 80))
	case c.finish == "" && !onFinish:
		c.v.Add(RUsage, "expected the usage chunk after the finish_reason, saw it before")
	case !v.HasCompletionTokens || v.CompletionTokens < 0 || v.CompletionTokens > protocol.MaxUsageTokens:
		c.v.Add(RUsage, "expected usage.completion_tokens, a count in 0…2^40, saw %s", protocol.Quote(string(data), 80))
	}
}

func (c *Checker) onError(v *openai.Chunk, data []byte) protocol.Observation {
	c.errored = true
	if v.ErrorMessage == nil {
		c.v.Add(RError, "expected an error frame {\"error\":{\"message\":…}}, saw %s", protocol.Quote(string(data), 80))
	}
	return c.ProviderError(&c.v, v.ErrorMessage)
}

func (c *Checker) onDone() protocol.Observation {
	c.done = true
	if c.finish == "" {
		c.v.Add(RFinish, "expected a finish_reason before data: [DONE], saw none")
	}
	if c.usage == 0 && !c.S.NoGroundTruth {
		// Without ground truth it is optional (TGI sends none): tokens are then estimated.
		c.v.Add(RUsage, "expected a usage chunk (stream_options.include_usage) before data: [DONE], saw none")
	}
	return protocol.Observation{Kind: protocol.FrameDone}
}

// TerminalMissing says why the stream has no terminal when [DONE] came without a
// finish_reason chunk before it (a gateway that drops an error frame and appends [DONE] does
// so) (protocol.TerminalMissing).
func (c *Checker) TerminalMissing() string {
	if c.done && c.finish == "" {
		return "data: [DONE] came with no finish_reason chunk before it"
	}
	return ""
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	if !c.Ended(&c.v, streamErr, c.errored) {
		return c.v.List()
	}
	if !c.errored {
		c.finishComplete()
	}
	// Against the script (a failed turn streams no finish_reason):
	c.FinishScript(&c.v, c.tools.List, c.errored || c.toolsLost, c.finish)
	return c.v.List()
}

// finishComplete checks the end of a stream that did not fail.
func (c *Checker) finishComplete() {
	if !c.done {
		if c.finish == "" {
			c.v.Add(RFinish, "expected a finish_reason, the stream ended without one")
		}
		if c.usage == 0 && !c.S.NoGroundTruth {
			c.v.Add(RUsage, "expected a usage chunk (stream_options.include_usage), the stream ended without one")
		}
		c.v.Add(RDone, "expected data: [DONE] at the end, the stream ended without it")
	}
	for i := range c.tools.List {
		if t := &c.tools.List[i]; !clientturn.JSONObject(t.Args) {
			c.v.Add(RToolCall, "tool call %d (%s %s): arguments do not assemble to a JSON object: %s",
				i, t.ID, t.Name, protocol.Quote(string(t.Args), 80))
		}
	}
}

var _ protocol.TerminalMissing = (*Checker)(nil)
