package openai

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

// Wire is the runtime's side of the chat completions wire. The zero value is ready to use
// and safe for concurrent use; each stream it returns is not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// maxErrorBody caps how much of an error response ParseError reads.
const maxErrorBody = 64 << 10

// Name returns "openai", the wire's name in deployment files.
func (Wire) Name() string { return "openai" }

// chatRequest is the request body NewRequest sends.
type chatRequest struct {
	Model           string        `json:"model"`
	Messages        []chatMessage `json:"messages"`
	Stream          bool          `json:"stream"`
	StreamOptions   streamOptions `json:"stream_options"`
	Tools           []chatTool    `json:"tools,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role       string             `json:"role"`
	Content    *string            `json:"content"`
	ToolCalls  []responseToolCall `json:"tool_calls,omitempty"`
	ToolCallID string             `json:"tool_call_id,omitempty"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
}

// anyObjectSchema is the parameters schema of every offered tool: the simulated tools take
// whatever object the script's arguments hold.
var anyObjectSchema = json.RawMessage(`{"type":"object"}`)

// NewRequest builds POST {baseURL}/v1/chat/completions streaming req with usage included.
// Assistant messages carry their tool calls, tool results are "tool" messages with their
// tool_call_id, and Thinking asks for reasoning with reasoning_effort "medium". req.Header is
// copied onto the request last, so callers can forward X-Streambench-* headers or override
// the placeholder Authorization. req.Timeout is the caller's to apply through ctx.
func (Wire) NewRequest(ctx context.Context, baseURL string, req *protocol.ModelRequest) (*http.Request, error) {
	body := chatRequest{
		Model:         req.Model,
		Messages:      make([]chatMessage, 0, len(req.Messages)),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
	}
	if req.Thinking {
		body.ReasoningEffort = "medium"
	}
	for _, name := range req.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{Name: name, Parameters: anyObjectSchema}})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		text := m.Text
		switch m.Role {
		case "user":
			body.Messages = append(body.Messages, chatMessage{Role: "user", Content: &text})
		case "assistant":
			msg := chatMessage{Role: "assistant"}
			if text != "" || len(m.ToolCalls) == 0 {
				msg.Content = &text
			}
			for _, call := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, responseToolCall{
					ID: call.ID, Type: "function",
					Function: responseFunction{Name: call.Name, Arguments: call.Arguments},
				})
			}
			body.Messages = append(body.Messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("openai request: messages[%d]: tool result without a tool call id", i)
			}
			// The wire has no error flag for tool results; the text says what happened.
			body.Messages = append(body.Messages, chatMessage{Role: "tool", Content: &text, ToolCallID: m.ToolCallID})
		default:
			return nil, fmt.Errorf("openai request: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	payload, err := marshalNoHTML(&body)
	if err != nil {
		return nil, fmt.Errorf("openai request: %w", err)
	}
	url := strings.TrimSuffix(baseURL, "/") + "/v1/chat/completions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("openai request: %w", err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Authorization", "Bearer streambench")
	for k, vs := range req.Header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	return hr, nil
}

// marshalNoHTML encodes v as JSON without HTML escaping, as the SDKs send it.
func marshalNoHTML(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError.
// A body that is not the API's error JSON becomes the message as is, so nothing is lost.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	perr := &protocol.ProviderError{Status: resp.StatusCode, Type: defaultErrorType(resp.StatusCode)}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var parsed struct {
		Error *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
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

// defaultErrorType names an error by status when the body does not.
func defaultErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	default:
		return "invalid_request_error"
	}
}

// NewStream decodes a streamed chat completion. Events come out in wire order; the turn ends
// with one ModelTurnEnd (stop reason from finish_reason, usage from the usage chunk) when
// data: [DONE] arrives, and io.EOF after it. A mid-stream error frame is returned as a
// *protocol.ProviderError with Status 200.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{dec: sse.NewDecoder(body)}
}

