// Package simchat is the sim-chat dialect: Sim's public chat stream (POST /api/chat/{slug}),
// with header-negotiated agent-events framing (live chunks, chunk_reset, gated thinking and
// tool lifecycle frames). It holds the frame Writer the reference runtime encodes with, and the
// client side the load generator drives: the Dialect (requests and header checks) and the
// Checker that judges a live stream against the scenario's ground truth by rule ID.
//
// The Tracker type is the agent-events answer model (blocks, chunk_reset, tool lifecycle) that
// sim-canvas shares, since the canvas forwards the same event sink with a different envelope.
package simchat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"

	"github.com/streambench/streambench/protocol"
)

var (
	_ protocol.Dialect = (*Dialect)(nil)
	_ protocol.Checker = (*Checker)(nil)
)

// Dialect is the sim-chat client side. It holds no state and is safe for concurrent use.
type Dialect struct{}

// New returns the sim-chat dialect.
func New() *Dialect { return &Dialect{} }

// Name is the dialect's CLI name.
func (*Dialect) Name() string { return "sim-chat" }

// requestBody is the chat request; conversationId ties the session's requests together.
type requestBody struct {
	Input          string `json:"input"`
	ConversationID string `json:"conversationId,omitempty"`
}

// DefaultPath is the chat path template; its placeholder {slug} is the deployment slug
// (s.Target).
const DefaultPath = "/api/chat/{slug}"

// NewRequest builds POST {baseURL}{s.Path, default /api/chat/{slug}}, sending the opt-in
// header iff s.OptedIn.
func (*Dialect) NewRequest(ctx context.Context, baseURL string, s *protocol.Session) (*http.Request, error) {
	body, err := json.Marshal(requestBody{Input: s.Input, ConversationID: s.ID})
	if err != nil {
		return nil, fmt.Errorf("sim-chat: encode request for session %s: %w", s.ID, err)
	}
	tmpl := s.Path
	if tmpl == "" {
		tmpl = DefaultPath
	}
	path, err := protocol.ExpandPath(tmpl, "slug", s.Target)
	if err != nil {
		return nil, fmt.Errorf("sim-chat: request for session %s: %w", s.ID, err)
	}
	u := protocol.JoinURL(baseURL, path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("sim-chat: request for session %s: %w", s.ID, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if s.OptedIn {
		req.Header.Set(ProtocolHeader, ProtocolToken)
	}
	return req, nil
}

// CheckHeaders checks the content type and that the protocol header is echoed iff the client
// opted in (R-headers).
func (*Dialect) CheckHeaders(h http.Header, s *protocol.Session) []protocol.Violation {
	var out []protocol.Violation
	if v := CheckEventStream(h); v != "" {
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: v})
	}
	echoed := OptedIn(h)
	switch {
	case s.OptedIn && !echoed:
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf(
			"client opted in but the response does not echo %s: %s (saw %q)", ProtocolHeader, ProtocolToken, h.Get(ProtocolHeader))})
	case !s.OptedIn && echoed:
		out = append(out, protocol.Violation{Rule: protocol.RHeaders, Detail: fmt.Sprintf(
			"legacy client (no %s) but the response echoes %q", ProtocolHeader, h.Get(ProtocolHeader))})
	}
	return out
}

// CheckEventStream returns "" when h declares Content-Type text/event-stream (parameters such
// as charset allowed), else what was wrong. Shared by the Sim dialects.
func CheckEventStream(h http.Header) string {
	ct := h.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "text/event-stream" {
		return fmt.Sprintf("Content-Type: expected text/event-stream, saw %q", ct)
	}
	return ""
}

// NewChecker returns a checker for one stream of s.
func (*Dialect) NewChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }
