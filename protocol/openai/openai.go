// Package openai is the OpenAI chat completions wire (POST /v1/chat/completions): the mock
// provider's side (ParseRequest, StreamWriter, WriteResponse, WriteError) and the runtime's side
// (Wire, a protocol.ProviderWire). Both sides live together so the frames one writes are the
// frames the other reads; see docs/PROTOCOLS.md, "Provider-facing wires".
package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Request is the subset of a chat completions request the mock provider needs to pick and
// play a scripted turn.
type Request struct {
	Model string
	// Stream is the request's "stream" flag.
	Stream bool
	// IncludeUsage is stream_options.include_usage: the stream then ends with a usage chunk.
	IncludeUsage bool
	// LastUserText is the text of the last "user" message (string content or its text parts
	// joined), where the scenario directive is looked for.
	LastUserText string
	// AssistantTurns is the number of assistant messages already present, which is the index
	// of the turn to play: the provider is stateless across a tool loop.
	AssistantTurns int
	// Thinking is set when reasoning was requested: a reasoning_effort, or a reasoning object,
	// whose effort is not "none".
	Thinking bool
	// MaxTokens is max_completion_tokens, else max_tokens; 0 when neither was sent.
	MaxTokens int
}

// rawRequest is the JSON shape ParseRequest reads; everything else in the body is ignored.
type rawRequest struct {
	Model         *string           `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ReasoningEffort     string `json:"reasoning_effort"`
	MaxTokens           *int   `json:"max_tokens"`
	MaxCompletionTokens *int   `json:"max_completion_tokens"`
	// Reasoning is the object form OpenAI-compatible gateways accept ({"effort": "high"}).
	Reasoning *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
}

// rawMessage is one entry of "messages" as ParseRequest reads it.
type rawMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

// rawPart is one element of an array "content".
type rawPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ParseRequest reads a chat completions request body. Errors name the offending field, as
// the real API does ("messages: required", "messages[2].content: expected string or array of
// parts"), so a misbehaving runtime under test learns what it sent wrong.
func ParseRequest(body []byte) (*Request, error) {
	var raw rawRequest
	if err := jsonwire.DecodeRequest(body, &raw); err != nil {
		return nil, err
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, errors.New("model: required")
	}
	if len(raw.Messages) == 0 {
		return nil, errors.New("messages: required (a non-empty array)")
	}
	req := &Request{
		Model:  *raw.Model,
		Stream: raw.Stream,
	}
	switch {
	case raw.ReasoningEffort != "":
		req.Thinking = raw.ReasoningEffort != "none"
	case raw.Reasoning != nil:
		req.Thinking = raw.Reasoning.Effort != "none"
	}
	if raw.StreamOptions != nil {
		req.IncludeUsage = raw.StreamOptions.IncludeUsage
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_completion_tokens", raw.MaxCompletionTokens}, {"max_tokens", raw.MaxTokens}} {
		if f.v == nil || req.MaxTokens > 0 {
			continue
		}
		if *f.v < 1 {
			return nil, fmt.Errorf("%s: must be at least 1, got %d", f.name, *f.v)
		}
		req.MaxTokens = *f.v
	}
	for i, m := range raw.Messages {
		var msg rawMessage
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, jsonwire.DescribeError(fmt.Sprintf("messages[%d]", i), err)
		}
		if msg.Role == nil {
			return nil, fmt.Errorf("messages[%d].role: required", i)
		}
		switch *msg.Role {
		case "assistant":
			req.AssistantTurns++
		case "user":
			text, err := contentText(msg.Content)
			if err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
			req.LastUserText = text
		case "system", "developer", "tool", "function":
		default:
			return nil, fmt.Errorf("messages[%d].role: unknown role %q (want system, developer, user, assistant or tool)", i, *msg.Role)
		}
		if *msg.Role != "user" {
			// Content of other roles is not needed, but it must still have a valid shape.
			if _, err := contentText(msg.Content); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
		}
	}
	return req, nil
}

// contentText returns the text of a message content: a string, null, or an array of parts
// whose "text" parts are joined.
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
		var parts []rawPart
		if err := json.Unmarshal(content, &parts); err != nil {
			return "", fmt.Errorf("expected string or array of parts: %w", err)
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String(), nil
	}
	return "", errors.New("expected string or array of parts")
}

// errorBody is the API's error envelope.
type errorBody struct {
	Error errorDetail `json:"error"`
}

// errorDetail is the inside of the error envelope.
type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// WriteError answers with the API's error JSON ({"error":{"message","type","param","code"}})
// and status. errType is e.g. "invalid_request_error", "rate_limit_error", "server_error".
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	body, _ := json.Marshal(errorBody{Error: errorDetail{Message: message, Type: errType}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
