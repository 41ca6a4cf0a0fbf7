package jsonwire

import (
	"io"

	"github.com/streambench/streambench/protocol"
)

// EventQueue hands out, one by one, the model events a wire decodes from one provider frame
// at a time. A wire's stream implements protocol.ModelStream.Next as q.Next(ev, s.readFrame):
// readFrame decodes the next frame, adding its events with Push (possibly none) and calling
// Finish after the turn's last one; once those are handed out, Next returns io.EOF. A read
// error is returned after the events before it, and again on every later call.
type EventQueue struct {
	pending []protocol.ModelEvent
	next    int
	done    bool
	err     error
}

// Next sets *ev to the next event, calling read for another frame while none is queued.
func (q *EventQueue) Next(ev *protocol.ModelEvent, read func() error) error {
	for {
		if q.next < len(q.pending) {
			*ev = q.pending[q.next]
			q.next++
			return nil
		}
		if q.err != nil {
			return q.err
		}
		if q.done {
			q.err = io.EOF
			return q.err
		}
		q.pending, q.next = q.pending[:0], 0
		if err := read(); err != nil {
			q.err = err
		}
	}
}

// Push queues ev.
func (q *EventQueue) Push(ev protocol.ModelEvent) { q.pending = append(q.pending, ev) }

// Finish marks the turn complete: Next returns io.EOF once the queued events are out.
func (q *EventQueue) Finish() { q.done = true }
