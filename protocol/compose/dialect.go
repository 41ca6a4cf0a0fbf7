// Package compose is the compose dialect: the Compose agent stream (POST /agent/{id}/stream)
// with OpenAI-style text deltas, typed reasoning, thinking, tool-argument and tool lifecycle
// events, timing marks, a done/stopped/error terminal, a named receipt event and a raw [DONE];
// plus the stop request. It holds the frame Writer the reference runtime encodes with, the
// Dialect (and Stopper) the load generator drives and the Checker that judges a stream.
package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/streambench/streambench/protocol"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Stopper = (*Dialect)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Dialect is the compose client side. It holds no state and is safe for concurrent use.
type Dialect struct{}

// New returns the compose dialect.
func New() *Dialect { return &Dialect{} }

// Name is the dialect's CLI name.
func (*Dialect) Name() string { return "compose" }

type requestBody struct {
	Message  string `json:"message"`
	ThreadID string `json:"threadId,omitempty"`
}

// NewRequest builds POST {baseURL}/agent/{Target}/stream with {"message","threadId"}.
func (*Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body, err := json.Marshal(requestBody{Message: s.Input, ThreadID: s.ID})
	if err != nil {
		return nil, fmt.Errorf("compose: encode request for session %s: %w", s.ID, err)
	}
	u := agentURL(baseURL, s.Target) + "/stream"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("compose: request for session %s: %w", s.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return req, nil
}

// NewStopRequest builds POST {baseURL}/agent/{Target}/runs/{runId}/stop, with the run id the
// stream's response header named.
func (*Dialect) NewStopRequest(ctx context.Context, baseURL string, s *protocol.Session, resp *http.Response) (*http.Request, error) {
	runID := resp.Header.Get(RunIDHeader)
	if runID == "" {
		return nil, fmt.Errorf("compose: stop session %s: the stream response has no %s header", s.ID, RunIDHeader)
	}
	u := agentURL(baseURL, s.Target) + "/runs/" + url.PathEscape(runID) + "/stop"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader("{}"))
	if err != nil {
		return nil, fmt.Errorf("compose: stop request for session %s: %w", s.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

func agentURL(baseURL, agentID string) string {
	return strings.TrimSuffix(baseURL, "/") + "/agent/" + url.PathEscape(agentID)
}

// CheckHeaders checks the content type and the run id header (R-headers).
func (*Dialect) CheckHeaders(h http.Header, _ *protocol.Session) []protocol.Violation {
	var out []protocol.Violation
	ct := h.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "text/event-stream" {
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf("Content-Type: expected text/event-stream, saw %q", ct)})
	}
	if h.Get(RunIDHeader) == "" {
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: "expected an x-compose-run-id response header, saw none"})
	}
	return out
}

// NewChecker returns a checker for one stream of s.
func (*Dialect) NewChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }
