package openairesponses

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
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/sse"
)

// Path is the wire's route.
const Path = "/v1/responses"

// Request is what the mock provider reads of a create-response request.
type Request struct {
	Model  string
	Stream bool
	// LastUserText is input's last user message text (a string input is one): the directive's.
	LastUserText string
	// ModelTurns counts the runs of model output items (assistant messages, function_call and
	// reasoning items) in input; turns before PreviousResponseID are not counted.
	ModelTurns int
	// PreviousResponseID is previous_response_id, "" when not sent.
	PreviousResponseID string
	// Thinking: a reasoning object whose effort is not "none" was sent.
	Thinking bool
	// MaxTokens is max_output_tokens; 0 when not sent.
	MaxTokens int
}

type rawRequest struct {
	Model              *string         `json:"model"`
	Input              json.RawMessage `json:"input"`
	Stream             bool            `json:"stream"`
	PreviousResponseID *string         `json:"previous_response_id"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Reasoning          *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
}

type rawItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ParseRequest reads a create-response body; errors name the offending field, as the API's do.
func ParseRequest(body []byte) (*Request, error) {
	var raw rawRequest
	if err := jsonwire.DecodeRequest(body, &raw); err != nil {
		return nil, err
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, errors.New("model: required")
	}
	req := &Request{Model: *raw.Model, Stream: raw.Stream, PreviousResponseID: jsonwire.Deref(raw.PreviousResponseID)}
	if raw.Reasoning != nil {
		req.Thinking = raw.Reasoning.Effort != "none"
	}
	if raw.MaxOutputTokens != nil {
		if *raw.MaxOutputTokens < 1 {
			return nil, fmt.Errorf("max_output_tokens: must be at least 1, got %d", *raw.MaxOutputTokens)
		}
		req.MaxTokens = *raw.MaxOutputTokens
	}
	input := bytes.TrimSpace(raw.Input)
	switch {
	case len(input) == 0 || string(input) == "null":
		if req.PreviousResponseID == "" {
			return nil, errors.New("input: required (a string or an array of items) without previous_response_id")
		}
	case input[0] == '"':
		if err := json.Unmarshal(input, &req.LastUserText); err != nil {
			return nil, fmt.Errorf("input: invalid string: %w", err)
		}
	case input[0] == '[':
		if err := req.readItems(input); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("input: expected a string or an array of items")
	}
	return req, nil
}

// readItems reads an array input: the last user text and the model turns it holds.
func (req *Request) readItems(input []byte) error {
	var items []json.RawMessage
	if err := json.Unmarshal(input, &items); err != nil {
		return jsonwire.DescribeError("input", err)
	}
	inModelRun := false
	for i, raw := range items {
		var it rawItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return jsonwire.DescribeError(fmt.Sprintf("input[%d]", i), err)
		}
		model := false
		switch it.Type {
		case "", "message":
			switch it.Role {
			case "user":
				text, err := jsonwire.ContentText(it.Content, textParts...)
				if err != nil {
					return fmt.Errorf("input[%d].content: %w", i, err)
				}
				req.LastUserText = text
			case "assistant":
				model = true
			case "system", "developer":
			default:
				return fmt.Errorf("input[%d].role: unknown role %q (want user, assistant, system or developer)", i, it.Role)
			}
			if it.Role != "user" {
				if _, err := jsonwire.ContentText(it.Content); err != nil {
					return fmt.Errorf("input[%d].content: %w", i, err)
				}
			}
		case "function_call", "reasoning":
			model = true
		}
		if model && !inModelRun {
			req.ModelTurns++
		}
		inModelRun = model
	}
	return nil
}

// textParts are the content parts whose text a message's text joins.
var textParts = []string{"input_text", "output_text", "text"}

// WriteError answers with the API's error JSON, the same envelope as chat completions.
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	openai.WriteError(w, status, errType, message)
}

// Wire is the Responses wire's runtime side, its requests the whole conversation as input items
// (no stored response). Safe for concurrent use; its streams are not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// Name returns "openai-responses", the wire's name.
func (Wire) Name() string { return Name }

type createRequest struct {
	Model           string          `json:"model"`
	Input           []inputItem     `json:"input"`
	Stream          bool            `json:"stream"`
	Store           bool            `json:"store"`
	Tools           []functionTool  `json:"tools,omitempty"`
	Reasoning       *reasoningParam `json:"reasoning,omitempty"`
	MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
}

type reasoningParam struct {
	Effort string `json:"effort"`
}

type functionTool struct {
	Type       string          `json:"type"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
}

