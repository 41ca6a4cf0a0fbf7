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
	"encoding/json"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/sse"
)

var (
	_ protocol.Dialect       = (*Dialect)(nil)
	_ protocol.Client        = (*Dialect)(nil)
	_ protocol.MultiTurn     = (*Dialect)(nil)
	_ protocol.ErrorChecker  = (*Dialect)(nil)
	_ protocol.StructureOnly = (*Dialect)(nil)
	_ protocol.DecodeLimiter = (*Dialect)(nil)
	_ protocol.Checker       = (*Checker)(nil)
	_ protocol.AnswerKeeper  = (*Checker)(nil)
)

// Name is the dialect's CLI name, and the wire's.
const Name = "openai-responses"

// DefaultModel is the model name sent when none is configured; the mock accepts any.
const DefaultModel = clientturn.DefaultModel

// Dialect is the openai-responses client side: the provider-wire client (options, Configure,
// Label, Turns, NewRequest, CheckHeaders, CheckError) over the Responses wire, its error rule
// R-responses-error, its Checker, and whether the stream must end with data: [DONE]. It holds
// only its configuration and is safe for concurrent use.
type Dialect struct {
	clientturn.Client
	requireDone bool
}

// Option configures a Dialect.
type Option func(*Dialect)

// WithModel sets the request's model (a gateway routes on it).
func WithModel(model string) Option {
	return func(d *Dialect) { clientturn.SetModel(&d.Client, model) }
}

// WithNoGroundTruth judges every session for structure only, as if Session.NoGroundTruth
// were set: the target's model is not the mock, so no content rule applies and each session
// is one request.
func WithNoGroundTruth() Option { return func(d *Dialect) { clientturn.SetNoGroundTruth(&d.Client) } }

// WithHeader adds a header to every request (an Authorization for a real gateway).
func WithHeader(key, value string) Option {
	return func(d *Dialect) { clientturn.AddHeader(&d.Client, key, value) }
}

// WithRequireDone makes a stream without the final data: [DONE] break R-responses-lifecycle.
// The Open Responses specification ends every stream with it; OpenAI's own API ends at the
// terminal event, so the default accepts both (and judges a [DONE] that comes).
func WithRequireDone() Option { return func(d *Dialect) { d.requireDone = true } }

// New returns the openai-responses dialect. Its requests come from the wire's request encoder
// (Wire), the conversation as input items; a non-200 answer must be the API's error JSON,
// {"error":{"message":…,"type":…}} (R-responses-error).
func New(opts ...Option) *Dialect {
	d := &Dialect{Client: clientturn.NewClient(clientturn.Wire{
		Name:         Name,
		Provider:     Wire{},
		ErrorRule:    RError,
		ErrorJSON:    `{"error":{"message":…,"type":…}}`,
		ErrorMessage: errorMessage,
		NewChecker:   newChecker,
	})}
	for _, o := range opts {
		o(d)
	}
	return d
}

// requireDoneOption is the option key of WithRequireDone.
const requireDoneOption = "requireDone"

// Options lists the options Configure accepts: the provider wires' and requireDone.
func (d *Dialect) Options() []protocol.OptionSpec {
	return append(d.Client.Options(), protocol.OptionSpec{Key: requireDoneOption,
		Help: "require the final data: [DONE] the Open Responses specification ends a stream with (default false: OpenAI's own stream has none)"})
}

// Configure returns the client with a profile's options applied.
func (d *Dialect) Configure(target string, o protocol.Options) (protocol.Client, error) {
	if err := o.Check(Name, d.Options()); err != nil {
		return nil, err
	}
	requireDone, err := o.Bool(requireDoneOption, d.requireDone)
	if err != nil {
		return nil, err
	}
	rest := protocol.Options{}
	for k, v := range o {
		if k != requireDoneOption {
			rest[k] = v
		}
	}
	c, err := d.Client.Configure(target, rest)
	if err != nil {
		return nil, err
	}
	return &Dialect{Client: *c.(*clientturn.Client), requireDone: requireDone}, nil
}

// NewChecker returns a fresh checker for the stream of s's current turn.
func (d *Dialect) NewChecker(s *protocol.Session) protocol.Checker {
	return NewChecker(d.Client.Session(s), d.requireDone)
}

// maxEventBytes bounds one event of this wire (line and joined data): its .done events and
// its terminal repeat an item's whole text on one line, which a long answer takes past the
// SSE decoder's default 64 KiB line.
const maxEventBytes = 8 << 20

// DecodeLimits lets one event (and its one line) hold up to 8 MiB (protocol.DecodeLimiter).
func (*Dialect) DecodeLimits() sse.Limits {
	return sse.Limits{MaxLine: maxEventBytes, MaxEvent: maxEventBytes}
}

// errorMessage reads the API's error JSON ({"error":{"message":…}}) from a non-200 body; the
// rare path, so encoding/json.
func errorMessage(body []byte) (string, bool) {
	var e struct {
		Error *struct {
			Message *string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Message == nil {
		return "", false
	}
	return *e.Error.Message, true
}
