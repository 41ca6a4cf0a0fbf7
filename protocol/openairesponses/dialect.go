// Package openairesponses is the openai-responses wire and client dialect: the OpenAI
// Responses API's streaming (POST {target}/v1/responses with stream: true), as the Open
// Responses specification writes its rules down. It holds both sides, so the frames one writes
// are the frames the other reads: the mock provider's (ParseRequest, StreamWriter,
// WriteResponse, WriteError), the runtime's (Wire, a protocol.ProviderWire: the request with the
// whole conversation as input items, and the stream's decoder), and the client dialect's
// (Dialect and its Checker). The client is the agent: it plays the scenario's tool loop itself,
// one request per model turn, and the Checker judges each turn's events by rule ID: the event:
// line against the type, sequence_number, the response's lifecycle and its one terminal, items
// and content parts opened and closed, every .done against its deltas, usage, error events
// followed by response.failed, and against ground truth the reasoning, text and function calls
// of the script. See docs/PROTOCOLS.md, "openai-responses".
package openairesponses

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/sse"
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

// Name is the dialect's CLI name, and the wire's.
const Name = "openai-responses"

// Dialect is the openai-responses client side: the provider-wire client (clientturn.Client:
// options, Configure, Label, Turns, NewRequest, CheckHeaders, CheckError, NewChecker) over the
// Responses wire, its error rule R-responses-error, its Checker, and whether the stream must
// end with data: [DONE] (clientturn.WithRequireDone, option requireDone: the Open Responses
// specification ends every stream with it; OpenAI's own API ends at the terminal event, so the
// default accepts both, and judges a [DONE] that comes). It holds only its configuration and is
// safe for concurrent use.
type Dialect struct {
	clientturn.Client
}

// Option configures a Dialect (clientturn.WithModel, WithNoGroundTruth, WithHeader,
// WithRequireDone; outside package protocol, Configure's options).
type Option = clientturn.Option

// maxEventBytes bounds one event of this wire (line and joined data): its .done events and
// its terminal repeat an item's whole text on one line, which a long answer takes past the
// SSE decoder's default 64 KiB line.
const maxEventBytes = 8 << 20

// New returns the openai-responses dialect. Its requests come from the wire's request encoder
// (Wire), the conversation as input items; a non-200 answer must be the API's error JSON,
// {"error":{"message":…,"type":…}} (R-responses-error). One event (and its one line) may hold
// up to 8 MiB.
func New(opts ...Option) *Dialect {
	return &Dialect{clientturn.New(clientturn.Wire{
		Name:         Name,
		Provider:     Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"error":{"message":…,"type":…}}`,
		ErrorMessage: clientturn.OpenAIErrorMessage,
		Endpoint:     protocol.EndpointSpec{APIKeyEnv: "OPENAI_API_KEY", APIKeyHeader: "Authorization", APIKeyPrefix: "Bearer "},
		Limits:       sse.Limits{MaxLine: maxEventBytes, MaxEvent: maxEventBytes},
		DoneHelp:     "require the final data: [DONE] the Open Responses specification ends a stream with (default false: OpenAI's own stream has none)",
		NewChecker:   func(s *protocol.Session, requireDone bool) protocol.Checker { return NewChecker(s, requireDone) },
	}, opts...)}
}
