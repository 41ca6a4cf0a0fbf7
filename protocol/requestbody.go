package protocol

import (
	"io"
	"net/http"
	"time"
)

// ReadRequestBody reads a server's request body whole within maxBytes and timeout (<= 0: none),
// for the mock's and the runtime's handlers. A good read clears the deadline, so it never bounds
// the stream; after a failed one it stays, so net/http's discard of the unread rest fails at
// once, and the connection is closed.
func ReadRequestBody(w http.ResponseWriter, r *http.Request, maxBytes int64, timeout time.Duration) ([]byte, error) {
	limited := http.MaxBytesReader(w, r.Body, maxBytes)
	if timeout <= 0 {
		return io.ReadAll(limited)
	}
	rc := http.NewResponseController(w)
	deadlineSet := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, err := io.ReadAll(limited)
	if err != nil {
		w.Header().Set("Connection", "close")
	} else if deadlineSet {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, err
}
