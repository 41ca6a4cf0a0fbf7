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
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/clientturn"
	"github.com/streambench/streambench/protocol/simchat"
)

var (
	_ protocol.Dialect      = (*Dialect)(nil)
	_ protocol.Client       = (*Dialect)(nil)
	_ protocol.MultiTurn    = (*Dialect)(nil)
	_ protocol.ErrorChecker = (*Dialect)(nil)
	_ protocol.Checker      = (*Checker)(nil)
)

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec {
	return []protocol.OptionSpec{
		{Key: "model", Help: "the request's model (a gateway routes on it; default " + DefaultModel + ")"},
		{Key: "noGroundTruth", Help: "judge structure only, one request per session: the target's model is not the mock (also --no-ground-truth)"},
	}
}

// Configure returns the dialect with a profile's options applied; the target names the
// deployment only in results (the request goes to {target URL}/v1/...).
func (d *Dialect) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	if err := o.Check(Name, d.Options()); err != nil {
		return nil, err
	}
	c := *d
	c.header = d.header.Clone()
	var err error
	if c.model, err = o.String("model", d.model); err != nil {
		return nil, err
	}
	if c.noGroundTruth, err = o.Bool("noGroundTruth", d.noGroundTruth); err != nil {
		return nil, err
	}
	return &c, nil
}

// Label is the dialect's name.
func (*Dialect) Label() string { return Name }

// Sees is true for every frame kind: the wire withholds nothing.
func (*Dialect) Sees(protocol.FrameKind) bool { return true }

// Name is the dialect's CLI name.
const Name = "anthropic-messages"

// DefaultModel is the model name sent when none is configured; the mock accepts any.
const DefaultModel = "streambench-mock"

// Dialect is the anthropic-messages client side. It holds only its configuration and is safe for
// concurrent use.
type Dialect struct {
	model         string
	noGroundTruth bool
	header        http.Header
}

// Option configures a Dialect.
type Option func(*Dialect)

// WithModel sets the request's model (a gateway routes on it).
func WithModel(model string) Option { return func(d *Dialect) { d.model = model } }

// WithNoGroundTruth judges every session for structure only, as if Session.NoGroundTruth
// were set: the target's model is not the mock, so no content rule applies and each session
// is one request.
func WithNoGroundTruth() Option { return func(d *Dialect) { d.noGroundTruth = true } }

// WithHeader adds a header to every request (an x-api-key for a real gateway; it replaces
// the placeholder).
func WithHeader(key, value string) Option {
	return func(d *Dialect) { d.header.Add(key, value) }
}

// New returns the anthropic-messages dialect.
func New(opts ...Option) *Dialect {
	d := &Dialect{model: DefaultModel, header: http.Header{}}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Name is the dialect's CLI name, "anthropic-messages".
func (*Dialect) Name() string { return Name }

// session applies the dialect's mode to s (it never modifies s itself).
func (d *Dialect) session(s *protocol.Session) *protocol.Session {
	if d.noGroundTruth && !s.NoGroundTruth {
		c := *s
		c.NoGroundTruth = true
		return &c
	}
	return s
}

// Turns is how many requests session s takes: every scripted turn up to the one the provider
// fails at, one without ground truth.
func (d *Dialect) Turns(s *protocol.Session) int { return clientturn.Turns(d.session(s)) }

// NewRequest builds the streaming request for s.Turn: the user's input, then the earlier
// turns' assistant messages with their tool calls and the scripted tool results. It reuses
// the runtime's request encoder (protocol/anthropic), so streambench sends what its agent does.
func (d *Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	s = d.session(s)
	mr := clientturn.ModelRequest(s, d.model)
	mr.Header = d.header
	req, err := anthropic.Wire{}.NewRequest(ctx, baseURL, mr)
	if err != nil {
		return nil, fmt.Errorf("%s: session %s turn %d: %w", Name, s.ID, s.Turn, err)
	}
	return req, nil
}

// CheckHeaders checks that the stream is declared text/event-stream (R-headers).
func (*Dialect) CheckHeaders(h http.Header, s *protocol.Session) []protocol.Violation {
	if v := simchat.CheckEventStream(h); v != "" {
		return []protocol.Violation{{Rule: protocol.RHeaders, Detail: v}}
	}
	return nil
}

// CheckError judges a non-200 answer (R-anthropic-error): the body must be the API's error
// JSON, {"type":"error","error":{"type":…,"message":…}}, and against ground truth the script must fail this turn
// with an HTTP error.
func (d *Dialect) CheckError(status int, h http.Header, body []byte, s *protocol.Session) []protocol.Violation {
	s = d.session(s)
	var v simchat.Violations
	if msg, ok := errorMessage(body); !ok {
		v.Add(protocol.RAnthropicError, "HTTP %d: expected the error JSON {\"type\":\"error\",\"error\":{\"type\":…,\"message\":…}}, saw %s",
			status, simchat.Clip(string(bytes.TrimSpace(body)), 80))
	} else if !clientturn.IsJSON(h) {
		v.Add(protocol.RAnthropicError, "HTTP %d: expected Content-Type application/json on the error, saw %q (%s)",
			status, h.Get("Content-Type"), simchat.Clip(msg, 60))
	}
	if e := clientturn.Expect(s); e.Truth && !e.HTTPError {
		v.Add(protocol.RAnthropicError, "turn %d: expected a stream, the script has no HTTP error here; saw HTTP %d %s",
			s.Turn, status, simchat.Clip(string(bytes.TrimSpace(body)), 80))
	}
	return v.List()
}

// NewChecker returns a checker for the stream of s's current turn.
func (d *Dialect) NewChecker(s *protocol.Session) protocol.Checker { return NewChecker(d.session(s)) }
