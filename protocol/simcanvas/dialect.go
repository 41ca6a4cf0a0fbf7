// Package simcanvas is the sim-canvas dialect: Sim's execution-events stream
// (POST /api/workflows/{id}/execute), always opted in to agent-events, with every frame wrapped
// in an envelope that carries a per-stream increasing eventId. It holds the frame Writer the
// reference runtime encodes with, the Dialect the load generator drives and the Checker that
// judges a stream by rule ID. The answer model (blocks, chunk_reset, tool lifecycle) is
// simchat.Tracker: the canvas forwards the same event sink as public chat.
package simcanvas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/sse"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Dialect is the sim-canvas client side. It holds no state and is safe for concurrent use.
type Dialect struct{}

// New returns the sim-canvas dialect.
func New() *Dialect { return &Dialect{} }

// Name is the dialect's CLI name.
func (*Dialect) Name() string { return "sim-canvas" }

type requestBody struct {
	Input  string `json:"input"`
	Stream bool   `json:"stream"`
}

// NewRequest builds POST {baseURL}/api/workflows/{Target}/execute with {"input","stream":true}.
func (*Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body, err := json.Marshal(requestBody{Input: s.Input, Stream: true})
	if err != nil {
		return nil, fmt.Errorf("sim-canvas: encode request for session %s: %w", s.ID, err)
	}
	u := strings.TrimSuffix(baseURL, "/") + "/api/workflows/" + url.PathEscape(s.Target) + "/execute"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sim-canvas: request for session %s: %w", s.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// CheckHeaders checks the content type (R-headers).
func (*Dialect) CheckHeaders(h http.Header, _ *protocol.Session) []protocol.Violation {
	if v := simchat.CheckEventStream(h); v != "" {
		return []protocol.Violation{{Rule: protocol.RHeaders, Detail: v}}
	}
	return nil
}

// NewChecker returns a checker for one stream of s.
func (*Dialect) NewChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }

