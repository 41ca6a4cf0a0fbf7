package protocol

import (
	"context"
	"net/http"
)

// Reconnector is implemented by clients whose streams can be resumed after a drop (sim-canvas):
// the load generator plays a scenario's client.reconnect with it. It drops the first stream,
// then sends this request and reads the resumed stream into the same Checker.
type Reconnector interface {
	// NewReconnectRequest builds the request that resumes the stream whose first response was
	// resp, after the last event id the client saw (the SSE Last-Event-ID).
	NewReconnectRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response, lastEventID string) (*http.Request, error)
}

// ReconnectObserver is implemented by checkers of Reconnector clients: the generator calls
// Reconnected once, when the resumed stream's response head arrived and before any of its
// frames is observed, with the Last-Event-ID it sent and the response's headers.
type ReconnectObserver interface {
	Reconnected(lastEventID string, h http.Header)
}
