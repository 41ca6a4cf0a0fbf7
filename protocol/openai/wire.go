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
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// Wire is the runtime's side of the chat completions wire. The zero value is ready to use
// and safe for concurrent use; each stream it returns is not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

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
	MaxTokens       int           `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is OpenAI's newer name for max_tokens (protocol.MaxTokensField).
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// MinTokens and IgnoreEOS are vLLM's sampling parameters, sent only when asked.
	MinTokens int  `json:"min_tokens,omitempty"`
	IgnoreEOS bool `json:"ignore_eos,omitempty"`
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
const anyObjectSchema = `{"type":"object"}`

// NewRequest builds POST {baseURL}/v1/chat/completions streaming req with usage included.
// Assistant messages carry their tool calls, tool results are "tool" messages with their
// tool_call_id, MaxTokens is sent when set as max_tokens (which vLLM, TGI, llama.cpp, Ollama and
// OpenAI's non-reasoning models take), max_completion_tokens or both, as MaxTokensField says,
// MinTokens and IgnoreEOS as vLLM's min_tokens and ignore_eos when set, and Thinking asks for
// reasoning with reasoning_effort "medium". req.Header is
// copied onto the request last, so callers can forward X-Streambench-* headers or override
// the placeholder Authorization. req.Timeout is the caller's to apply through ctx.
func (Wire) NewRequest(ctx context.Context, baseURL string, req *protocol.ModelRequest) (*http.Request, error) {
	body := chatRequest{
		Model:         req.Model,
		Messages:      make([]chatMessage, 0, len(req.Messages)),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		MinTokens:     req.MinTokens,
		IgnoreEOS:     req.IgnoreEOS,
	}
	switch req.MaxTokensField {
	case "", protocol.MaxTokensField:
		body.MaxTokens = req.MaxTokens
	case protocol.MaxCompletionTokensField:
		body.MaxCompletionTokens = req.MaxTokens
	case protocol.BothMaxTokensFields:
		body.MaxTokens, body.MaxCompletionTokens = req.MaxTokens, req.MaxTokens
	default:
		return nil, fmt.Errorf("openai request: max tokens field %q: want %s, %s or %s", req.MaxTokensField,
			protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields)
	}
	if req.Thinking {
		body.ReasoningEffort = "medium"
	}
	for _, name := range req.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatFunction{Name: name, Parameters: json.RawMessage(anyObjectSchema)}})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		text := m.Text
		switch m.Role {
		case "system", "user":
			body.Messages = append(body.Messages, chatMessage{Role: m.Role, Content: &text})
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
	payload, err := jsonwire.MarshalNoHTML(&body)
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

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError.
// A body that is not the API's error JSON becomes the message as is, so nothing is lost.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	return jsonwire.ReadProviderError(resp, defaultErrorType(resp.StatusCode))
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
// data: [DONE] arrives (or the body ends after a finish_reason), and io.EOF after it; a body
// that ends before any finish_reason is io.ErrUnexpectedEOF. A mid-stream error frame is returned as a
// *protocol.ProviderError with Status 200.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{dec: sse.NewDecoder(body), parse: ParseChunk}
}

// MaxToolIndex bounds tool call indexes so a hostile stream cannot make a reader allocate: the
// runtime's decoder fails past it, the openai-chat checker judges it a violation.
const MaxToolIndex = 1024

// stream is the ModelStream of one response.
type stream struct {
	dec  *sse.Decoder
	ev   sse.Event
	scan jsonwire.Scanner
	view Chunk
	// parse decodes a frame; it is ParseChunk, swapped for an encoding/json reference in tests.
	parse  func(*jsonwire.Scanner, []byte, *Chunk) error
	frames int // data frames read, for error messages
	// queue holds events decoded from the current frame not yet returned.
	queue jsonwire.EventQueue
	// toolStarted marks tool indexes whose ModelToolStart was emitted.
	toolStarted []bool
	stop        protocol.StopReason
	usage       protocol.Usage
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.queue.Next(ev, s.readFrame) }

// readFrame decodes one SSE event into s.queue (possibly nothing).
func (s *stream) readFrame() error {
	if err := s.dec.Next(&s.ev); err != nil {
		if errors.Is(err, io.EOF) {
			if s.stop != "" {
				// Some compatible servers close after the finish_reason without [DONE]; the
				// turn is complete, as the official SDKs also accept.
				s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: s.stop, Usage: s.usage})
				s.queue.Finish()
				return nil
			}
			return fmt.Errorf("openai stream: ended after %d frames without a finish_reason or data: [DONE]: %w", s.frames, io.ErrUnexpectedEOF)
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
		s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: s.stop, Usage: s.usage})
		s.queue.Finish()
		return nil
	}
	if err := s.parse(&s.scan, data, &s.view); err != nil {
		return fmt.Errorf("openai stream: frame %d (%s): %w", s.frames, jsonwire.Excerpt(data), err)
	}
	return s.apply(&s.view)
}

// apply turns one decoded chunk into events.
func (s *stream) apply(v *Chunk) error {
	if v.HasError {
		return &protocol.ProviderError{Status: http.StatusOK, Type: string(v.ErrorType), Message: string(v.ErrorMessage)}
	}
	if v.HasUsage {
		s.usage = protocol.Usage{InputTokens: v.PromptTokens, OutputTokens: v.CompletionTokens}
	}
	for i := range v.Choices {
		ch := &v.Choices[i]
		if ch.Index != 0 {
			continue // streambench asks for one choice; others are not part of the turn.
		}
		if t := ch.Thinking(); len(t) > 0 {
			s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelThinking, Text: string(t)})
		}
		if len(ch.Content) > 0 {
			s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelText, Text: string(ch.Content)})
		}
		for j := range ch.ToolCalls {
			if err := s.toolDelta(&ch.ToolCalls[j]); err != nil {
				return fmt.Errorf("openai stream: frame %d: %w", s.frames, err)
			}
		}
		if len(ch.FinishReason) > 0 {
			s.stop = stopReason(string(ch.FinishReason))
		}
	}
	return nil
}

// toolDelta turns one tool_calls element into ToolStart and ToolArgs events.
func (s *stream) toolDelta(tc *ToolCall) error {
	if tc.Index < 0 || tc.Index >= MaxToolIndex {
		return fmt.Errorf("tool_calls index %d out of range [0, %d)", tc.Index, MaxToolIndex)
	}
	for len(s.toolStarted) <= tc.Index {
		s.toolStarted = append(s.toolStarted, false)
	}
	if !s.toolStarted[tc.Index] {
		if len(tc.ID) == 0 {
			return fmt.Errorf("tool_calls index %d: arguments before the call's id and name", tc.Index)
		}
		s.toolStarted[tc.Index] = true
		s.queue.Push(protocol.ModelEvent{
			Kind: protocol.ModelToolStart, ToolIndex: tc.Index, ToolID: string(tc.ID), ToolName: string(tc.Name),
		})
	}
	if len(tc.Args) > 0 {
		s.queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: tc.Index, Text: string(tc.Args)})
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
