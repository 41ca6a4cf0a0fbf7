// Package simcanvas is the sim-canvas dialect: Sim's execution-events stream
// (POST /api/workflows/{id}/execute), always opted in to agent-events, every frame in an
// envelope with a per-stream increasing eventId: the frame Writer, the Dialect and the Checker
// (its answer model simchat.Tracker: the canvas forwards the same event sink as public chat).
package simcanvas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Client  = (*Client)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Name is the dialect's CLI and mix name.
const Name = "sim-canvas"

// Dialect is the sim-canvas client side: its options configure a Client. Safe for concurrent use.
type Dialect struct{ protocol.Base }

// New returns the sim-canvas dialect.
func New() *Dialect { return &Dialect{Name} }

// vars binds the options Configure accepts to c's settings (thinks: modelThinking).
func vars(c *Client, thinks *bool) []protocol.OptionVar {
	return []protocol.OptionVar{
		protocol.PathVar(protocol.OptionSpec{Key: "path", Help: "the execute path template, placeholder {workflow}", Default: DefaultPath, Placeholders: []string{"workflow"}}, &c.path),
		protocol.BoolVar(protocol.OptionSpec{Key: "redacted", Help: "the workflow redacts PII in its block output (no live stream frames; default: true for a workflow id ending in -redacted)"}, &c.redacted),
		protocol.PathVar(protocol.OptionSpec{Key: "reconnectPath", Help: "the reconnect path template, placeholders {workflow} and {execution}",
			Default: DefaultReconnectPath, Placeholders: []string{"workflow", "execution"}}, &c.reconnectPath),
		protocol.BoolVar(protocol.OptionSpec{Key: "modelThinking", Help: "whether the workflow's model can think at all (default: false for an id with a \"nothink\" part, else true); without it no stream:thinking may flow (R-thinking-capability)"}, thinks),
		protocol.PathVar(protocol.OptionSpec{Key: "cancelPath", Help: "the user cancel path template, placeholders {workflow} and {execution}",
			Default: DefaultCancelPath, Placeholders: []string{"workflow", "execution"}}, &c.cancelPath),
	}
}

// Options lists the options Configure accepts.
func (*Dialect) Options() []protocol.OptionSpec { return protocol.Specs(vars(&Client{}, new(bool))) }

// Configure returns the client for workflow id target.
func (d *Dialect) Configure(target string, o protocol.Options) (protocol.Client, error) {
	c := &Client{Base: Name, path: DefaultPath, reconnectPath: DefaultReconnectPath, cancelPath: DefaultCancelPath}
	c.redacted = strings.HasSuffix(target, "-redacted")
	thinks := simchat.ModelThinksForSlug(target)
	if err := o.Apply(Name, vars(c, &thinks)); err != nil {
		return nil, err
	}
	c.noModelThinking = !thinks
	return c, nil
}

// Client is a configured sim-canvas client, always opted in. Safe for concurrent use.
type Client struct {
	protocol.Base
	path, reconnectPath, cancelPath string
	redacted                        bool // the workflow redacts PII: no live frames (redact.go)
	noModelThinking                 bool
}

// Label is the dialect's name, with "-redacted" for a workflow redacting PII (apart latencies).
func (c *Client) Label() string {
	if c.redacted {
		return Name + "-redacted"
	}
	return Name
}

// Sees is false for a redacting workflow's live frames and a thinkless model's thinking.
func (c *Client) Sees(k protocol.FrameKind) bool {
	if c.redacted {
		switch k {
		case protocol.FrameAnswer, protocol.FrameReset, protocol.FrameThinking, protocol.FrameToolStart, protocol.FrameToolEnd:
			return false
		}
	}
	return k != protocol.FrameThinking || !c.noModelThinking
}

// AnswerSettled is true for a workflow that redacts PII: its answer comes with block:completed.
func (c *Client) AnswerSettled() bool { return c.redacted }

// RequestBody is the workflow execute request. The reference runtime decodes the same type.
type RequestBody struct {
	Input  *string `json:"input"`
	Stream bool    `json:"stream"`
	// Resumable asks the runtime to keep the execution for a reconnect (reconnect.go).
	Resumable bool `json:"resumable,omitempty"`
}

// DefaultPath is the execute path template ({workflow}: the workflow id, s.Target).
const DefaultPath = "/api/workflows/{workflow}/execute"

// NewRequest builds POST {baseURL}{path} with {"input","stream":true}.
func (c *Client) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body := RequestBody{Input: &s.Input, Stream: true, Resumable: s.Expected.Client.Reconnect != nil}
	return protocol.NewStreamPost(ctx, Name, s, baseURL, c.path, body, "workflow", s.Target)
}

