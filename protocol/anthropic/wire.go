package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// Wire is the runtime's side of the Messages wire. The zero value is ready to use and safe
// for concurrent use; each stream it returns is not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// maxErrorBody caps how much of an error response ParseError reads.
const maxErrorBody = 64 << 10

// Request defaults NewRequest sends.
const (
	defaultMaxTokens      = 4096
	thinkingBudgetTokens  = 1024
	placeholderAPIKeyName = "streambench"
)

// Name returns "anthropic", the wire's name in deployment files.
func (Wire) Name() string { return "anthropic" }

// messagesRequest is the request body NewRequest sends.
type messagesRequest struct {
	Model     string         `json:"model"`
	MaxTokens int            `json:"max_tokens"`
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

// anyObjectSchema is the input schema of every offered tool: the simulated tools take
// whatever object the script's arguments hold.
var anyObjectSchema = json.RawMessage(`{"type":"object"}`)

// NewRequest builds POST {baseURL}/v1/messages streaming req. Assistant messages become text
// and tool_use blocks; consecutive tool results become one user message of tool_result blocks
// (a user text right after them joins that message, as the API wants alternating roles).
// Thinking enables extended thinking with a 1024-token budget. The anthropic-version and a
// placeholder x-api-key header are set; req.Header is copied last, so callers can forward
// X-Streambench-* headers or override the key. req.Timeout is the caller's to apply via ctx.
func (Wire) NewRequest(ctx context.Context, baseURL string, req *protocol.ModelRequest) (*http.Request, error) {
	body := messagesRequest{
		Model:     req.Model,
		MaxTokens: defaultMaxTokens,
		Messages:  make([]message, 0, len(req.Messages)),
		Stream:    true,
	}
	if req.Thinking {
		body.Thinking = &thinkingParam{Type: "enabled", BudgetTokens: thinkingBudgetTokens}
	}
	for _, name := range req.Tools {
		body.Tools = append(body.Tools, tool{Name: name, InputSchema: anyObjectSchema})
	}
	// lastIsToolResults is set while the last message is a user message of tool results.
	lastIsToolResults := false
	for i := range req.Messages {
		m := &req.Messages[i]
		text := m.Text
		switch m.Role {
		case "user":
			block := contentBlock{Type: "text", Text: &text}
			if lastIsToolResults {
				last := &body.Messages[len(body.Messages)-1]
				last.Content = append(last.Content, block)
			} else {
				body.Messages = append(body.Messages, message{Role: "user", Content: []contentBlock{block}})
			}
			lastIsToolResults = false
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
			block := contentBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &text, IsError: m.IsError}
			if lastIsToolResults {
				last := &body.Messages[len(body.Messages)-1]
				last.Content = append(last.Content, block)
			} else {
				body.Messages = append(body.Messages, message{Role: "user", Content: []contentBlock{block}})
			}
			lastIsToolResults = true
		default:
			return nil, fmt.Errorf("anthropic request: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	var payload bytes.Buffer
	enc := json.NewEncoder(&payload)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&body); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	url := strings.TrimSuffix(baseURL, "/") + "/v1/messages"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(bytes.TrimSuffix(payload.Bytes(), []byte("\n"))))
	if err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("anthropic-version", APIVersion)
	hr.Header.Set("x-api-key", placeholderAPIKeyName)
	for k, vs := range req.Header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	return hr, nil
}

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError.
// A body that is not the API's error JSON becomes the message as is, so nothing is lost.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	perr := &protocol.ProviderError{Status: resp.StatusCode, Type: defaultErrorType(resp.StatusCode)}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var parsed struct {
		Error *errorDetail `json:"error"`
	}
	switch {
	case json.Unmarshal(body, &parsed) == nil && parsed.Error != nil:
		perr.Message = parsed.Error.Message
		if parsed.Error.Type != "" {
			perr.Type = parsed.Error.Type
		}
	case len(bytes.TrimSpace(body)) > 0:
		perr.Message = string(bytes.TrimSpace(body))
	case err != nil:
		perr.Message = fmt.Sprintf("%s (reading body: %v)", http.StatusText(resp.StatusCode), err)
	default:
		perr.Message = http.StatusText(resp.StatusCode)
	}
	return perr
}

