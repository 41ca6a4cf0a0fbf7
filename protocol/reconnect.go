package protocol

import (
	"context"
	"net/http"
)

// Reconnector is implemented by clients whose streams can be resumed after a drop (sim-canvas):
// for a scenario's client.reconnect the generator drops the stream, sends this request and
// reads the resumed stream into the same Checker.
type Reconnector interface {
	// NewReconnectRequest builds the request resuming resp's stream after lastEventID.
	NewReconnectRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response, lastEventID string) (*http.Request, error)
}

// ReconnectObserver is implemented by checkers of Reconnector clients: Reconnected is called
// once the resumed stream's head arrived, before its frames, with the Last-Event-ID sent.
type ReconnectObserver interface {
	Reconnected(lastEventID string, h http.Header)
}
