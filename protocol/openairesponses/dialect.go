// Package openairesponses is the openai-responses wire and client dialect: the OpenAI
// Responses API's streaming (POST {target}/v1/responses), judged by the Open Responses
// specification's rules. It holds the mock provider's side (ParseRequest, StreamWriter,
// WriteResponse, WriteError), the runtime's (Wire) and the client dialect's, which plays the
// scenario's tool loop itself, one request per model turn (Dialect, Checker). See
// docs/PROTOCOLS.md, "openai-responses".
package openairesponses

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/sse"
)

var (
	_ protocol.Checker      = (*Checker)(nil)
	_ protocol.AnswerKeeper = (*Checker)(nil)
	_ protocol.OutputKeeper = (*Checker)(nil)
)

// Name is the dialect's CLI name, and the wire's.
const Name = "openai-responses"

// Dialect is the openai-responses client side. Safe for concurrent use.
type Dialect = clientturn.Client

// maxEventBytes bounds one event of this wire: its .done events and terminal repeat an item's
// whole text on one line, past the SSE decoder's default 64 KiB.
const maxEventBytes = 8 << 20

// New returns the openai-responses dialect, its requests from the wire's encoder (Wire). The
// stream need not end with data: [DONE] unless option requireDone: the Open Responses specification
// ends every stream with it, OpenAI's own API at the terminal event.
func New() *Dialect {
	return clientturn.New(clientturn.Wire{
		Name:         Name,
		Rules:        rules,
		Provider:     Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"error":{"message":…,"type":…}}`,
		ErrorMessage: clientturn.OpenAIErrorMessage,
		Endpoint:     protocol.EndpointSpec{APIKeyEnv: "OPENAI_API_KEY", APIKeyHeader: "Authorization", APIKeyPrefix: "Bearer "},
		Limits:       sse.Limits{MaxLine: maxEventBytes, MaxEvent: maxEventBytes},
		DoneHelp:     "require the final data: [DONE] the Open Responses specification ends a stream with (default false: OpenAI's own stream has none)",
		NewChecker:   func(s *protocol.Session, requireDone bool) protocol.Checker { return NewChecker(s, requireDone) },
	})
}