// inputItem is one input item: a message, a function_call or a function_call_output.
type inputItem struct {
	Type      string        `json:"type"`
	Role      string        `json:"role,omitempty"`
	Content   []contentPart `json:"content,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments *string       `json:"arguments,omitempty"`
	Output    *string       `json:"output,omitempty"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// NewRequest builds POST {baseURL}/v1/responses streaming req, store false: an assistant turn
// as a message (when it has text or no calls) and a function_call item per call, a tool result
// as a function_call_output, Thinking as reasoning effort "medium"; req.Header is copied last.
func (Wire) NewRequest(ctx context.Context, baseURL string, req *protocol.ModelRequest) (*http.Request, error) {
	body := createRequest{Model: req.Model, Input: make([]inputItem, 0, len(req.Messages)), Stream: true, MaxOutputTokens: req.MaxTokens}
	if req.Thinking {
		body.Reasoning = &reasoningParam{Effort: "medium"}
	}
	for _, name := range req.Tools {
		body.Tools = append(body.Tools, functionTool{Type: "function", Name: name, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case "system", "user":
			body.Input = append(body.Input, inputItem{Type: "message", Role: m.Role, Content: []contentPart{{Type: "input_text", Text: m.Text}}})
		case "assistant":
			if m.Text != "" || len(m.ToolCalls) == 0 {
				body.Input = append(body.Input, inputItem{Type: "message", Role: "assistant", Content: []contentPart{{Type: "output_text", Text: m.Text}}})
			}
			for _, call := range m.ToolCalls {
				args := call.Arguments
				body.Input = append(body.Input, inputItem{Type: "function_call", CallID: call.ID, Name: call.Name, Arguments: &args})
			}
		case "tool":
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("openai-responses request: messages[%d]: tool result without a tool call id", i)
			}
			text := m.Text
			body.Input = append(body.Input, inputItem{Type: "function_call_output", CallID: m.ToolCallID, Output: &text})
		default:
			return nil, fmt.Errorf("openai-responses request: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	return jsonwire.NewRequest(ctx, Name, baseURL, Path, &body, req.Header, "Authorization", "Bearer streambench")
}

// ParseError reads a non-200 response (at most 64 KiB of its body) into a ProviderError.
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	return openai.Wire{}.ParseError(resp)
}

// NewStream decodes a streamed response with the checker's parser: reasoning and summary text
// as thinking, each function_call item a tool call, one ModelTurnEnd at response.completed or
// .incomplete (tool_use when the turn called a function, max_tokens when incomplete), then
// io.EOF. An error event or response.failed is a *protocol.ProviderError, a body ending before
// a terminal io.ErrUnexpectedEOF. It decodes, it does not judge.
func (Wire) NewStream(body io.Reader) protocol.ModelStream {
	return &stream{Stream: jsonwire.Stream{Dec: sse.NewDecoder(body)}}
}

type stream struct {
	jsonwire.Stream
	view eventView
	// calls maps an output_index to its tool index (-1: not a function_call).
	calls  []int
	ncalls int
}

// Next implements protocol.ModelStream.
func (s *stream) Next(ev *protocol.ModelEvent) error { return s.Queue.Next(ev, s.readFrame) }

func (s *stream) readFrame() error {
	data, err := s.Read(Name, "events")
	if err == io.EOF {
		return fmt.Errorf("openai-responses stream: ended after %d events without response.completed: %w", s.N, io.ErrUnexpectedEOF)
	}
	if err != nil || len(data) == 0 || string(data) == "[DONE]" {
		return err
	}
	if err := parseEvent(&s.Scan, data, &s.view); err != nil {
		return fmt.Errorf("openai-responses stream: event %d (%s): %w", s.N, jsonwire.Excerpt(data), err)
	}
	v := &s.view
	switch string(v.typ) {
	case "response.output_item.added":
		if !v.hasItem || string(v.item.typ) != "function_call" {
			return nil
		}
		if v.outputIndex < 0 || v.outputIndex >= maxItems {
			return fmt.Errorf("openai-responses stream: event %d: output_index %d out of range [0, %d)", s.N, v.outputIndex, maxItems)
		}
		for len(s.calls) <= v.outputIndex {
			s.calls = append(s.calls, -1)
		}
		s.calls[v.outputIndex] = s.ncalls
		s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolStart, ToolIndex: s.ncalls, ToolID: string(v.item.callID), ToolName: string(v.item.name)})
		s.ncalls++
	case "response.output_text.delta":
		s.Queue.PushText(protocol.ModelText, v.delta)
	case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
		s.Queue.PushText(protocol.ModelThinking, v.delta)
	case "response.function_call_arguments.delta":
		if v.outputIndex < 0 || v.outputIndex >= len(s.calls) || s.calls[v.outputIndex] < 0 {
			return fmt.Errorf("openai-responses stream: event %d: arguments for output_index %d, which is no function_call", s.N, v.outputIndex)
		}
		if len(v.delta) > 0 {
			s.Queue.Push(protocol.ModelEvent{Kind: protocol.ModelToolArgs, ToolIndex: s.calls[v.outputIndex], Text: string(v.delta)})
		}
	case "response.completed", "response.incomplete":
		stop := protocol.StopEndTurn
		switch {
		case string(v.typ) == "response.incomplete":
			stop = protocol.StopMaxToken
		case s.ncalls > 0:
			stop = protocol.StopToolUse
		}
		s.Queue.End(stop, protocol.Usage{OutputTokens: v.response.outputTokens})
	case "response.failed":
		return &protocol.ProviderError{Status: http.StatusOK, Type: "server_error", Message: string(v.response.errMessage)}
	case "error":
		msg := v.message
		if msg == nil {
			msg = v.errMessage
		}
		return &protocol.ProviderError{Status: http.StatusOK, Type: "server_error", Message: string(msg)}
	}
	return nil
}
