package mockprovider

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Capacity models a provider with finite serving capacity; the zero value is unlimited.
type Capacity struct {
	MaxConcurrent int           // how many requests play at once (0: unlimited).
	QueueSize     int           // how many may wait for a slot; one more gets 429 at once.
	QueueTimeout  time.Duration // the longest wait in the queue before a 429 (0: none).
	// SlowdownPerStream stretches every scripted delay by (1 + SlowdownPerStream·active), active
	// the requests playing at that moment, this one included.
	SlowdownPerStream float64
}

func (c Capacity) validate() error {
	switch {
	case c.MaxConcurrent < 0:
		return fmt.Errorf("capacity: MaxConcurrent must be >= 0, got %d", c.MaxConcurrent)
	case c.QueueSize < 0:
		return fmt.Errorf("capacity: QueueSize must be >= 0, got %d", c.QueueSize)
	case c.QueueTimeout < 0:
		return fmt.Errorf("capacity: QueueTimeout must be >= 0, got %s", c.QueueTimeout)
	case c.SlowdownPerStream < 0:
		return fmt.Errorf("capacity: SlowdownPerStream must be >= 0, got %g", c.SlowdownPerStream)
	case c.MaxConcurrent == 0 && c.QueueSize > 0:
		return fmt.Errorf("capacity: QueueSize %d needs MaxConcurrent > 0 (nothing to queue for)", c.QueueSize)
	}
	return nil
}

// errQueueFull and errQueueTimeout are admission refusals, answered 429.
var (
	errQueueFull    = errors.New("capacity: all stream slots are busy and the queue is full")
	errQueueTimeout = errors.New("capacity: timed out waiting in the queue for a stream slot")
)

// admission enforces Capacity. Safe for concurrent use.
type admission struct {
	cfg     Capacity
	slots   chan struct{} // nil when unlimited; a buffered token per playing request
	waiting atomic.Int64
	active  atomic.Int64
	metrics *metrics
}

func newAdmission(cfg Capacity, m *metrics) *admission {
	a := &admission{cfg: cfg, metrics: m}
	if cfg.MaxConcurrent > 0 {
		a.slots = make(chan struct{}, cfg.MaxConcurrent)
	}
	return a
}

// acquire waits for a slot (then call release) and returns how long the request queued; a
// client that left gets ctx.Err().
func (a *admission) acquire(ctx context.Context) (time.Duration, error) {
	if a.slots == nil {
		a.started()
		return 0, nil
	}
	select {
	case a.slots <- struct{}{}:
		a.started()
		return 0, nil
	default:
	}
	// A queue place first, so the bound holds under a burst of arrivals.
	if n := a.waiting.Add(1); n > int64(a.cfg.QueueSize) {
		a.waiting.Add(-1)
		return 0, errQueueFull
	}
	a.metrics.queueDepth.Inc()
	defer func() {
		a.waiting.Add(-1)
		a.metrics.queueDepth.Dec()
	}()
	queuedAt := time.Now()
	var timeout <-chan time.Time
	if a.cfg.QueueTimeout > 0 {
		t := time.NewTimer(a.cfg.QueueTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case a.slots <- struct{}{}:
		queued := time.Since(queuedAt)
		a.metrics.queuedSeconds.Observe(queued.Seconds())
		a.started()
		return queued, nil
	case <-timeout:
		return time.Since(queuedAt), errQueueTimeout
	case <-ctx.Done():
		return time.Since(queuedAt), ctx.Err()
	}
}

func (a *admission) started() {
	a.active.Add(1)
	a.metrics.activeStreams.Inc()
}

func (a *admission) release() {
	a.active.Add(-1)
	a.metrics.activeStreams.Dec()
	if a.slots != nil {
		<-a.slots
	}
}

func (a *admission) slowdown() float64 {
	if a.cfg.SlowdownPerStream == 0 {
		return 1
	}
	return 1 + a.cfg.SlowdownPerStream*float64(a.active.Load())
}