// defaultErrorType names an error by status when the body does not, with the API's names.
func defaultErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	default:
		return "invalid_request_error"
	}
}

// NewStream decodes a Messages event stream. Blocks are tracked by index, so interleaved
// blocks decode correctly; ToolIndex counts tool_use blocks in start order (0, 1, …), the same
// numbering as the openai wire. The turn ends with one ModelTurnEnd at message_stop, and io.EOF
// after it. An error event is returned as a *protocol.ProviderError with Status 200. ping and
// unknown events are skipped.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{dec: sse.NewDecoder(body)}
}

// streamEvent is one event's JSON as the decoder reads it; it is reused across events.
type streamEvent struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		Usage *eventUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
		// Thinking is the initial thinking text (empty on the real API).
		Thinking string `json:"thinking"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *eventUsage  `json:"usage"`
	Error *errorDetail `json:"error"`
}

type eventUsage struct {
	InputTokens  *int `json:"input_tokens"`
	OutputTokens *int `json:"output_tokens"`
}

// block is what the decoder knows about one content block.
type block struct {
	kind    blockKind
	started bool
	stopped bool
	tool    int // tool ordinal for tool_use blocks
}

// maxBlocks bounds block indexes so a hostile stream cannot make the decoder allocate.
const maxBlocks = 4096

// stream is the ModelStream of one response.
type stream struct {
	dec    *sse.Decoder
	ev     sse.Event
	event  streamEvent
	events int // SSE events read, for error messages
	// pending holds events decoded from the current SSE event not yet returned.
	pending []protocol.ModelEvent
	next    int
	blocks  []block
	tools   int // tool_use blocks started
	stop    protocol.StopReason
	usage   protocol.Usage
	done    bool
	err     error
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error {
	for {
		if s.next < len(s.pending) {
			*ev = s.pending[s.next]
			s.next++
			return nil
		}
		if s.err != nil {
			return s.err
		}
		if s.done {
			s.err = io.EOF
			return s.err
		}
		s.pending, s.next = s.pending[:0], 0
		if err := s.readEvent(); err != nil {
			s.err = err
		}
	}
}

// readEvent decodes one SSE event into s.pending (possibly nothing).
func (s *stream) readEvent() error {
	if err := s.dec.Next(&s.ev); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("anthropic stream: ended after %d events without message_stop: %w", s.events, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("anthropic stream: after %d events: %w", s.events, err)
	}
	s.events++
	data := bytes.TrimSpace(s.ev.Data)
	if len(data) == 0 {
		return nil
	}
	e := &s.event
	*e = streamEvent{}
	if err := json.Unmarshal(data, e); err != nil {
		return fmt.Errorf("anthropic stream: event %d %q (%s): %w", s.events, s.ev.Type, excerpt(data), err)
	}
	typ := e.Type
	if typ == "" {
		typ = s.ev.Type // the JSON type is authoritative, the SSE event name is the fallback
	}
	where := func() string { return fmt.Sprintf("anthropic stream: event %d %s", s.events, typ) }
	switch typ {
	case "ping":
	case "error":
		perr := &protocol.ProviderError{Status: http.StatusOK, Type: "api_error"}
		if e.Error != nil {
			perr.Message = e.Error.Message
			if e.Error.Type != "" {
				perr.Type = e.Error.Type
			}
		}
		return perr
	case "message_start":
		if e.Message != nil && e.Message.Usage != nil {
			s.applyUsage(e.Message.Usage)
		}
	case "content_block_start":
		if e.ContentBlock == nil {
			return fmt.Errorf("%s: content_block: required", where())
		}
		b, err := s.block(e.Index, true)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		if b.started {
			return fmt.Errorf("%s: block %d started twice", where(), *e.Index)
		}
		b.started = true
		switch e.ContentBlock.Type {
		case "thinking":
			b.kind = blockThinking
			s.emitText(protocol.ModelThinking, e.ContentBlock.Thinking)
		case "text":
			b.kind = blockText
			s.emitText(protocol.ModelText, e.ContentBlock.Text)
		case "tool_use":
			b.kind, b.tool = blockTool, s.tools
			s.tools++
			s.pending = append(s.pending, protocol.ModelEvent{
				Kind: protocol.ModelToolStart, ToolIndex: b.tool, ToolID: e.ContentBlock.ID, ToolName: e.ContentBlock.Name,
			})
		default:
			b.kind = blockNone // redacted_thinking, server tools…: not part of the turn's text
		}
	case "content_block_delta":
		if e.Delta == nil {
			return fmt.Errorf("%s: delta: required", where())
		}
		b, err := s.block(e.Index, false)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		want := blockNone
		switch e.Delta.Type {
		case "thinking_delta":
			want = blockThinking
			s.emitText(protocol.ModelThinking, e.Delta.Thinking)
		case "signature_delta":
			want = blockThinking
		case "text_delta":
			want = blockText
			s.emitText(protocol.ModelText, e.Delta.Text)
		case "input_json_delta":
			want = blockTool
			if e.Delta.PartialJSON != "" {
				s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: b.tool, Text: e.Delta.PartialJSON})
			}
		default:
			return nil // citations and future delta types carry nothing the runtime relays
		}
		if b.kind != want {
			s.pending = s.pending[:0]
			return fmt.Errorf("%s: %s on block %d, which is not a %s block", where(), e.Delta.Type, *e.Index, kindName(want))
		}
	case "content_block_stop":
		b, err := s.block(e.Index, false)
		if err != nil {
			return fmt.Errorf("%s: %w", where(), err)
		}
		b.stopped = true
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = stopReason(e.Delta.StopReason)
		}
		if e.Usage != nil {
			s.applyUsage(e.Usage)
		}
	case "message_stop":
		if s.stop == "" {
			return fmt.Errorf("%s: message_stop before any message_delta with a stop_reason", where())
		}
		s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: s.stop, Usage: s.usage})
		s.done = true
	default:
		// Unknown events are skipped: the API may add event types at any time.
	}
	return nil
}

// block returns the block an event addresses. Deltas and stops need a started, unstopped
// block; a start needs a fresh index.
func (s *stream) block(index *int, starting bool) (*block, error) {
	if index == nil {
		return nil, errors.New("index: required")
	}
	i := *index
	if i < 0 || i >= maxBlocks {
		return nil, fmt.Errorf("index %d out of range [0, %d)", i, maxBlocks)
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, block{})
	}
	b := &s.blocks[i]
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

// emitText queues a text or thinking event unless the piece is empty.
func (s *stream) emitText(kind protocol.ModelEventKind, text string) {
	if text != "" {
		s.pending = append(s.pending, protocol.ModelEvent{Kind: kind, Text: text})
	}
}

// applyUsage overwrites the usage counts an event carries: the API reports running totals.
func (s *stream) applyUsage(u *eventUsage) {
	if u.InputTokens != nil {
		s.usage.InputTokens = *u.InputTokens
	}
	if u.OutputTokens != nil {
		s.usage.OutputTokens = *u.OutputTokens
	}
}

// stopReason normalizes a stop_reason.
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

func kindName(k blockKind) string {
	switch k {
	case blockThinking:
		return "thinking"
	case blockText:
		return "text"
	case blockTool:
		return "tool_use"
	}
	return "known"
}

// excerpt quotes the start of an event's data for an error message.
func excerpt(data []byte) string {
	const max = 80
	if len(data) > max {
		return fmt.Sprintf("%q…", data[:max])
	}
	return fmt.Sprintf("%q", data)
}
