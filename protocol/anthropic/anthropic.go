// Package anthropic is the Anthropic Messages wire (POST /v1/messages): the mock provider's
// side (ParseRequest, StreamWriter, WriteResponse, WriteError) and the runtime's side (Wire, a
// protocol.ProviderWire). Both sides live together so the events one writes are the events
// the other reads; see docs/PROTOCOLS.md, "Provider-facing wires".
package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// APIVersion is the anthropic-version header the runtime sends.
const APIVersion = "2023-06-01"

// Request is the subset of a Messages request the mock provider needs to pick and play a
// scripted turn.
type Request struct {
	Model string
	// Stream is the request's "stream" flag.
	Stream bool
	// IncludeUsage is always true: the Messages stream always reports usage.
	IncludeUsage bool
	// LastUserText is the text of the last user message that has text (string content or text
	// blocks joined), where the scenario directive is looked for. User messages that only carry
	// tool_result blocks are skipped: in a tool loop they come after the user's own message.
	LastUserText string
	// AssistantTurns is the number of assistant messages already present, which is the index
	// of the turn to play: the provider is stateless across a tool loop.
	AssistantTurns int
	// Thinking is set when extended thinking is enabled ("thinking":{"type":"enabled",…}).
	Thinking bool
	// MaxTokens is max_tokens (required, at least 1).
	MaxTokens int
}

// rawRequest is the JSON shape ParseRequest reads; everything else in the body is ignored.
type rawRequest struct {
	Model     *string           `json:"model"`
	MaxTokens *int              `json:"max_tokens"`
	Messages  []json.RawMessage `json:"messages"`
	Stream    bool              `json:"stream"`
	Thinking  *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

// rawMessage is one entry of "messages" as ParseRequest reads it.
type rawMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

// rawBlock is one element of an array "content".
type rawBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ParseRequest reads a Messages request body. Errors name the offending field, as the real
// API does ("messages: required", "messages[2].content: expected string or array of content
// blocks"), so a misbehaving runtime under test learns what it sent wrong.
func ParseRequest(body []byte) (*Request, error) {
	var raw rawRequest
	if err := jsonwire.DecodeRequest(body, &raw); err != nil {
		return nil, err
	}
	if raw.Model == nil || *raw.Model == "" {
		return nil, errors.New("model: required")
	}
	if raw.MaxTokens == nil {
		return nil, errors.New("max_tokens: required")
	}
	if *raw.MaxTokens < 1 {
		return nil, fmt.Errorf("max_tokens: must be at least 1, got %d", *raw.MaxTokens)
	}
	if len(raw.Messages) == 0 {
		return nil, errors.New("messages: required (a non-empty array)")
	}
	req := &Request{
		Model:        *raw.Model,
		Stream:       raw.Stream,
		IncludeUsage: true,
		MaxTokens:    *raw.MaxTokens,
		Thinking:     raw.Thinking != nil && (raw.Thinking.Type == "enabled" || raw.Thinking.Type == "adaptive"),
	}
	for i, m := range raw.Messages {
		var msg rawMessage
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, jsonwire.DescribeError(fmt.Sprintf("messages[%d]", i), err)
		}
		if msg.Role == nil {
			return nil, fmt.Errorf("messages[%d].role: required", i)
		}
		text, hasText, err := contentText(msg.Content)
		if err != nil {
			return nil, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		switch *msg.Role {
		case "assistant":
			req.AssistantTurns++
		case "user":
			if hasText {
				req.LastUserText = text
			}
		default:
			return nil, fmt.Errorf("messages[%d].role: expected \"user\" or \"assistant\", got %q", i, *msg.Role)
		}
	}
	return req, nil
}

// contentText returns the text of a message content (a string, or an array of blocks whose
// "text" blocks are joined) and whether it had any text at all.
func contentText(content json.RawMessage) (text string, hasText bool, err error) {
	content = bytes.TrimSpace(content)
	if len(content) == 0 {
		return "", false, errors.New("required")
	}
	switch content[0] {
	case '"':
		var s string
		if err := json.Unmarshal(content, &s); err != nil {
			return "", false, fmt.Errorf("invalid string: %w", err)
		}
		return s, true, nil
	case '[':
		var blocks []rawBlock
		if err := json.Unmarshal(content, &blocks); err != nil {
			return "", false, fmt.Errorf("expected string or array of content blocks: %w", err)
		}
		var b strings.Builder
		for j, blk := range blocks {
			if blk.Type == "" {
				return "", false, fmt.Errorf("[%d].type: required", j)
			}
			if blk.Type == "text" {
				hasText = true
				b.WriteString(blk.Text)
			}
		}
		return b.String(), hasText, nil
	}
	return "", false, errors.New("expected string or array of content blocks")
}

// errorBody is the API's error envelope, also the data of a mid-stream error event.
type errorBody struct {
	Type  string      `json:"type"`
	Error errorDetail `json:"error"`
}

// errorDetail is the inside of the error envelope.
type errorDetail struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// WriteError answers with the API's error JSON ({"type":"error","error":{"type","message"}})
// and status. errType is e.g. "invalid_request_error", "rate_limit_error", "api_error",
// "overloaded_error".
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	body, _ := json.Marshal(errorBody{Type: "error", Error: errorDetail{Type: errType, Message: message}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
