// Package anthropicmessages is the anthropic-messages client dialect: streambench as a client
// of any Anthropic-compatible Messages endpoint (POST {target}/v1/messages with stream: true),
// such as a gateway in front of the mock. The client is the agent: it plays the scenario's
// tool loop itself, one request per model turn (protocol.MultiTurn), and its Checker judges
// each turn's event stream by rule ID: message_start first, every content block started,
// given deltas of its own type and stopped by index (blocks may interleave), one
// message_delta with a stop_reason, message_stop last, ping anywhere, mid-stream errors, and
// against ground truth the thinking, text and tool_use input of the script. See
// docs/PROTOCOLS.md.
package anthropicmessages

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/clientturn"
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
const Name = "anthropic-messages"

// Dialect is the anthropic-messages client side: the provider-wire client (clientturn.Client:
// options, Configure, Label, Turns, NewRequest, CheckHeaders, CheckError, NewChecker) over the
// anthropic wire, its error rule R-anthropic-error and its Checker. It holds only its
// configuration and is safe for concurrent use.
type Dialect struct {
	clientturn.Client
}

// Option configures a Dialect (clientturn.WithModel, WithNoGroundTruth, WithHeader: an
// x-api-key replaces the placeholder; outside package protocol, Configure's options).
type Option = clientturn.Option

// New returns the anthropic-messages dialect. Its requests come from the runtime's request
// encoder (protocol/anthropic), so streambench sends what its agent does; a non-200 answer
// must be the API's error JSON, {"type":"error","error":{"type":…,"message":…}}
// (R-anthropic-error). An API key goes in x-api-key.
func New(opts ...Option) *Dialect {
	return &Dialect{clientturn.New(clientturn.Wire{
		Name:         Name,
		Provider:     anthropic.Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"type":"error","error":{"type":…,"message":…}}`,
		ErrorMessage: errorMessage,
		Endpoint:     protocol.EndpointSpec{APIKeyEnv: "ANTHROPIC_API_KEY", APIKeyHeader: "x-api-key"},
		NewChecker:   func(s *protocol.Session, _ bool) protocol.Checker { return NewChecker(s) },
	}, opts...)}
}
