package jsonwire

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// Stream is the reading half every provider wire's ModelStream shares: the SSE decoder, a
// scanner, the queue of decoded events and N, the SSE events read (for error messages).
type Stream struct {
	Queue EventQueue
	Dec   *sse.Decoder
	Ev    sse.Event
	Scan  Scanner
	N     int
}

// Read reads the next SSE event and returns its trimmed data: io.EOF at the clean end, a
// decode error as "<wire> stream: after N <unit>: …".
func (s *Stream) Read(wire, unit string) ([]byte, error) {
	if err := s.Dec.Next(&s.Ev); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%s stream: after %d %s: %w", wire, s.N, unit, err)
	}
	s.N++
	return bytes.TrimSpace(s.Ev.Data), nil
}

// EventQueue hands out one by one the model events a wire decodes a frame at a time: a stream's
// Next is q.Next(ev, s.readFrame), readFrame Pushing a frame's events and Finishing the turn
// (then Next returns io.EOF). A read error comes after the events before it, then sticks.
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

// End queues the turn's ModelTurnEnd and finishes the turn.
func (q *EventQueue) End(stop protocol.StopReason, usage protocol.Usage) {
	q.Push(protocol.ModelEvent{Kind: protocol.ModelTurnEnd, StopReason: stop, Usage: usage})
	q.Finish()
}

// PushText queues a text event of kind unless text is empty.
func (q *EventQueue) PushText(kind protocol.ModelEventKind, text []byte) {
	if len(text) > 0 {
		q.Push(protocol.ModelEvent{Kind: kind, Text: string(text)})
	}
}
