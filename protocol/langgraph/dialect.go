// Package langgraph is the langgraph dialect: the LangGraph Agent Server's run stream
// (POST /runs/stream, or /threads/{thread_id}/runs/stream) with stream_mode messages-tuple,
// values and updates: the request a LangGraph SDK client sends, the stream's Writer and the
// Checker. The graph is expected to be a ReAct agent over a messages state, so one run carries
// every scripted turn. See docs/PROTOCOLS.md, "langgraph".
package langgraph

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol"
)

// Name is the dialect's CLI name.
const Name = "langgraph"

// Default paths of the two run stream routes.
const (
	StatelessPath = "/runs/stream"
	ThreadPath    = "/threads/{thread}/runs/stream"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Client  = (*Dialect)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Options configure the dialect. The zero value runs stateless runs, cancelled when the
// client leaves, judged against the script.
type Options struct {
	// Path is the run stream route: StatelessPath or a template with {thread} (one per session).
	Path string
	// OnDisconnect is the request's on_disconnect (default cancel), which R-abort follows.
	OnDisconnect string
	// NoGroundTruth judges structure only: the graph's model is not the mock.
	NoGroundTruth bool
}

// Dialect is the langgraph client side. Safe for concurrent use.
type Dialect struct {
	protocol.Base
	opts Options
}

// New returns the langgraph dialect with opts; an empty OnDisconnect is cancel.
func New(opts Options) *Dialect {
	opts.Path = cmp.Or(opts.Path, StatelessPath)
	opts.OnDisconnect = cmp.Or(opts.OnDisconnect, OnDisconnectCancel)
	return &Dialect{Base: Name, opts: opts}
}

func vars(opts *Options) []protocol.OptionVar {
	return []protocol.OptionVar{
		protocol.PathVar(protocol.OptionSpec{Key: "path", Help: "the run stream route: " + StatelessPath + " or a thread route such as " + ThreadPath + " ({thread}: a new thread per session)",
			Default: StatelessPath, Placeholders: []string{"thread"}}, &opts.Path),
		protocol.StringVar(protocol.OptionSpec{Key: "onDisconnect", Help: "on_disconnect sent with each run: cancel or continue; R-abort follows it", Default: OnDisconnectCancel}, &opts.OnDisconnect),
		protocol.NoGroundTruthVar("the graph's", &opts.NoGroundTruth),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec { return protocol.Specs(vars(&Options{})) }

// Configure returns the dialect with a profile's options applied (the target is the
// assistant_id).
func (d *Dialect) Configure(_ string, o protocol.Options) (protocol.Client, error) {
	opts := d.opts
	if err := o.Apply(Name, vars(&opts)); err != nil {
		return nil, err
	}
	if opts.OnDisconnect != OnDisconnectCancel && opts.OnDisconnect != OnDisconnectContinue {
		return nil, fmt.Errorf("%s: option onDisconnect: %q, want cancel or continue", Name, opts.OnDisconnect)
	}
	return New(opts), nil
}

// Label is langgraph, or langgraph-continue when runs go on after the client leaves.
func (d *Dialect) Label() string {
	if d.opts.OnDisconnect == OnDisconnectContinue {
		return Name + "-continue"
	}
	return Name
}

// Sees reports whether the server sends frames of kind k: no reasoning (a ReAct graph drops it).
func (*Dialect) Sees(k protocol.FrameKind) bool { return k != protocol.FrameThinking }

// ContinuesOnDisconnect reports whether the runs go on when the client leaves.
func (d *Dialect) ContinuesOnDisconnect() bool { return d.opts.OnDisconnect == OnDisconnectContinue }

// RunRequest is the body of a run stream request (the fields the dialect sends).
type RunRequest struct {
	AssistantID  string   `json:"assistant_id"`
	Input        *Input   `json:"input,omitempty"`
	StreamMode   []string `json:"stream_mode,omitempty"`
	OnDisconnect string   `json:"on_disconnect,omitempty"`
	// IfNotExists is "create" on a thread route: the thread is made for the run.
	IfNotExists string `json:"if_not_exists,omitempty"`
	// MultitaskStrategy is what the server does with a run on a busy thread (reject: 409).
	MultitaskStrategy string `json:"multitask_strategy,omitempty"`
}

// Input is a ReAct graph's input: messages appended to the state.
type Input struct {
	Messages []InputMessage `json:"messages"`
}

// InputMessage is a message of the input, in the role/content form LangChain coerces.
type InputMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// StreamModes are the modes the dialect requests, in the order it lists them.
var StreamModes = []string{ModeMessagesTuple, ModeValues, ModeUpdates}

// NewRequest builds what a LangGraph SDK client's runs.stream sends: the input as one user
// message, the stream modes, on_disconnect, and on a thread route a thread made with the run.
func (d *Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body := RunRequest{
		AssistantID:  s.Target,
		Input:        &Input{Messages: []InputMessage{{Role: "user", Content: s.Input}}},
		StreamMode:   StreamModes,
		OnDisconnect: d.opts.OnDisconnect,
	}
	if strings.Contains(d.opts.Path, "{thread}") {
		body.IfNotExists = "create"
		body.MultitaskStrategy = "reject"
	}
	return protocol.NewStreamPost(ctx, Name, s, baseURL, d.opts.Path, &body, "thread", ThreadID(s.ID))
}

// ThreadID returns a UUID-shaped thread id derived from a session id (stable, distinct).
func ThreadID(session string) string {
	var h [16]byte
	// FNV-1a over the id, spread over 16 bytes: stable and dependency-free.
	var x uint64 = 14695981039346656037
	for i := 0; i < 16; i++ {
		for _, c := range []byte(session) {
			x ^= uint64(c)
			x *= 1099511628211
		}
		x ^= uint64(i)
		x *= 1099511628211
		h[i] = byte(x >> 56)
	}
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// StructureOnly reports the noGroundTruth option (protocol.StructureOnly).
func (d *Dialect) StructureOnly() bool { return d.opts.NoGroundTruth }

// NewChecker returns a fresh checker for one stream of s.
func (d *Dialect) NewChecker(s *protocol.Session) protocol.Checker {
	return NewChecker(s, d.opts.NoGroundTruth || s.NoGroundTruth)
}
