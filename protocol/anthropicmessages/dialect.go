// Package anthropicmessages is the anthropic-messages client dialect: streambench as a client
// of any Anthropic-compatible Messages endpoint (POST {target}/v1/messages), playing the
// scenario's tool loop itself, one request per model turn; its Checker judges each turn's
// event stream by rule ID. See docs/PROTOCOLS.md.
package anthropicmessages

import (
	"encoding/json"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/clientturn"
)

var (
	_ protocol.Checker      = (*Checker)(nil)
	_ protocol.AnswerKeeper = (*Checker)(nil)
	_ protocol.OutputKeeper = (*Checker)(nil)
)

// Name is the dialect's CLI name.
const Name = "anthropic-messages"

// Dialect is the anthropic-messages client side. Safe for concurrent use.
type Dialect = clientturn.Client

// New returns the anthropic-messages dialect, requests from protocol/anthropic's encoder.
func New() *Dialect {
	return clientturn.New(clientturn.Wire{
		Name:         Name,
		Rules:        rules,
		Provider:     anthropic.Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"type":"error","error":{"type":…,"message":…}}`,
		ErrorMessage: errorMessage,
		Endpoint:     protocol.EndpointSpec{APIKeyEnv: "ANTHROPIC_API_KEY", APIKeyHeader: "x-api-key"},
		NewChecker:   func(s *protocol.Session, _ bool) protocol.Checker { return NewChecker(s) },
	})
}

// errorMessage reads the API's error JSON from a non-200 body.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Type  string `json:"type"`
		Error *struct {
			Type    *string `json:"type"`
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error == nil || e.Error.Type == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
