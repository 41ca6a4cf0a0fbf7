package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// Wire is the chat completions wire's runtime side, safe for concurrent use; its streams are not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// Name returns "openai", the wire's name in deployment files.
func (Wire) Name() string { return "openai" }

type chatRequest struct {
	Model           string        `json:"model"`
	Messages        []chatMessage `json:"messages"`
	Stream          bool          `json:"stream"`
	StreamOptions   streamOptions `json:"stream_options"`
	Tools           []chatTool    `json:"tools,omitempty"`
	ReasoningEffort string        `json:"reasoning_effort,omitempty"`
	MaxTokens       int           `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is OpenAI's newer name for max_tokens (protocol.MaxTokensField).
	MaxCompletionTokens int  `json:"max_completion_tokens,omitempty"`
	MinTokens           int  `json:"min_tokens,omitempty"` // vLLM's, sent only when asked
	IgnoreEOS           bool `json:"ignore_eos,omitempty"` // vLLM's, sent only when asked
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

// anyObjectSchema is the schema of every offered tool: the simulated tools take any object.
const anyObjectSchema = `{"type":"object"}`

// NewRequest builds POST {baseURL}/v1/chat/completions streaming req with usage included:
// tool results as "tool" messages, MaxTokens in the field MaxTokensField names, Thinking as
// reasoning_effort "medium", a placeholder Authorization that req.Header may replace.
// req.Timeout is the caller's to apply through ctx.
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
	return jsonwire.NewRequest(ctx, "openai", baseURL, "/v1/chat/completions", &body, req.Header, "Authorization", "Bearer streambench")
}

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError; a
// body that is not the API's error JSON is the message as is.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	return jsonwire.ReadProviderError(resp, errorTypes, "server_error")
}

// errorTypes name an error by status when the body does not (server_error at 500 and above).
var errorTypes = map[int]string{
	http.StatusTooManyRequests: "rate_limit_error", http.StatusUnauthorized: "authentication_error",
}

// NewStream decodes a streamed chat completion. The turn ends with one ModelTurnEnd at
// data: [DONE] (or at the end of a body after a finish_reason), then io.EOF; a body ending
// before any finish_reason is io.ErrUnexpectedEOF, an error frame a *protocol.ProviderError.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(body)}, parse: ParseChunk}
}

// MaxToolIndex bounds tool call indexes so a hostile stream cannot make a reader allocate.
const MaxToolIndex = 1024

type stream struct {
	jsonwire.Stream
	view Chunk
	// parse is ParseChunk, swapped for an encoding/json reference in tests.
	parse       func(*jsonwire.Scanner, []byte, *Chunk) error
	toolStarted []bool // tool indexes whose ModelToolStart was emitted
	stop        protocol.StopReason
	usage       protocol.Usage
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.Queue.Next(ev, s.readFrame) }

func (s *stream) readFrame() error {
	data, err := s.Read("openai", "frames")
	if err == io.EOF {
		if s.stop != "" { // some servers close after the finish_reason without [DONE], as the SDKs accept
			s.Queue.End(s.stop, s.usage)
			return nil
		}
		return fmt.Errorf("openai stream: ended after %d frames without a finish_reason or data: [DONE]: %w", s.N, io.ErrUnexpectedEOF)
	}
	if err != nil || len(data) == 0 {
		return err
	}
	if string(data) == "[DONE]" {
		if s.stop == "" {
			return fmt.Errorf("openai stream: frame %d: data: [DONE] before any finish_reason", s.N)
		}
		s.Queue.End(s.stop, s.usage)
		return nil
	}
	if err := s.parse(&s.Scan, data, &s.view); err != nil {
		return fmt.Errorf("openai stream: frame %d (%s): %w", s.N, jsonwire.Excerpt(data), err)
	}
	return s.apply(&s.view)
}

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
		s.Queue.PushText(protocol.ModelThinking, ch.Thinking())
		s.Queue.PushText(protocol.ModelText, ch.Content)
		for j := range ch.ToolCalls {
			if err := s.toolDelta(&ch.ToolCalls[j]); err != nil {
				return fmt.Errorf("openai stream: frame %d: %w", s.N, err)
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
		s.Queue.Push(protocol.ModelEvent{
			Kind: protocol.ModelToolStart, ToolIndex: tc.Index, ToolID: string(tc.ID), ToolName: string(tc.Name),
		})
	}
	if len(tc.Args) > 0 {
		s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: tc.Index, Text: string(tc.Args)})
	}
	return nil
}

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
