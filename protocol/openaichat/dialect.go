// Package openaichat is the openai-chat client dialect: streambench as a client of any
// OpenAI-compatible chat completions endpoint (POST {target}/v1/chat/completions), playing the
// scenario's tool loop itself, one request per model turn; its Checker judges each turn's
// chunk stream by rule ID. See docs/PROTOCOLS.md.
package openaichat

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/openai"
)

var (
	_ protocol.Checker      = (*Checker)(nil)
	_ protocol.AnswerKeeper = (*Checker)(nil)
	_ protocol.OutputKeeper = (*Checker)(nil)
)

// Name is the dialect's CLI name.
const Name = "openai-chat"

// Dialect is the openai-chat client side. Safe for concurrent use.
type Dialect = clientturn.Client

// New returns the openai-chat dialect, its requests from the runtime's encoder (protocol/openai).
func New() *Dialect {
	return clientturn.New(clientturn.Wire{
		Name:         Name,
		Rules:        rules,
		Provider:     openai.Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"error":{"message":…,"type":…}}`,
		ErrorMessage: clientturn.OpenAIErrorMessage,
		Endpoint: protocol.EndpointSpec{
			APIKeyEnv: "OPENAI_API_KEY", APIKeyHeader: "Authorization", APIKeyPrefix: "Bearer ",
			MaxTokensFields: []string{protocol.MaxTokensField, protocol.MaxCompletionTokensField, protocol.BothMaxTokensFields},
			VLLMFields:      true,
		},
		NewChecker: func(s *protocol.Session, _ bool) protocol.Checker { return NewChecker(s) },
	})
}
