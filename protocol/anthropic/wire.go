package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// Wire is the runtime's side of the Messages wire. Safe for concurrent use; its streams are not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// Request defaults NewRequest sends.
const (
	defaultMaxTokens     = 4096
	thinkingBudgetTokens = 1024
)

// Name returns "anthropic", the wire's name in deployment files.
func (Wire) Name() string { return "anthropic" }

type messagesRequest struct {
	Model     string         `json:"model"`
	MaxTokens int            `json:"max_tokens"`
	System    string         `json:"system,omitempty"`
	Messages  []message      `json:"messages"`
	Stream    bool           `json:"stream"`
	Tools     []tool         `json:"tools,omitempty"`
	Thinking  *thinkingParam `json:"thinking,omitempty"`
}

type message struct {
	Role    string         `json:"role"`
	Content []contentBlock `json:"content"`
}

// contentBlock is one request content block; which fields are set depends on Type.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type thinkingParam struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// anyObjectSchema is the schema of every offered tool: the simulated tools take any object.
const anyObjectSchema = `{"type":"object"}`

// NewRequest builds POST {baseURL}/v1/messages streaming req: consecutive tool results (and a
// user text right after them) make one user message, as the API wants alternating roles;
// system messages the system prompt; max_tokens 4096 unless MaxTokens is set; Thinking a
// 1024-token budget; a placeholder x-api-key that req.Header may replace. Earlier turns'
// thinking blocks are not replayed (the mock does not need them; the real API wants them in a
// tool loop with thinking on). req.Timeout is the caller's to apply via ctx.
func (Wire) NewRequest(ctx context.Context, baseURL string, req *protocol.ModelRequest) (*http.Request, error) {
	body := messagesRequest{
		Model:     req.Model,
		MaxTokens: defaultMaxTokens,
		Messages:  make([]message, 0, len(req.Messages)),
		Stream:    true,
	}
	if req.MaxTokens > 0 {
		body.MaxTokens = req.MaxTokens
	}
	if req.Thinking {
		body.Thinking = &thinkingParam{Type: "enabled", BudgetTokens: thinkingBudgetTokens}
	}
	for _, name := range req.Tools {
		body.Tools = append(body.Tools, tool{Name: name, InputSchema: json.RawMessage(anyObjectSchema)})
	}
	// lastIsToolResults is set while the last message is a user message of tool results, which
	// a user block (a text, another result) joins.
	lastIsToolResults := false
	userBlock := func(b contentBlock, toolResult bool) {
		if lastIsToolResults {
			last := &body.Messages[len(body.Messages)-1]
			last.Content = append(last.Content, b)
		} else {
			body.Messages = append(body.Messages, message{Role: "user", Content: []contentBlock{b}})
		}
		lastIsToolResults = toolResult
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		text := m.Text
		switch m.Role {
		case "system":
			// The API takes the system prompt apart from the messages.
			if body.System != "" {
				body.System += "\n\n"
			}
			body.System += text
		case "user":
			userBlock(contentBlock{Type: "text", Text: &text}, false)
		case "assistant":
			msg := message{Role: "assistant"}
			if text != "" {
				msg.Content = append(msg.Content, contentBlock{Type: "text", Text: &text})
			}
			for j, call := range m.ToolCalls {
				input := json.RawMessage(call.Arguments)
				if len(bytes.TrimSpace(input)) == 0 {
					input = json.RawMessage(`{}`)
				}
				if !json.Valid(input) {
					return nil, fmt.Errorf("anthropic request: messages[%d].tool_calls[%d] (%s): arguments are not valid JSON", i, j, call.Name)
				}
				msg.Content = append(msg.Content, contentBlock{Type: "tool_use", ID: call.ID, Name: call.Name, Input: input})
			}
			if len(msg.Content) == 0 {
				msg.Content = append(msg.Content, contentBlock{Type: "text", Text: &text})
			}
			body.Messages = append(body.Messages, msg)
			lastIsToolResults = false
		case "tool":
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("anthropic request: messages[%d]: tool result without a tool call id", i)
			}
			userBlock(contentBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &text, IsError: m.IsError}, true)
		default:
			return nil, fmt.Errorf("anthropic request: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	return jsonwire.NewRequest(ctx, "anthropic", baseURL, "/v1/messages", &body, req.Header,
		"anthropic-version", APIVersion, "x-api-key", "streambench")
}

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError; a
// body that is not the API's error JSON is the message as is.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	return jsonwire.ReadProviderError(resp, errorTypes, "api_error")
}

// errorTypes name an error by status when the body does not, with the API's names (api_error at
// 500 and above).
var errorTypes = map[int]string{http.StatusTooManyRequests: "rate_limit_error", 529: "overloaded_error",
	http.StatusUnauthorized: "authentication_error", http.StatusNotFound: "not_found_error"}

// NewStream decodes a Messages event stream, blocks by index (they may interleave), ToolIndex
// counting tool_use blocks in start order as on the openai wire. The turn ends with one
// ModelTurnEnd at message_stop, then io.EOF; an error event is a *protocol.ProviderError;
// ping and unknown events are skipped.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(body)}, parse: ParseEvent}
}

type block struct {
	kind    BlockKind
	started bool
	stopped bool
	tool    int // tool ordinal for tool_use blocks
}

type stream struct {
	jsonwire.Stream
	view Event
	// parse is ParseEvent, swapped for an encoding/json reference in tests.
	parse  func(*jsonwire.Scanner, []byte, *Event) error
	blocks []block
	tools  int // tool_use blocks started
	stop   protocol.StopReason
	usage  protocol.Usage
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.Queue.Next(ev, s.readEvent) }

