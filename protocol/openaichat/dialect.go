// Package openaichat is the openai-chat client dialect: streambench as a client of any
// OpenAI-compatible chat completions endpoint (POST {target}/v1/chat/completions with
// stream: true and stream_options.include_usage), such as a gateway or inference server in
// front of the mock. The client is the agent: it plays the scenario's tool loop itself, one
// request per model turn (protocol.MultiTurn), and its Checker judges each turn's
// chat.completion.chunk stream by rule ID: tool calls assembled by index, finish_reason,
// the usage chunk, data: [DONE], provider errors, and against ground truth the text,
// reasoning and tool calls of the script. See docs/PROTOCOLS.md.
package openaichat

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/openai"
)

// Dialect is a clientturn.Client (a protocol.Client, MultiTurn, ErrorChecker, StructureOnly
// and DecodeLimiter) with this package's rules.
var (
	_ protocol.Dialect         = (*Dialect)(nil)
	_ protocol.EndpointDialect = (*Dialect)(nil)
	_ protocol.Checker         = (*Checker)(nil)
	_ protocol.AnswerKeeper    = (*Checker)(nil)
	_ protocol.OutputKeeper    = (*Checker)(nil)
)

// Name is the dialect's CLI name.
const Name = "openai-chat"

// Dialect is the openai-chat client side: the provider-wire client (clientturn.Client: options,
// Configure, Label, Turns, NewRequest, CheckHeaders, CheckError, NewChecker) over the openai
// wire, its error rule R-openai-error and its Checker. It holds only its configuration and is
// safe for concurrent use.
type Dialect struct {
	clientturn.Client
}

// Option configures a Dialect (clientturn.WithModel, WithNoGroundTruth, WithHeader; outside
// package protocol, Configure's options).
type Option = clientturn.Option

// New returns the openai-chat dialect. Its requests come from the runtime's request encoder
// (protocol/openai), so streambench sends what its agent does; a non-200 answer must be the
// API's error JSON, {"error":{"message":…,"type":…}} (R-openai-error). An application's
// request may send its length in max_tokens, max_completion_tokens or both, and vLLM's
// min_tokens and ignore_eos.
func New(opts ...Option) *Dialect {
	return &Dialect{clientturn.New(clientturn.Wire{
		Name:         Name,
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
	}, opts...)}
}
