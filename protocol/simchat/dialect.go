// Package simchat is the sim-chat dialect: Sim's public chat stream (POST /api/chat/{slug}),
// with header-negotiated agent-events framing (live chunks, chunk_reset, gated thinking and
// tool frames): the frame Writer, the Dialect and the Checker, and the Tracker, the
// agent-events answer model sim-canvas shares.
package simchat

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Client  = (*Client)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Name is the dialect's CLI and mix name.
const Name = "sim-chat"

// Dialect is the sim-chat client side: its options configure a Client. Safe for concurrent use.
type Dialect struct{ protocol.Base }

// New returns the sim-chat dialect.
func New() *Dialect { return &Dialect{Name} }

// Policy is a deployment's event policy: which frames an opted-in client is sent.
type Policy struct {
	IncludeThinking  bool `json:"includeThinking" yaml:"includeThinking"`
	IncludeToolCalls bool `json:"includeToolCalls" yaml:"includeToolCalls"`
	// NoModelThinking: the model cannot think; no thinking frame may flow (R-thinking-capability).
	NoModelThinking bool `json:"noModelThinking,omitempty" yaml:"-"`
	// SettledTools is the provider's capability (option liveTools=false): it runs the tool loop
	// without live frames and sends every client only the settled answer (R-settled-tools).
	SettledTools bool `json:"settledTools,omitempty" yaml:"-"`
}

// policies are the policies by name.
var policies = map[string]Policy{
	"none":     {},
	"thinking": {IncludeThinking: true},
	"tools":    {IncludeToolCalls: true},
	"all":      {IncludeThinking: true, IncludeToolCalls: true},
}

// ParsePolicy reads a policy name: none, thinking, tools or all.
func ParsePolicy(name string) (Policy, error) {
	if p, ok := policies[name]; ok {
		return p, nil
	}
	return Policy{}, fmt.Errorf("policy %q: want none, thinking, tools or all", name)
}

// PolicyForSlug is the policy a slug's suffix names (-none, -thinking, -tools, -all), else none.
func PolicyForSlug(slug string) Policy {
	if i := strings.LastIndexByte(slug, '-'); i >= 0 {
		return policies[slug[i+1:]]
	}
	return Policy{}
}