func (s *stream) readEvent() error {
	data, err := s.Read("anthropic", "events")
	if err == io.EOF {
		return fmt.Errorf("anthropic stream: ended after %d events without message_stop: %w", s.N, io.ErrUnexpectedEOF)
	}
	if err != nil || len(data) == 0 {
		return err
	}
	if err := s.parse(&s.Scan, data, &s.view); err != nil {
		return fmt.Errorf("anthropic stream: event %d %q (%s): %w", s.N, s.Ev.Type, jsonwire.Excerpt(data), err)
	}
	return s.apply(&s.view)
}

func (s *stream) apply(e *Event) error {
	typ := s.Ev.Type // the JSON type is authoritative, the SSE event name is the fallback
	if len(e.Type) > 0 {
		typ = EventType(e.Type)
	}
	var err error
	switch typ {
	case "error":
		perr := &protocol.ProviderError{Status: http.StatusOK, Type: "api_error"}
		if e.HasError {
			perr.Message = string(e.ErrorMessage)
			if len(e.ErrorType) > 0 {
				perr.Type = string(e.ErrorType)
			}
		}
		return perr
	case "message_start":
		if e.HasMessage {
			s.applyUsage(&e.MessageUsage)
		}
	case "content_block_start":
		err = s.blockStart(e)
	case "content_block_delta":
		err = s.blockDelta(e)
	case "content_block_stop":
		var b *block
		if b, err = s.block(e, false); err == nil {
			b.stopped = true
		}
	case "message_delta":
		if e.HasDelta && len(e.Delta.StopReason) > 0 {
			s.stop = stopReason(string(e.Delta.StopReason))
		}
		s.applyUsage(&e.Usage)
	case "message_stop":
		if s.stop == "" {
			err = errors.New("message_stop before any message_delta with a stop_reason")
		} else {
			s.Queue.End(s.stop, s.usage)
		}
	default:
		// ping, and unknown events: the API may add event types at any time.
	}
	if err != nil {
		return fmt.Errorf("anthropic stream: event %d %s: %w", s.N, typ, err)
	}
	return nil
}

// blockStart opens a content block, and relays what its start carries.
func (s *stream) blockStart(e *Event) error {
	if !e.HasBlock {
		return errors.New("content_block: required")
	}
	b, err := s.block(e, true)
	if err != nil {
		return err
	}
	b.started = true
	switch string(e.Block.Type) {
	case "thinking":
		b.kind = BlockThinking
		s.Queue.PushText(protocol.ModelThinking, e.Block.Thinking)
	case "text":
		b.kind = BlockText
		s.Queue.PushText(protocol.ModelText, e.Block.Text)
	case "tool_use":
		b.kind, b.tool = BlockTool, s.tools
		s.tools++
		s.Queue.Push(protocol.ModelEvent{
			Kind: protocol.ModelToolStart, ToolIndex: b.tool, ToolID: string(e.Block.ID), ToolName: string(e.Block.Name),
		})
	default:
		b.kind = BlockOther // redacted_thinking, server tools…: not part of the turn's text
	}
	return nil
}

// blockDelta relays a content block's delta, which must be of the block's kind.
func (s *stream) blockDelta(e *Event) error {
	if !e.HasDelta {
		return errors.New("delta: required")
	}
	b, err := s.block(e, false)
	if err != nil {
		return err
	}
	want, ok := DeltaKind(e.Delta.Type)
	if !ok || string(e.Delta.Type) == "citations_delta" {
		return nil // citations and future delta types carry nothing the runtime relays
	}
	if b.kind != want {
		return fmt.Errorf("%s on block %d, which is not a %s block", e.Delta.Type, e.Index, want)
	}
	switch want {
	case BlockThinking:
		s.Queue.PushText(protocol.ModelThinking, e.Delta.Thinking)
	case BlockText:
		s.Queue.PushText(protocol.ModelText, e.Delta.Text)
	case BlockTool:
		if len(e.Delta.PartialJSON) > 0 {
			s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: b.tool, Text: string(e.Delta.PartialJSON)})
		}
	}
	return nil
}

// EventType returns the known event type b names as a constant, so switching on it does not
// allocate; anything else is "".
func EventType(b []byte) string {
	s, _ := jsonwire.Known(b, "ping", "error", "message_start", "content_block_start", "content_block_delta",
		"content_block_stop", "message_delta", "message_stop")
	return s
}

// block returns the block an event addresses. Deltas and stops need a started, unstopped
// block; a start needs a fresh index.
func (s *stream) block(e *Event, starting bool) (*block, error) {
	if !e.HasIndex {
		return nil, errors.New("index: required")
	}
	i := e.Index
	if i < 0 || i >= MaxBlocks {
		return nil, fmt.Errorf("index %d out of range [0, %d)", i, MaxBlocks)
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, block{})
	}
	b := &s.blocks[i]
	if starting && b.started {
		return nil, fmt.Errorf("block %d started twice", i)
	}
	if !starting {
		if !b.started {
			return nil, fmt.Errorf("block %d was never started", i)
		}
		if b.stopped {
			return nil, fmt.Errorf("block %d was already stopped", i)
		}
	}
	return b, nil
}

// applyUsage overwrites the usage counts an event carries: the API reports running totals.
func (s *stream) applyUsage(u *Usage) {
	if u.HasInput {
		s.usage.InputTokens = u.InputTokens
	}
	if u.HasOutput {
		s.usage.OutputTokens = u.OutputTokens
	}
}

func stopReason(reason string) protocol.StopReason {
	switch reason {
	case "tool_use":
		return protocol.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return protocol.StopMaxToken
	default: // "end_turn", "stop_sequence", "pause_turn", "refusal"
		return protocol.StopEndTurn
	}
}
