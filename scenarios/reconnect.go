package scenarios

import (
	"fmt"
	"time"
)

// Reconnect scripts a client that drops its stream after AfterChunks answer chunks, waits
// Delay (scaled like the mock's time) and resumes with the last event id it saw.
type Reconnect struct {
	AfterChunks int           `yaml:"afterChunks" json:"afterChunks"`
	Delay       time.Duration `yaml:"delay" json:"delay,omitempty"`
}

// MaxReconnectDelay bounds client.reconnect.delay: a runtime keeps a dropped execution for a
// bounded time only.
const MaxReconnectDelay = 5 * time.Second

func (c Client) validateReconnect(errs *fieldErrors) {
	r := c.Reconnect
	if r == nil {
		return
	}
	if c.Abort != nil || c.Stop != nil {
		errs.add("client.reconnect", "set with abort or stop; expected at most one client action")
	}
	if r.AfterChunks < 1 {
		errs.add("client.reconnect.afterChunks", "%d; expected >= 1 (the drop happens after that many answer chunks)", r.AfterChunks)
	}
	if r.Delay < 0 || r.Delay > MaxReconnectDelay {
		errs.add("client.reconnect.delay", "%v; expected between 0 and %v", r.Delay, MaxReconnectDelay)
	}
}

// String says when the client drops and comes back, e.g. "reconnect after 20 chunks, 5s away".
func (r Reconnect) String() string {
	if r.Delay == 0 {
		return fmt.Sprintf("reconnect after %d chunks, at once", r.AfterChunks)
	}
	return fmt.Sprintf("reconnect after %d chunks, %v away", r.AfterChunks, r.Delay)
}