// NewChecker returns a checker for one stream of s.
func (c *Client) NewChecker(s *protocol.Session) protocol.Checker {
	ch := NewChecker(s)
	if c.redacted {
		ch.Redacted()
	}
	ch.noModelThinking = c.noModelThinking
	return ch
}

type envelope struct {
	Type        string          `json:"type"`
	Timestamp   string          `json:"timestamp"`
	ExecutionID string          `json:"executionId"`
	WorkflowID  string          `json:"workflowId"`
	EventID     *int64          `json:"eventId"`
	Data        json.RawMessage `json:"data"`
}

// payload is every field an event's data may carry.
type payload struct {
	BlockID string          `json:"blockId"`
	Chunk   *string         `json:"chunk"`
	Text    *string         `json:"text"`
	Phase   string          `json:"phase"`
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Status  string          `json:"status"` // a tool's, or a paused execution's
	Success *bool           `json:"success"`
	Error   *string         `json:"error"`
	Output  json.RawMessage `json:"output"`
}

// Checker judges one sim-canvas stream: the envelope, the answer (the shared tracker), tools,
// the terminal and the seed rules. Not safe for concurrent use.
type Checker struct {
	s           *protocol.Session
	v           protocol.Violations
	tracker     *simchat.Tracker
	lastEventID int64
	// lastSecond is the last parsed timestamp's second: later ones in it need only a suffix check.
	lastSecond  string
	executionID string
	workflowID  string
	frames      int
	terminals   int
	cancelled   bool // the terminal was execution:cancelled
	unscripted  bool // a failure terminal the script does not call for: judged partial
	completedOK bool // the terminal was execution:completed, successful and not paused
	generalOnly bool // no fast path: tests comparing it, redacted and resumed streams
	end         protocol.DoneMarker
	tokens      scenarios.TokenCounter
	redacted    bool // the workflow redacts PII (redact.go)
	redact      redactState
	reconnect   *reconnectState // the stream was resumed after a drop (reconnect.go)
	// The seed rules' state (seeds.go).
	noModelThinking bool
	thinkingUnits   int // stream:thinking text seen, in UTF-16 code units
	stopSent        bool
	timeoutAsCancel bool
}

// NewChecker returns a checker for one stream of s. The canvas is always opted in.
func NewChecker(s *protocol.Session) *Checker {
	c := &Checker{s: s}
	exp := &s.Expected
	if s.NoGroundTruth {
		exp = nil // structure only
	}
	c.tracker = simchat.NewTracker(exp, true, &c.v)
	return c
}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	clip := func() string { return protocol.Quote(string(ev.Data), 100) }
	if c.end.After(&c.v, ev.Data, 100) {
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	data := protocol.DataOnly(&c.v, ev)
	if c.end.Is(&c.v, data) {
		return c.onDone()
	}
	if f, ok := plainChunk(data); ok && !c.generalOnly && c.frames > 0 && c.terminals == 0 && f.eventID > c.lastEventID &&
		string(f.executionID) == c.executionID && string(f.workflowID) == c.workflowID && c.validTimestamp(f.timestamp) {
		c.frames++
		c.lastEventID = f.eventID
		c.tracker.ChunkBytes(f.blockID, f.chunk)
		return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(f.chunk), Tokens: c.tokens.TextBytes(f.chunk)}
	}
	var e envelope
	if err := json.Unmarshal(data, &e); err != nil || len(data) == 0 || data[0] != '{' {
		c.v.Add(protocol.RFraming, "expected an execution-event envelope, saw %s", clip())
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	c.checkEnvelope(&e, clip)
	var p payload
	if len(e.Data) > 0 && e.Data[0] == '{' {
		if err := json.Unmarshal(e.Data, &p); err != nil {
			c.v.Add(protocol.RFraming, "%s: expected an object in data, saw %s", e.Type, clip())
		}
	} else {
		c.v.Add(protocol.RFraming, "%s: expected an object in data, saw %s", e.Type, clip())
	}
	if c.reconnect != nil {
		if obs, consumed := c.reconnectedFrame(&e); consumed {
			return obs
		}
	}
	if c.terminals > 0 {
		c.v.Add(protocol.RTerminal, "expected only [DONE] after the execution terminal, saw %s", e.Type)
		switch e.Type {
		case TypeExecutionCompleted, TypeExecutionError, TypeExecutionCancelled:
			// A second terminal: onTerminal says so.
		default:
			return protocol.Observation{Kind: protocol.FrameOther} // R-terminal's finding alone
		}
	}
	if c.redacted {
		if obs, consumed := c.redactedFrame(e.Type, &p); consumed {
			return obs
		}
	}
	return c.onEvent(e.Type, &p, clip)
}

