// Package agui is the ag-ui dialect: the Agent–User Interaction protocol's event stream
// (@ag-ui/core, @ag-ui/client) that an AG-UI agent server sends a client which POSTed a
// RunAgentInput: the events, the Writer, the request and the Checker, which judges what
// @ag-ui/client's verifyEvents does and what it leaves out. See docs/PROTOCOLS.md, "ag-ui".
package agui

import (
	"cmp"
	"context"
	"net/http"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Name is the dialect's CLI name.
const Name = "ag-ui"

// DefaultPath is the reference runtime's AG-UI route ({agent}: the deployment slug).
const DefaultPath = "/agui/{agent}"

var (
	_ protocol.Dialect       = (*Dialect)(nil)
	_ protocol.Client        = (*Dialect)(nil)
	_ protocol.StructureOnly = (*Dialect)(nil)
	_ protocol.Checker       = (*Checker)(nil)
)

// Options configure the dialect. The zero value judges the reference runtime's route.
type Options struct {
	// Path is the route's path template ({agent}); DefaultPath when empty.
	Path string
	// NoGroundTruth judges structure only: the agent's model is not the mock.
	NoGroundTruth bool
}

// Dialect is the ag-ui client side. It holds only its options and is safe for concurrent use.
type Dialect struct {
	protocol.Base
	opts  Options
	agent string
}

// New returns the ag-ui dialect with opts.
func New(opts Options) *Dialect {
	opts.Path = cmp.Or(opts.Path, DefaultPath)
	return &Dialect{Base: Name, opts: opts}
}

func vars(opts *Options) []protocol.OptionVar {
	return []protocol.OptionVar{
		protocol.PathVar(protocol.OptionSpec{Key: "path", Help: "the agent route's path template, {agent} the target", Default: DefaultPath, Placeholders: []string{"agent"}}, &opts.Path),
		protocol.NoGroundTruthVar("the agent's", &opts.NoGroundTruth),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec { return protocol.Specs(vars(&Options{})) }

// Configure returns the client for target (the agent, {agent} in the path).
func (d *Dialect) Configure(target string, o protocol.Options) (protocol.Client, error) {
	opts := d.opts
	if err := o.Apply(Name, vars(&opts)); err != nil {
		return nil, err
	}
	c := New(opts)
	c.agent = target
	return c, nil
}

// StructureOnly reports the noGroundTruth option (protocol.StructureOnly).
func (d *Dialect) StructureOnly() bool { return d.opts.NoGroundTruth }

// ThreadID and RunID are the ids a session's RunAgentInput carries.
func ThreadID(s *protocol.Session) string { return "thread-" + s.ID }

// RunID is the run id of a session's RunAgentInput.
func RunID(s *protocol.Session) string { return "run-" + s.ID }

// NewRequest builds what HttpAgent sends: a RunAgentInput whose one message is the input.
func (d *Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body := make([]byte, 0, 192+len(s.Input)+3*len(s.ID))
	body = jsonwire.AppendField(body, `{"threadId":`, ThreadID(s))
	body = jsonwire.AppendField(body, `,"runId":`, RunID(s))
	body = jsonwire.AppendField(body, `,"state":{},"messages":[{"id":`, "msg-"+s.ID)
	body = jsonwire.AppendField(body, `,"role":"user","content":`, s.Input)
	body = append(body, `}],"tools":[],"context":[],"forwardedProps":{}}`...)
	return protocol.NewStreamPost(ctx, Name, s, baseURL, d.opts.Path, body, "agent", d.agent)
}

// NewChecker returns a fresh checker for one stream of s.
func (d *Dialect) NewChecker(s *protocol.Session) protocol.Checker {
	return NewChecker(s, d.opts.NoGroundTruth)
}