// chunk is one chat.completion.chunk as the decoder reads it. It is reused across frames.
type chunk struct {
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
	Error   *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

type chunkChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content          string          `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		ToolCalls        []chunkToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type chunkToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// maxToolIndex bounds tool call indexes so a hostile stream cannot make the decoder allocate.
const maxToolIndex = 1024

// stream is the ModelStream of one response.
type stream struct {
	dec    *sse.Decoder
	ev     sse.Event
	chunk  chunk
	frames int // data frames read, for error messages
	// pending holds events decoded from the current frame not yet returned.
	pending []protocol.ModelEvent
	next    int
	// toolStarted marks tool indexes whose ModelToolStart was emitted.
	toolStarted []bool
	stop        protocol.StopReason
	usage       protocol.Usage
	done        bool
	err         error
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
		if err := s.readFrame(); err != nil {
			s.err = err
		}
	}
}

// readFrame decodes one SSE event into s.pending (possibly nothing).
func (s *stream) readFrame() error {
	if err := s.dec.Next(&s.ev); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("openai stream: ended after %d frames without data: [DONE]: %w", s.frames, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("openai stream: after %d frames: %w", s.frames, err)
	}
	s.frames++
	data := bytes.TrimSpace(s.ev.Data)
	if len(data) == 0 {
		return nil
	}
	if string(data) == "[DONE]" {
		if s.stop == "" {
			return fmt.Errorf("openai stream: frame %d: data: [DONE] before any finish_reason", s.frames)
		}
		s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: s.stop, Usage: s.usage})
		s.done = true
		return nil
	}
	c := &s.chunk
	clear(c.Choices[:cap(c.Choices)])
	c.Choices = c.Choices[:0]
	c.Usage, c.Error = nil, nil
	if err := json.Unmarshal(data, c); err != nil {
		return fmt.Errorf("openai stream: frame %d (%s): %w", s.frames, excerpt(data), err)
	}
	if c.Error != nil {
		return &protocol.ProviderError{Status: http.StatusOK, Type: c.Error.Type, Message: c.Error.Message}
	}
	if c.Usage != nil {
		s.usage = protocol.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // streambench asks for one choice; others are not part of the turn.
		}
		if ch.Delta.ReasoningContent != "" {
			s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelThinking, Text: ch.Delta.ReasoningContent})
		}
		if ch.Delta.Content != "" {
			s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelText, Text: ch.Delta.Content})
		}
		for j := range ch.Delta.ToolCalls {
			if err := s.toolDelta(&ch.Delta.ToolCalls[j]); err != nil {
				return fmt.Errorf("openai stream: frame %d: %w", s.frames, err)
			}
		}
		if ch.FinishReason != "" {
			s.stop = stopReason(ch.FinishReason)
		}
	}
	return nil
}

// toolDelta turns one tool_calls element into ToolStart and ToolArgs events.
func (s *stream) toolDelta(tc *chunkToolCall) error {
	if tc.Index < 0 || tc.Index >= maxToolIndex {
		return fmt.Errorf("tool_calls index %d out of range [0, %d)", tc.Index, maxToolIndex)
	}
	for len(s.toolStarted) <= tc.Index {
		s.toolStarted = append(s.toolStarted, false)
	}
	if !s.toolStarted[tc.Index] {
		if tc.ID == "" {
			return fmt.Errorf("tool_calls index %d: arguments before the call's id and name", tc.Index)
		}
		s.toolStarted[tc.Index] = true
		s.pending = append(s.pending, protocol.ModelEvent{
			Kind: protocol.ModelToolStart, ToolIndex: tc.Index, ToolID: tc.ID, ToolName: tc.Function.Name,
		})
	}
	if tc.Function.Arguments != "" {
		s.pending = append(s.pending, protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: tc.Index, Text: tc.Function.Arguments})
	}
	return nil
}

// stopReason normalizes a finish_reason.
func stopReason(finish string) protocol.StopReason {
	switch finish {
	case "tool_calls", "function_call":
		return protocol.StopToolUse
	case "length":
		return protocol.StopMaxToken
	default: // "stop", "content_filter"
		return protocol.StopEndTurn
	}
}

// excerpt quotes the start of a frame for an error message.
func excerpt(data []byte) string {
	const max = 80
	if len(data) > max {
		return fmt.Sprintf("%q…", data[:max])
	}
	return fmt.Sprintf("%q", data)
}
