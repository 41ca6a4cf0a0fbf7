package openairesponses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/openai"
)

// Path is the wire's route.
const Path = "/v1/responses"

// Request is the subset of a create-response request the mock provider needs to pick and play
// a scripted turn.
type Request struct {
	Model string
	// Stream is the request's "stream" flag.
	Stream bool
	// LastUserText is the text of the last user message of input (a string input is one), where
	// the scenario directive is looked for.
	LastUserText string
	// ModelTurns is how many model turns input already holds: runs of model output items
	// (assistant messages, function_call and reasoning items) between the client's items. With
	// PreviousResponseID the turns before it are not counted here.
	ModelTurns int
	// PreviousResponseID is previous_response_id, "" when not sent.
	PreviousResponseID string
	// Thinking is set when reasoning was asked for: a reasoning object whose effort is not "none".
	Thinking bool
	// MaxTokens is max_output_tokens; 0 when not sent.
	MaxTokens int
}

// rawRequest is the JSON shape ParseRequest reads; everything else in the body is ignored.
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

// rawItem is one element of an array input, as ParseRequest reads it.
type rawItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ParseRequest reads a create-response request body. Errors name the offending field, as the
// real API does ("input: required", "input[2].content: expected string or array of parts").
func ParseRequest(body []byte) (*Request, error) {
	var raw rawRequest
	if err := jsonwire.DecodeRequest(body, &raw); err != nil {
		return nil, err
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, errors.New("model: required")
	}
	req := &Request{Model: *raw.Model, Stream: raw.Stream}
	if raw.PreviousResponseID != nil {
		req.PreviousResponseID = *raw.PreviousResponseID
	}
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
				text, err := contentText(it.Content)
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
				if _, err := contentText(it.Content); err != nil {
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

// contentText returns the text of a message content: a string, null, or an array of parts
// whose text parts (input_text, output_text, text) are joined.
func contentText(content json.RawMessage) (string, error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 || string(content) == "null" {
		return "", nil
	}
	switch content[0] {
	case '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return "", fmt.Errorf("invalid string: %w", err)
		}
		return s, nil
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(content, &parts); err != nil {
			return "", fmt.Errorf("expected string or array of parts: %w", err)
		}
		var b strings.Builder
		for _, p := range parts {
			switch p.Type {
			case "input_text", "output_text", "text":
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("expected string or array of parts")
}

// WriteError answers with the API's error JSON ({"error":{"message","type","param","code"}}),
// the same envelope as chat completions.
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	openai.WriteError(w, status, errType, message)
}

// Wire is the runtime's side of the Responses wire (a protocol.ProviderWire): it builds
// requests that carry the whole conversation as input items (stateless: no stored response
// is needed) and decodes the stream into normalized events. The zero value is ready to use and
// safe for concurrent use; each stream it returns is not.
type Wire struct{}

var _ protocol.ProviderWire = Wire{}

// Name returns "openai-responses", the wire's name.
func (Wire) Name() string { return Name }

// createRequest is the request body NewRequest sends.
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

// NewRequest builds POST {baseURL}/v1/responses streaming req: the conversation as input items
// (user and system messages with input_text parts, each assistant turn as a message with an
// output_text part, when it has text or no calls, and a function_call item per call, each tool
// result as a function_call_output), every tool as a function tool taking any object,
// reasoning effort "medium" for Thinking, MaxTokens as max_output_tokens, and store false.
// req.Header is copied onto the request last.
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
	payload, err := jsonwire.MarshalNoHTML(&body)
	if err != nil {
		return nil, fmt.Errorf("openai-responses request: %w", err)
	}
	url := strings.TrimSuffix(baseURL, "/") + Path
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("openai-responses request: %w", err)
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
func (Wire) ParseError(resp *http.Response) *protocol.ProviderError {
	return openai.Wire{}.ParseError(resp)
}
