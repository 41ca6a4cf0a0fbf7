package scenarios

import (
	"fmt"
	"time"
)

// Reconnect scripts a client that drops its stream and resumes it: after AfterChunks answer
// chunks it closes the connection, waits Delay (on the script's clock: scaled like the mock's
// time) and reconnects with the last event id it saw. The resumed stream is judged with the
// first (docs/PROTOCOLS.md, "The canvas reconnect endpoint").
type Reconnect struct {
	// AfterChunks drops the stream after this many answer chunks (>= 1).
	AfterChunks int `yaml:"afterChunks" json:"afterChunks"`
	// Delay is how long the client stays away; 0 reconnects at once.
	Delay time.Duration `yaml:"delay" json:"delay,omitempty"`
}

// MaxReconnectDelay bounds client.reconnect.delay: a runtime keeps a dropped execution for a
// bounded time only (the reference runtime's ReconnectWindow, 10 s by default).
const MaxReconnectDelay = 5 * time.Second

// validateReconnect checks client.reconnect: a chunk count, a bounded delay, and no abort or
// stop beside it (a session that leaves cannot also come back).
func (c Client) validateReconnect() []*FieldError {
	r := c.Reconnect
	if r == nil {
		return nil
	}
	var errs []*FieldError
	if c.Abort != nil || c.Stop != nil {
		errs = append(errs, &FieldError{Path: "client.reconnect", Problem: "set with abort or stop; expected at most one client action"})
	}
	if r.AfterChunks < 1 {
		errs = append(errs, &FieldError{Path: "client.reconnect.afterChunks", Problem: fmt.Sprintf("%d; expected >= 1 (the drop happens after that many answer chunks)", r.AfterChunks)})
	}
	if r.Delay < 0 || r.Delay > MaxReconnectDelay {
		errs = append(errs, &FieldError{Path: "client.reconnect.delay", Problem: fmt.Sprintf("%v; expected between 0 and %v", r.Delay, MaxReconnectDelay)})
	}
	return errs
}

// String says when the client drops and comes back, e.g. "reconnect after 20 chunks, 5s away".
func (r Reconnect) String() string {
	if r.Delay == 0 {
		return fmt.Sprintf("reconnect after %d chunks, at once", r.AfterChunks)
	}
	return fmt.Sprintf("reconnect after %d chunks, %v away", r.AfterChunks, r.Delay)
}