// onEvent judges an envelope's payload p by the event type typ; clip quotes the frame.
func (c *Checker) onEvent(typ string, p *payload, clip func() string) protocol.Observation {
	switch typ {
	case TypeChunk:
		return c.onChunk(p, clip)
	case TypeChunkReset:
		if c.reconnect == nil {
			c.tracker.Reset(p.BlockID)
		}
		c.tokens.Break()
		return protocol.Observation{Kind: protocol.FrameReset}
	case TypeThinking:
		if p.Text == nil {
			c.v.Add(protocol.RFraming, "stream:thinking: expected the thinking in \"text\", saw %s", clip())
			return protocol.Observation{Kind: protocol.FrameOther}
		}
		c.thinkingSeeds(*p.Text)
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(*p.Text), Tokens: c.tokens.Thinking(*p.Text)}
	case TypeTool:
		return c.onTool(p, clip)
	case TypeBlockCompleted:
		c.completedSeeds(p, false)
		return protocol.Observation{Kind: protocol.FrameOther}
	case TypeExecutionStarted, TypeBlockStarted, TypeStreamDone:
		return protocol.Observation{Kind: protocol.FrameOther}
	case TypeExecutionCompleted:
		c.completedSeeds(p, true)
		failed := p.Success != nil && !*p.Success
		c.completedOK = c.terminals == 0 && !failed && p.Status != simchat.StatusPaused
		c.onTerminal(typ, failed, jsonwire.Deref(p.Error))
		if failed {
			return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(jsonwire.Deref(p.Error))}
		}
		return protocol.Observation{Kind: protocol.FrameTerminal}
	case TypeExecutionError:
		c.onTerminal(typ, true, jsonwire.Deref(p.Error))
		return protocol.Observation{Kind: protocol.FrameTerminal, Error: protocol.ErrorText(jsonwire.Deref(p.Error))}
	case TypeExecutionCancelled:
		c.onTerminal(typ, true, "cancelled")
		return protocol.Observation{Kind: protocol.FrameTerminal}
	}
	c.v.Add(protocol.RFraming, "unknown event type %q in %s", typ, clip())
	return protocol.Observation{Kind: protocol.FrameOther}
}