// envelope is the execution-event wrapper.
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
	BlockID string  `json:"blockId"`
	Chunk   *string `json:"chunk"`
	Text    *string `json:"text"`
	Phase   string  `json:"phase"`
	ID      string  `json:"id"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Success *bool   `json:"success"`
	Error   *string `json:"error"`
}

// Checker judges one sim-canvas stream: the envelope (R-framing: shape, increasing eventId,
// one execution), R-converge, R-reset-scope and R-no-thinking-in-answer through the shared
// agent-events tracker, R-tool-lifecycle and R-terminal. Not safe for concurrent use.
type Checker struct {
	s           *protocol.Session
	v           simchat.Violations
	tracker     *simchat.Tracker
	lastEventID int64
	executionID string
	workflowID  string
	frames      int
	terminals   int
	done        bool
	afterDone   int
}

// NewChecker returns a checker for one stream of s. The canvas is always opted in.
func NewChecker(s *protocol.Session) *Checker {
	c := &Checker{s: s}
	c.tracker = simchat.NewTracker(&s.Expected, true, &c.v)
	return c
}

// Observe classifies one event and judges what can be decided now.
func (c *Checker) Observe(ev *sse.Event) protocol.Observation {
	clip := func() string { return simchat.Clip(string(ev.Data), 100) }
	if c.done {
		c.afterDone++
		if c.afterDone == 1 {
			c.v.Add(protocol.RTerminal, "expected nothing after [DONE], saw %s", clip())
		}
		return protocol.Observation{Kind: protocol.FrameOther}
	}
	if ev.Type != "" {
		c.v.Add(protocol.RFraming, "expected frames without an event: line, saw event %q", ev.Type)
	}
	data := bytes.TrimSpace(ev.Data)
	switch string(data) {
	case `[DONE]`:
		return c.onDone()
	case `"[DONE]"`:
		c.v.Add(protocol.RFraming, `expected the raw end marker [DONE], saw the JSON string "[DONE]"`)
		return c.onDone()
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
	if c.terminals > 0 {
		c.v.Add(protocol.RTerminal, "expected only [DONE] after the execution terminal, saw %s", e.Type)
	}
	switch e.Type {
	case TypeChunk:
		if p.Chunk == nil || *p.Chunk == "" {
			c.v.Add(protocol.RFraming, "stream:chunk: expected a non-empty chunk, saw %s", clip())
			return protocol.Observation{Kind: protocol.FrameOther}
		}
		c.tracker.Chunk(p.BlockID, *p.Chunk)
		return protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: len(*p.Chunk)}
	case TypeChunkReset:
		c.tracker.Reset(p.BlockID)
		return protocol.Observation{Kind: protocol.FrameReset}
	case TypeThinking:
		if p.Text == nil {
			c.v.Add(protocol.RFraming, "stream:thinking: expected the thinking in \"text\", saw %s", clip())
			return protocol.Observation{Kind: protocol.FrameOther}
		}
		return protocol.Observation{Kind: protocol.FrameThinking, TextBytes: len(*p.Text)}
	case TypeTool:
		if p.ID == "" || p.Name == "" {
			c.v.Add(protocol.RFraming, "stream:tool: expected id and name, saw %s", clip())
		}
		switch p.Phase {
		case "start":
			c.tracker.ToolStart(p.ID, p.Name)
			return protocol.Observation{Kind: protocol.FrameToolStart}
		case "end":
			c.tracker.ToolEnd(p.ID, p.Name, p.Status)
			return protocol.Observation{Kind: protocol.FrameToolEnd}
		}
		c.v.Add(protocol.RFraming, "stream:tool: expected phase start or end, saw %q", p.Phase)
		return protocol.Observation{Kind: protocol.FrameOther}
	case TypeExecutionStarted, TypeBlockStarted, TypeStreamDone, TypeBlockCompleted:
		return protocol.Observation{Kind: protocol.FrameOther}
	case TypeExecutionCompleted:
		c.onTerminal(e.Type, p.Success != nil && !*p.Success, deref(p.Error))
		return protocol.Observation{Kind: protocol.FrameTerminal}
	case TypeExecutionError:
		c.onTerminal(e.Type, true, deref(p.Error))
		return protocol.Observation{Kind: protocol.FrameTerminal}
	case TypeExecutionCancelled:
		c.onTerminal(e.Type, true, "cancelled")
		return protocol.Observation{Kind: protocol.FrameTerminal}
	}
	c.v.Add(protocol.RFraming, "unknown event type %q in %s", e.Type, clip())
	return protocol.Observation{Kind: protocol.FrameOther}
}

// checkEnvelope enforces the envelope: every field present, one execution per stream and an
// eventId that increases with every frame.
func (c *Checker) checkEnvelope(e *envelope, clip func() string) {
	c.frames++
	if e.Type == "" || e.ExecutionID == "" || e.EventID == nil {
		c.v.Add(protocol.RFraming, "expected type, executionId and eventId in every envelope, saw %s", clip())
	}
	if _, err := time.Parse(time.RFC3339Nano, e.Timestamp); err != nil {
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

func (c *Checker) onTerminal(typ string, failed bool, msg string) {
	c.terminals++
	switch {
	case c.terminals > 1:
		c.v.Add(protocol.RTerminal, "expected exactly one execution terminal, saw a second (%s)", typ)
	case typ == TypeExecutionCancelled && !c.s.Aborted:
		c.v.Add(protocol.RTerminal, "expected %s, saw execution:cancelled though the client did not abort", c.wantTerminal())
	case c.s.Expected.ProviderError != "" && !failed:
		c.v.Add(protocol.RTerminal, "expected execution:error (the provider fails with %s), saw %s", simchat.Clip(c.s.Expected.ProviderError, 60), typ)
	case c.s.Expected.ProviderError == "" && failed:
		c.v.Add(protocol.RTerminal, "expected execution:completed, saw %s %s", typ, simchat.Clip(msg, 80))
	}
}

func (c *Checker) wantTerminal() string {
	if c.s.Expected.ProviderError != "" {
		return TypeExecutionError
	}
	return TypeExecutionCompleted
}

func (c *Checker) onDone() protocol.Observation {
	if c.terminals == 0 {
		c.v.Add(protocol.RTerminal, "expected an execution terminal before [DONE], saw none")
	}
	c.done = true
	return protocol.Observation{Kind: protocol.FrameDone}
}

// Finish judges the end of the stream and returns every violation found.
func (c *Checker) Finish(streamErr error) []protocol.Violation {
	mode := simchat.EndComplete
	switch {
	case c.s.Aborted || streamErr != nil:
		mode = simchat.EndPartial
	case c.s.Expected.ProviderError != "":
		mode = simchat.EndFailed
	}
	if errors.Is(streamErr, sse.ErrLineTooLong) || errors.Is(streamErr, sse.ErrEventTooLarge) {
		c.v.Add(protocol.RFraming, "stream broke: %v", streamErr)
	}
	if mode != simchat.EndPartial {
		if c.terminals == 0 {
			c.v.Add(protocol.RTerminal, "expected %s then [DONE], the stream ended without an execution terminal", c.wantTerminal())
		} else if !c.done {
			c.v.Add(protocol.RTerminal, "expected [DONE] after the execution terminal, the stream ended without it")
		}
	}
	c.tracker.Finish(mode)
	return c.v.List()
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
