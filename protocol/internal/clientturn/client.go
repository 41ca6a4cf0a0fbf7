package clientturn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// A provider-wire dialect is a Client and its package's rules.
var (
	_ protocol.Dialect         = (*Client)(nil)
	_ protocol.Client          = (*Client)(nil)
	_ protocol.MultiTurn       = (*Client)(nil)
	_ protocol.ErrorChecker    = (*Client)(nil)
	_ protocol.StructureOnly   = (*Client)(nil)
	_ protocol.DecodeLimiter   = (*Client)(nil)
	_ protocol.EndpointDialect = (*Client)(nil)
)

// DefaultModel is the model name sent when none is configured; the mock accepts any.
const DefaultModel = "streambench-mock"

// Wire is what one provider-wire client dialect has of its own; Client does the rest.
type Wire struct {
	Name  string
	Rules []protocol.RuleSpec // the rules only this dialect checks
	// Provider is the runtime's request encoder, so streambench sends what its agent does.
	Provider protocol.ProviderWire
	// ErrorRule judges a non-200 answer, whose body must be ErrorJSON's shape (as details
	// quote it): ErrorMessage reads its message, false when it is not.
	ErrorRule    protocol.Rule
	ErrorJSON    string
	ErrorMessage func(body []byte) (message string, ok bool)
	Endpoint     protocol.EndpointSpec
	Limits       sse.Limits // the SSE decoder's limits (zero fields: the defaults)
	// DoneHelp, when set, offers the option requireDone with this help.
	DoneHelp string
	// NewChecker returns the wire's checker for the stream of s's current turn.
	NewChecker func(s *protocol.Session, requireDone bool) protocol.Checker
}

// Client is a provider-wire client dialect: its model, ground truth or not, and Wire. Each
// dialect package's Dialect is one. Safe for concurrent use.
type Client struct {
	protocol.Base
	wire          *Wire
	model         string
	noGroundTruth bool
	requireDone   bool
}

// New returns the client of w on DefaultModel, with ground truth (Configure sets the options).
func New(w Wire) *Client {
	return &Client{Base: protocol.Base(w.Name), wire: &w, model: DefaultModel}
}

// Rules declares the rules only this dialect checks, for the registry.
func (c *Client) Rules() []protocol.RuleSpec { return slices.Clone(c.wire.Rules) }

// StructureOnly reports the noGroundTruth option (protocol.StructureOnly).
func (c *Client) StructureOnly() bool { return c.noGroundTruth }

// Endpoint is the wire's EndpointSpec (protocol.EndpointDialect).
func (c *Client) Endpoint() protocol.EndpointSpec { return c.wire.Endpoint }

// DecodeLimits are the wire's SSE decoder limits (protocol.DecodeLimiter).
func (c *Client) DecodeLimits() sse.Limits { return c.wire.Limits }

func (c *Client) vars() []protocol.OptionVar {
	vars := []protocol.OptionVar{
		protocol.StringVar(protocol.OptionSpec{Key: "model", Help: "the request's model, which a gateway routes on", Default: DefaultModel}, &c.model),
		protocol.BoolVar(protocol.OptionSpec{Key: "noGroundTruth", Help: "judge structure only, one request per session: the target's model is not the mock (also --no-ground-truth)"}, &c.noGroundTruth),
	}
	if c.wire.DoneHelp != "" {
		vars = append(vars, protocol.BoolVar(protocol.OptionSpec{Key: "requireDone", Help: c.wire.DoneHelp}, &c.requireDone))
	}
	return vars
}

// Options lists the options Configure accepts.
func (c *Client) Options() []protocol.OptionSpec { return protocol.Specs(c.vars()) }

// Configure returns the client with a profile's options (target: the deployment, for results).
func (c *Client) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	n := *c
	if err := o.Apply(c.wire.Name, n.vars()); err != nil {
		return nil, err
	}
	return &n, nil
}

// session applies the client's mode to s (it never modifies s itself).
func (c *Client) session(s *protocol.Session) *protocol.Session {
	if c.noGroundTruth && !s.NoGroundTruth {
		n := *s
		n.NoGroundTruth = true
		return &n
	}
	return s
}

// Turns is how many requests session s takes (Turns).
func (c *Client) Turns(s *protocol.Session) int { return Turns(c.session(s)) }

// NewRequest builds the streaming request for s.Turn (ModelRequest) with the wire's encoder.
func (c *Client) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	s = c.session(s)
	req, err := c.wire.Provider.NewRequest(ctx, BaseURL(baseURL), ModelRequest(s, c.model))
	if err != nil {
		return nil, fmt.Errorf("%s: session %s turn %d: %w", c.wire.Name, s.ID, s.Turn, err)
	}
	return req, nil
}

// BaseURL is target without a trailing slash or "/v1" (SDKs are given http://host/v1).
func BaseURL(target string) string {
	return strings.TrimSuffix(strings.TrimSuffix(target, "/"), "/v1")
}

// CheckError judges a non-200 answer by the wire's error rule: the body must be the API's
// error JSON, and a script that fails the session must fail it here. An HTTP error the script
// does not call for is the session's http_error outcome, not a violation.
func (c *Client) CheckError(status int, h http.Header, body []byte, s *protocol.Session) []protocol.Violation {
	s = c.session(s)
	rule := c.wire.ErrorRule
	var v protocol.Violations
	if msg, ok := c.wire.ErrorMessage(body); !ok {
		v.Add(rule, "HTTP %d: expected the error JSON %s, saw %s",
			status, c.wire.ErrorJSON, protocol.Quote(string(bytes.TrimSpace(body)), 80))
	} else if !IsJSON(h) {
		v.Add(rule, "HTTP %d: expected Content-Type application/json on the error, saw %q (%s)",
			status, h.Get("Content-Type"), protocol.Quote(msg, 60))
	}
	if e := Expect(s); s.ScriptedError() && !e.HTTPError {
		v.Add(rule, "turn %d: expected a stream, the script has no HTTP error here (it fails at turn %d); saw HTTP %d %s",
			s.Turn, s.Expected.FailedTurn, status, protocol.Quote(string(bytes.TrimSpace(body)), 80))
	}
	return v.List()
}

// NewChecker returns the wire's checker for the stream of s's current turn.
func (c *Client) NewChecker(s *protocol.Session) protocol.Checker {
	return c.wire.NewChecker(c.session(s), c.requireDone)
}

// OpenAIErrorMessage reads the OpenAI APIs' error JSON from a non-200 body.
func OpenAIErrorMessage(body []byte) (string, bool) {
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