// vars binds the options to c's settings (thinks, live: modelThinking, liveTools).
func vars(c *Client, thinks, live *bool) []protocol.OptionVar {
	policy := protocol.OptionVar{OptionSpec: protocol.OptionSpec{Key: "policy", Help: "the deployment's event policy the checker assumes: none, thinking, tools or all (default: from the slug's suffix, else none); given on the command line it holds for every target, so give --slug with it"},
		Set: func(o protocol.Options) error {
			name, err := o.String("policy", "")
			if err != nil || name == "" {
				return err
			}
			if c.policy, err = ParsePolicy(name); err != nil {
				return fmt.Errorf("option %w", err)
			}
			return nil
		}}
	return []protocol.OptionVar{
		protocol.BoolVar(protocol.OptionSpec{Key: "optedIn", Help: "send " + ProtocolHeader + ": " + ProtocolToken + " (live chunks, chunk_reset, thinking and tool frames); default false"}, &c.optedIn),
		policy,
		protocol.BoolVar(protocol.OptionSpec{Key: "includeThinking", Help: "the policy's includeThinking alone (overrides policy)"}, &c.policy.IncludeThinking),
		protocol.BoolVar(protocol.OptionSpec{Key: "includeToolCalls", Help: "the policy's includeToolCalls alone (overrides policy)"}, &c.policy.IncludeToolCalls),
		protocol.PathVar(protocol.OptionSpec{Key: "path", Help: "the stream path template, placeholder {slug}", Default: DefaultPath, Placeholders: []string{"slug"}}, &c.path),
		protocol.BoolVar(protocol.OptionSpec{Key: "modelThinking", Help: "whether the deployment's model can think at all (default: false for a slug with a \"nothink\" part, else true); without it no thinking frame may flow (R-thinking-capability)"}, thinks),
		protocol.BoolVar(protocol.OptionSpec{Key: "liveTools", Help: "whether the deployment's provider runs its tool loop live (default: false for a slug with a \"settled\" part, else true); false: only the settled final text, in one chunk, with no thinking, tool or chunk_reset frame even for opted-in clients, as Sim's providers outside OpenAI, Anthropic, Google, Vertex AI, DeepSeek, Groq and Bedrock send it (R-settled-tools)"}, live),
		protocol.StringVar(protocol.OptionSpec{Key: "toolPrefix", Help: "the prefix the target puts before the names of the tools it shows the model (Sim: custom_ for custom tools): the directive asks the mock to call them so, and tool frames must carry them (default: none)"}, &c.toolPrefix),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec {
	return protocol.Specs(vars(&Client{}, new(bool), new(bool)))
}

// Configure returns the client for deployment slug target.
func (d *Dialect) Configure(target string, o protocol.Options) (protocol.Client, error) {
	c := &Client{policy: PolicyForSlug(target), path: DefaultPath}
	thinks, live := ModelThinksForSlug(target), LiveToolsForSlug(target)
	if err := o.Apply(Name, vars(c, &thinks, &live)); err != nil {
		return nil, err
	}
	c.policy.NoModelThinking, c.policy.SettledTools = !thinks, !live
	if c.toolPrefix != "" {
		if err := scenarios.ValidToolPrefix(c.toolPrefix); err != nil {
			return nil, fmt.Errorf("option toolPrefix: %w", err)
		}
	}
	return c, nil
}

// NewClient returns a client with the given settings, for tests and library users.
func NewClient(optedIn bool, policy Policy) *Client {
	return &Client{optedIn: optedIn, policy: policy, path: DefaultPath}
}

// Client is a configured sim-chat client, opted in or legacy. Safe for concurrent use.
type Client struct {
	optedIn    bool
	policy     Policy
	path       string
	toolPrefix string // before every scripted tool name, in the directive and the checker
}

// Label is sim-chat-optedin or sim-chat-legacy.
func (c *Client) Label() string {
	if c.optedIn {
		return Name + "-optedin"
	}
	return Name + "-legacy"
}

// Sees reports whether the client is sent thinking or tool frames: when opted in and the policy
// includes them, never from a provider that runs its tools settled.
func (c *Client) Sees(k protocol.FrameKind) bool {
	live := c.optedIn && !c.policy.SettledTools
	switch k {
	case protocol.FrameThinking:
		return live && c.policy.IncludeThinking && !c.policy.NoModelThinking
	case protocol.FrameToolStart, protocol.FrameToolEnd:
		return live && c.policy.IncludeToolCalls
	case protocol.FrameReset:
		return live
	}
	return true
}

// AnswerSettled is true for a legacy client and a provider that runs its tools settled.
func (c *Client) AnswerSettled() bool { return !c.optedIn || c.policy.SettledTools }

// input is the session's user message, its directive asking for the client's tool prefix.
func (c *Client) input(s *protocol.Session) string {
	if c.toolPrefix == "" {
		return s.Input
	}
	in, _ := scenarios.WithToolPrefix(s.Input, c.toolPrefix)
	return in
}

// RequestBody is the chat request, which the reference runtime decodes too.
type RequestBody struct {
	Input          *string `json:"input"`
	ConversationID string  `json:"conversationId,omitempty"`
}

// DefaultPath is the chat path template ({slug}: the deployment slug, s.Target).
const DefaultPath = "/api/chat/{slug}"

// NewRequest builds POST {baseURL}{path}, with the opt-in header iff the client opted in.
func (c *Client) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	input := c.input(s)
	req, err := protocol.NewStreamPost(ctx, Name, s, baseURL, c.path, RequestBody{Input: &input, ConversationID: s.ID}, "slug", s.Target)
	if err != nil {
		return nil, err
	}
	if c.optedIn {
		req.Header.Set(ProtocolHeader, ProtocolToken)
	}
	return req, nil
}

// CheckHeaders checks the content type and that the protocol header is echoed iff opted in.
func (c *Client) CheckHeaders(h http.Header, _ *protocol.Session) []protocol.Violation {
	out := protocol.CheckEventStream(h)
	echoed := OptedIn(h)
	switch {
	case c.optedIn && !echoed:
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf(
			"client opted in but the response does not echo %s: %s (saw %q)", ProtocolHeader, ProtocolToken, h.Get(ProtocolHeader))})
	case !c.optedIn && echoed:
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf(
			"legacy client (no %s) but the response echoes %q", ProtocolHeader, h.Get(ProtocolHeader))})
	}
	return out
}

// NewChecker returns a checker for one stream of s.
func (c *Client) NewChecker(s *protocol.Session) protocol.Checker {
	ch := NewChecker(s, c.optedIn, c.policy)
	ch.toolPrefix = c.toolPrefix
	return ch
}
