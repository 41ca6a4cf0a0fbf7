// Package openai is the OpenAI chat completions wire (POST /v1/chat/completions): the mock's
// side and the runtime's (Wire), together so the frames one writes are the ones the other reads.
package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Request is what the mock provider reads of a chat completions request: IncludeUsage is
// stream_options.include_usage, Thinking a reasoning_effort (or reasoning object's effort)
// other than "none", MaxTokens max_completion_tokens, else max_tokens.
type Request = jsonwire.ChatRequest

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

type rawMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

// ParseRequest reads a chat completions body; errors name the offending field, as the API's do.
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
			text, err := jsonwire.ContentText(msg.Content, "text")
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
			if _, err := jsonwire.ContentText(msg.Content); err != nil {
				return nil, fmt.Errorf("messages[%d].content: %w", i, err)
			}
		}
	}
	return req, nil
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// WriteError answers with status and the API's error JSON
// ({"error":{"message","type","param","code"}}); errType is e.g. "rate_limit_error".
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	var body errorBody
	body.Error.Message, body.Error.Type = message, errType
	jsonwire.WriteError(w, status, &body)
}
