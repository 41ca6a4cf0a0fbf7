// Package compose is the compose dialect: the Compose agent stream (POST /agent/{id}/stream)
// of OpenAI-style text deltas and typed events (reasoning, tools, timing, plans, swarm
// children) up to a done/stopped/error terminal, a receipt and a raw [DONE], and the stop and
// approval requests: the frame Writer, the Dialect and the Checker.
package compose

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
)

var (
	_ protocol.Dialect      = (*Dialect)(nil)
	_ protocol.SwarmPlayer  = (*Dialect)(nil)
	_ protocol.Client       = (*Client)(nil)
	_ protocol.Stopper      = (*Client)(nil)
	_ protocol.Checker      = (*Checker)(nil)
	_ protocol.StopObserver = (*Checker)(nil)
)

// Name is the dialect's CLI and mix name.
const Name = "compose"

// Dialect is the compose client side: its options configure a Client. Safe for concurrent use.
type Dialect struct{ protocol.Base }

// New returns the compose dialect.
func New() *Dialect { return &Dialect{Name} }

// PlaysSwarm is true: a compose run may spawn children (swarm scenarios, the R-swarm rules).
func (*Dialect) PlaysSwarm() bool { return true }

func vars(c *Client) []protocol.OptionVar {
	return []protocol.OptionVar{
		protocol.PathVar(protocol.OptionSpec{Key: "path", Help: "the stream path template, placeholder {agent}",
			Default: DefaultPath, Placeholders: []string{"agent"}}, &c.path),
		protocol.PathVar(protocol.OptionSpec{Key: "stopPath", Help: "the stop path template, placeholders {agent} and {run} (default: derived from path: " +
			DefaultStopPath + " for the default, the prefix of one ending in /stream + /runs/{run}/stop)", Placeholders: []string{"agent", "run"}}, &c.stopPath),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec { return protocol.Specs(vars(&Client{})) }

// Configure returns the client for agent id target.
func (d *Dialect) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	c := &Client{Base: Name, path: DefaultPath}
	if err := o.Apply(Name, vars(c)); err != nil {
		return nil, err
	}
	var err error
	if c.stopPath, err = StopPathFor(c.path, c.stopPath); err != nil {
		return nil, fmt.Errorf("option %w", err)
	}
	return c, nil
}

// NewClient returns a client on the default paths, for tests and library users.
func NewClient() *Client { return &Client{Base: Name, path: DefaultPath, stopPath: DefaultStopPath} }

// Client is a configured compose client. Safe for concurrent use.
type Client struct {
	protocol.Base
	path, stopPath string
}

// RequestBody is the agent stream request, which the reference runtime decodes too.
type RequestBody struct {
	Message  *string `json:"message"`
	ThreadID string  `json:"threadId,omitempty"`
}

// Path templates: {agent} is the agent id (s.Target), {run} the stream's RunIDHeader.
const (
	DefaultPath     = "/agent/{agent}/stream"
	DefaultStopPath = "/agent/{agent}/runs/{run}/stop"
)

// StopPathFor is the stop path template: stopPath when set, else the default's for the default
// path, else /stream replaced by /runs/{run}/stop (another path needs an explicit stop path).
func StopPathFor(path, stopPath string) (string, error) {
	switch {
	case stopPath != "":
		return stopPath, nil
	case path == "" || path == DefaultPath:
		return DefaultStopPath, nil
	case strings.HasSuffix(path, "/stream"):
		return strings.TrimSuffix(path, "/stream") + "/runs/{run}/stop", nil
	}
	return "", fmt.Errorf("stop path: stream path %q does not end in /stream, so the stop path cannot be derived; set it (placeholders {agent}, {run})", path)
}

// NewRequest builds POST {baseURL}{path} with {"message","threadId"}.
func (c *Client) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	return protocol.NewStreamPost(ctx, Name, s, baseURL, c.path, RequestBody{Message: &s.Input, ThreadID: s.ID}, "agent", s.Target)
}

// NewStopRequest builds POST {baseURL}{stop path} for the run resp's header named.
func (c *Client) NewStopRequest(ctx context.Context, baseURL string, s *protocol.Session, resp *http.Response) (*http.Request, error) {
	return protocol.NewRunPost(ctx, "compose: stop", s, resp, RunIDHeader, baseURL, c.stopPath, []byte("{}"), "agent", "run")
}

// CheckHeaders checks the content type and the run id header (R-headers).
func (*Client) CheckHeaders(h http.Header, _ *protocol.Session) []protocol.Violation {
	out := protocol.CheckEventStream(h)
	if h.Get(RunIDHeader) == "" {
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: "expected an x-compose-run-id response header, saw none"})
	}
	return out
}

// NewChecker returns a checker for one stream of s.
func (*Client) NewChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }
