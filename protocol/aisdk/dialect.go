// Package aisdk is the ai-sdk dialect: the Vercel AI SDK UI message stream (ai v5 and later,
// pinned from ai 7.0.173) a streamText chat route sends to useChat: the request useChat POSTs
// and the Checker. The route runs the tool loop itself, so one request carries every scripted
// turn as a step. See docs/PROTOCOLS.md, "ai-sdk".
package aisdk

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Name is the dialect's CLI name.
const Name = "ai-sdk"

// DefaultPath is where useChat's default transport POSTs (DefaultChatTransport's api).
const DefaultPath = "/api/chat"

// StreamHeader marks a UI message stream, StreamVersion its value (UI_MESSAGE_STREAM_HEADERS).
const (
	StreamHeader  = "X-Vercel-Ai-Ui-Message-Stream"
	StreamVersion = "v1"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Client  = (*Dialect)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Options configure the dialect. The zero value judges a route at /api/chat, reasoning included.
type Options struct {
	// Path is the chat route's path on the target (DefaultPath when empty).
	Path string
	// NoGroundTruth judges structure only: the route's model is not the mock.
	NoGroundTruth bool
	// NoReasoning says the route forwards no reasoning (sendReasoning: false, or an adapter
	// dropping it): reasoning text is then R-aisdk-text.
	NoReasoning bool
}

// Dialect is the ai-sdk client side. It holds only its options and is safe for concurrent use.
type Dialect struct {
	protocol.Base
	opts Options
}

// New returns the ai-sdk dialect with opts.
func New(opts Options) *Dialect {
	opts.Path = cmp.Or(opts.Path, DefaultPath)
	return &Dialect{Base: Name, opts: opts}
}

func vars(opts *Options) []protocol.OptionVar {
	return []protocol.OptionVar{
		protocol.StringVar(protocol.OptionSpec{Key: "path", Help: "the chat route's path on the target", Default: DefaultPath}, &opts.Path),
		protocol.BoolVar(protocol.OptionSpec{Key: "noReasoning", Help: "the route forwards no reasoning (sendReasoning: false, or @ai-sdk/openai's chat model): the ground truth has none"}, &opts.NoReasoning),
		protocol.NoGroundTruthVar("the route's", &opts.NoGroundTruth),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec { return protocol.Specs(vars(&Options{})) }

// Configure returns the dialect with a profile's options applied.
func (d *Dialect) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	opts := d.opts
	if err := o.Apply(Name, vars(&opts)); err != nil {
		return nil, err
	}
	return New(opts), nil
}

// Sees reports whether the route sends frames of kind k: no reasoning with NoReasoning.
func (d *Dialect) Sees(k protocol.FrameKind) bool {
	return k != protocol.FrameThinking || !d.opts.NoReasoning
}

// NewRequest builds what useChat's default transport sends first, the chat id the session's.
func (d *Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body := make([]byte, 0, 128+len(s.Input)+2*len(s.ID))
	body = jsonwire.AppendField(body, `{"id":`, s.ID)
	body = jsonwire.AppendField(body, `,"messages":[{"id":`, "msg-"+s.ID)
	body = jsonwire.AppendField(body, `,"role":"user","parts":[{"type":"text","text":`, s.Input)
	body = append(body, `}]}],"trigger":"submit-message"}`...)
	u := protocol.JoinURL(baseURL, d.opts.Path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("ai-sdk: request for session %s: %w", s.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// CheckHeaders checks the content type and the UI message stream marker (R-headers).
func (*Dialect) CheckHeaders(h http.Header, _ *protocol.Session) []protocol.Violation {
	out := protocol.CheckEventStream(h)
	if v := h.Values(StreamHeader); len(v) != 1 || strings.TrimSpace(v[0]) != StreamVersion {
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf("%s: expected %q, saw %q", strings.ToLower(StreamHeader), StreamVersion, v)})
	}
	return out
}

// StructureOnly reports the noGroundTruth option (protocol.StructureOnly).
func (d *Dialect) StructureOnly() bool { return d.opts.NoGroundTruth }

// NewChecker returns a fresh checker for one stream of s.
func (d *Dialect) NewChecker(s *protocol.Session) protocol.Checker {
	opts := d.opts
	opts.NoGroundTruth = opts.NoGroundTruth || s.NoGroundTruth
	return NewChecker(s, opts)
}