// onChunk judges a stream:chunk the fast path did not take.
func (c *Checker) onChunk(p *payload, clip func() string) protocol.Observation {
	if p.Chunk == nil {
		c.v.Add(protocol.RFraming, "stream:chunk: expected a chunk string, saw %s", clip())
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if *p.Chunk == "" { // allowed on the canvas (docs/PROTOCOLS.md, "Variants real runtimes send")
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if c.reconnect == nil {
		c.tracker.Chunk(p.BlockID, *p.Chunk)
	}
	return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(*p.Chunk), Tokens: c.tokens.Text(*p.Chunk)}
}

func (c *Checker) onTool(p *payload, clip func() string) protocol.Observation {
	if p.ID == "" || p.Name == "" {
		c.v.Add(protocol.RFraming, "stream:tool: expected id and name, saw %s", clip())
	}
	c.tokens.Break()
	if kind := c.tracker.Tool(p.Phase, p.ID, p.Name, p.Status, c.reconnect == nil); kind != protocol.FrameOther {
		return protocol.Observation{Kind: kind}
	}
	c.v.Add(protocol.RFraming, "stream:tool: expected phase start or end, saw %q", p.Phase)
	return protocol.Observation{Kind: protocol.FrameOther}
}

// checkEnvelope enforces the envelope: every field, one execution, an increasing eventId.
func (c *Checker) checkEnvelope(e *envelope, clip func() string) {
	c.frames++
	if e.Type == "" || e.ExecutionID == "" || e.EventID == nil {
		c.v.Add(protocol.RFraming, "expected type, executionId and eventId in every envelope, saw %s", clip())
	}
	if !c.validTimestamp([]byte(e.Timestamp)) {
		c.v.Add(protocol.RFraming, "expected an RFC 3339 timestamp, saw %q in %s", e.Timestamp, clip())
	}
	if c.frames == 1 {
		c.executionID, c.workflowID = e.ExecutionID, e.WorkflowID
	} else if e.ExecutionID != c.executionID || e.WorkflowID != c.workflowID {
		c.v.Add(protocol.RFraming, "expected one execution per stream (%s/%s), saw %s/%s", c.workflowID, c.executionID, e.WorkflowID, e.ExecutionID)
	}
	if e.EventID != nil {
		if c.frames > 1 && *e.EventID <= c.lastEventID {
			c.v.Add(protocol.RFraming, "expected eventId to increase, saw %d after %d", *e.EventID, c.lastEventID)
		}
		c.lastEventID = *e.EventID
	}
}

// onTerminal judges an execution terminal: exactly one, execution:error where the script fails
// (an unscripted failure is the session's outcome: judged partial).
func (c *Checker) onTerminal(typ string, failed bool, msg string) {
	c.terminals++
	switch {
	case c.terminals > 1:
		c.v.Add(protocol.RTerminal, "expected exactly one execution terminal, saw a second (%s)", typ)
	case c.terminalSeeds(typ, msg):
	case typ == TypeExecutionCancelled:
		// Judged in Finish: the client sets Aborted only when the stream is over.
		c.cancelled = true
	case c.s.ScriptedError() && !failed:
		c.v.Add(protocol.RTerminal, "expected execution:error (the provider fails with %s), saw %s", protocol.Quote(c.s.Expected.ProviderError, 60), typ)
	case !c.s.ScriptedError() && failed:
		c.unscripted = true
	}
}

func (c *Checker) wantTerminal() string {
	if c.s.ScriptedError() {
		return TypeExecutionError
	}
	return TypeExecutionCompleted
}

func (c *Checker) onDone() protocol.Observation {
	if c.terminals == 0 && c.reconnect == nil { // after a reconnect, Finish says which rule
		c.v.Add(protocol.RTerminal, "expected an execution terminal before [DONE], saw none")
	}
	c.end.Done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	mode := simchat.EndComplete
	switch {
	case errors.Is(streamErr, protocol.ErrTruncated) && c.missedTerminalOnReplay() && !c.s.Aborted && !c.unscripted:
		// The reconnect did not replay the terminal: R-reconnect-replay's, judged as a clean end.
	case c.s.Aborted || streamErr != nil || c.unscripted:
		mode = simchat.EndPartial
	case c.s.ScriptedError():
		mode = simchat.EndFailed
	}
	if mode != simchat.EndPartial && !c.missedTerminalOnReplay() {
		if c.terminals == 0 {
			c.v.Add(protocol.RTerminal, "expected %s then [DONE], the stream ended without an execution terminal", c.wantTerminal())
		} else if !c.end.Done {
			c.v.Add(protocol.RTerminal, "expected [DONE] after the execution terminal, the stream ended without it")
		}
	}
	if c.cancelled && !c.s.Aborted && !c.timeoutAsCancel {
		c.v.Add(protocol.RTerminal, "expected %s, saw execution:cancelled though the client did not abort", c.wantTerminal())
	}
	switch {
	case c.redacted:
		c.finishRedacted(mode) // no live frames: the tracker has nothing to judge
	case c.reconnect != nil:
		c.tracker.Finish(simchat.EndPartial) // it followed the stream up to the drop
		c.finishReconnected(mode)
	default:
		c.tracker.Finish(mode)
	}
	return c.v.List()
}

// validTimestamp reports whether ts is an RFC 3339 timestamp; one in the same second as the
// last parsed, with a UTC fraction suffix, is not parsed again (it allocates).
func (c *Checker) validTimestamp(ts []byte) bool {
	const second = len("2006-01-02T15:04:05")
	if len(ts) > second && c.lastSecond != "" && string(ts[:second]) == c.lastSecond && zuluFraction(ts[second:]) {
		return true
	}
	if _, err := time.Parse(time.RFC3339Nano, string(ts)); err != nil {
		return false
	}
	if len(ts) >= second {
		c.lastSecond = string(ts[:second])
	}
	return true
}

// zuluFraction matches "Z" or "." followed by 1 to 9 digits and "Z".
func zuluFraction(b []byte) bool {
	if len(b) == 1 {
		return b[0] == 'Z'
	}
	if len(b) < 3 || len(b) > 11 || b[0] != '.' || b[len(b)-1] != 'Z' {
		return false
	}
	for _, d := range b[1 : len(b)-1] {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// chunkFrame is a stream:chunk envelope read by plainChunk; the slices alias the event data.
type chunkFrame struct {
	timestamp, executionID, workflowID, blockID, chunk []byte
	eventID                                            int64
}

// plainChunk recognizes a stream:chunk frame exactly as the Writer encodes it, with plain
// strings, without decoding JSON: nearly every frame, and the checker's per-event cost is the
// load generator's. Anything else takes the general path.
func plainChunk(data []byte) (f chunkFrame, ok bool) {
	rest := data
	for _, field := range [...]struct {
		dst    *[]byte
		prefix string
	}{
		{&f.timestamp, `{"type":"stream:chunk","timestamp":"`},
		{&f.executionID, `","executionId":"`},
		{&f.workflowID, `","workflowId":"`},
	} {
		if *field.dst, rest, ok = jsonwire.CutPlainAfter(rest, field.prefix); !ok {
			return f, false
		}
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`","eventId":`)); ok {
		f.eventID, rest, ok = jsonwire.CutUint(rest, 18)
	}
	if ok {
		f.blockID, rest, ok = jsonwire.CutPlainAfter(rest, `,"data":{"blockId":"`)
	}
	if ok {
		f.chunk, rest, ok = jsonwire.CutPlainAfter(rest, `","chunk":"`)
	}
	return f, ok && len(f.chunk) > 0 && string(rest) == `"}}`
}
