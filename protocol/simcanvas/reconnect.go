package simcanvas

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

var (
	_ protocol.Reconnector       = (*Client)(nil)
	_ protocol.ReconnectObserver = (*Checker)(nil)
)

// Reconnect: streambench's extension, docs/PROTOCOLS.md "The canvas reconnect endpoint".

// DefaultReconnectPath is the reconnect path template ({execution}: X-Execution-Id's).
const DefaultReconnectPath = "/api/workflows/{workflow}/executions/{execution}/stream"

// HeaderReplayThrough is the reconnect response's header naming the last event id it replays.
const HeaderReplayThrough = "X-Replay-Through"

// NewReconnectRequest builds GET {reconnect path} with Last-Event-ID for resp's execution.
func (c *Client) NewReconnectRequest(ctx context.Context, baseURL string, s *protocol.Session, resp *http.Response, lastEventID string) (*http.Request, error) {
	exec := resp.Header.Get(ExecutionIDHeader)
	if exec == "" {
		return nil, fmt.Errorf("sim-canvas: reconnect for session %s: the execute response has no %s header", s.ID, ExecutionIDHeader)
	}
	path, err := protocol.ExpandPath(c.reconnectPath, "workflow", s.Target, "execution", exec)
	var req *http.Request
	if err == nil {
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, protocol.JoinURL(baseURL, path), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("sim-canvas: reconnect for session %s: %w", s.ID, err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	return req, nil
}

// Redacted makes the checker judge a workflow that redacts PII (redact.go).
func (c *Checker) Redacted() {
	c.redacted = true
	c.generalOnly = true // every frame must pass the redaction check
}

type reconnectState struct {
	// lastEventID is the Last-Event-ID sent, replayThrough X-Replay-Through (else lastEventID).
	lastEventID, replayThrough int64
	maxID                      int64 // the largest event id seen on the resumed stream
	streamDone, blockCompleted int   // those events seen after the drop
	liveReplayed               int
}

// Reconnected starts judging the resumed stream: events up to lastEventID are the client's
// already, live-only frames up to X-Replay-Through a replay of what is never replayed.
func (c *Checker) Reconnected(lastEventID string, h http.Header) {
	last, err := strconv.ParseInt(lastEventID, 10, 64)
	if err != nil {
		last = c.lastEventID
	}
	through := last
	if v := h.Get(HeaderReplayThrough); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= last {
			through = n
		} else {
			c.v.Add(protocol.RHeaders, "%s: expected an event id >= Last-Event-ID %d, saw %q", HeaderReplayThrough, last, v)
		}
	}
	c.reconnect = &reconnectState{lastEventID: last, replayThrough: through}
	c.lastEventID = 0 // ids increase within each connection
	c.generalOnly = true
	c.tokens.Break()
}

// reconnectedFrame reports whether a resumed stream's frame was consumed (duplicate, replay).
func (c *Checker) reconnectedFrame(e *envelope) (protocol.Observation, bool) {
	r := c.reconnect
	if e.EventID == nil {
		return protocol.Observation{}, false
	}
	id := *e.EventID
	r.maxID = max(r.maxID, id)
	if LiveOnly(e.Type) && id <= r.replayThrough {
		r.liveReplayed++
		if r.liveReplayed == 1 {
			c.v.Add(RReconnectLiveOnly, "reconnect after Last-Event-ID %d: expected no live-only frames in the replay (through eventId %d), saw %s eventId %d",
				r.lastEventID, r.replayThrough, e.Type, id)
		}
		return protocol.Observation{Kind: protocol.FrameOther}, true
	}
	if id <= r.lastEventID {
		return protocol.Observation{Kind: protocol.FrameOther}, true // buffered, sent again: allowed
	}
	switch e.Type {
	case TypeStreamDone:
		r.streamDone++
	case TypeBlockCompleted:
		r.blockCompleted++
	}
	return protocol.Observation{}, false
}

// missedTerminalOnReplay reports whether the terminal is missing though nothing live followed
// the replay: the execution ended while the client was away, so the replay owed it.
func (c *Checker) missedTerminalOnReplay() bool {
	r := c.reconnect
	return r != nil && c.terminals == 0 && r.maxID <= r.replayThrough && r.replayThrough > r.lastEventID
}

// finishReconnected judges the replay: every buffered event the client missed arrived.
func (c *Checker) finishReconnected(mode simchat.EndMode) {
	r := c.reconnect
	if mode == simchat.EndPartial {
		return
	}
	var missing []string
	if mode == simchat.EndComplete {
		if r.streamDone == 0 {
			missing = append(missing, TypeStreamDone)
		}
		if r.blockCompleted == 0 {
			missing = append(missing, TypeBlockCompleted)
		}
	}
	if c.missedTerminalOnReplay() {
		missing = append(missing, c.wantTerminal())
	}
	if len(missing) > 0 {
		c.v.Add(RReconnectReplay, "reconnect after Last-Event-ID %d: expected the buffered events through eventId %d replayed, missing %s",
			r.lastEventID, r.replayThrough, strings.Join(missing, ", "))
	}
}
