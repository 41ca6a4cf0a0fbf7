// Package anthropic is the Anthropic Messages wire (POST /v1/messages): the mock's side and the
// runtime's (Wire), together so the events one writes are the events the other reads.
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

// Request is what the mock provider reads of a Messages request: IncludeUsage always (the
// stream always reports usage), LastUserText skipping messages of tool_result blocks alone,
// Thinking for extended thinking "enabled" or "adaptive", MaxTokens required and at least 1.
type Request = jsonwire.ChatRequest

type rawRequest struct {
	Model     *string           `json:"model"`
	MaxTokens *int              `json:"max_tokens"`
	Messages  []json.RawMessage `json:"messages"`
	Stream    bool              `json:"stream"`
	Thinking  *struct {
		Type string `json:"type"`
	} `json:"thinking"`
}

type rawMessage struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
}

type rawBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ParseRequest reads a Messages body; errors name the offending field, as the API's do.
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

type errorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// WriteError answers with status and the API's error JSON
// ({"type":"error","error":{"type","message"}}); errType is e.g. "overloaded_error".
func WriteError(w http.ResponseWriter, status int, errType, message string) {
	body := errorBody{Type: "error"}
	body.Error.Type, body.Error.Message = errType, message
	jsonwire.WriteError(w, status, &body)
}
