package agentruntime

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// errSlowClient is the cancel cause of a stream whose client accepted no bytes for the idle
// timeout.
var errSlowClient = errors.New("client accepted no bytes within the idle timeout")

// errClientGone is the cancel cause of a stream whose client closed the connection.
var errClientGone = errors.New("client went away")

// clientStream is the write side of one client stream. Frame writers append frames to its
// buffer (Write); flush hands the buffered frames to the connection under a write deadline, so
// a client that accepts nothing for the idle timeout is dropped instead of holding the stream.
// The buffer holds at most the frames of one provider event between flushes, which bounds
// per-stream memory; the stream's own goroutine blocks on a slow client, never another stream's.
//
// Write and flush are called by the stream's goroutine; the heartbeat timer also takes the lock.
type clientStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration

	heartbeat time.Duration // the ": ping" interval when idle (0: no heartbeats).
	// onFail is called once, outside the lock, with the first write failure's cause
	// (errSlowClient or errClientGone).
	onFail func(cause error)

	mu        sync.Mutex
	buf       bytes.Buffer
	err       error
	lastFlush time.Time
	// deadlineSet is when the write deadline was last moved; it is moved again only after an
	// eighth of the idle timeout, which keeps timer updates off the per-token path while a
	// stalled client is still dropped between 7/8 and all of the idle timeout.
	deadlineSet time.Time
	timer       *time.Timer
	closed      bool
}

func newClientStream(w http.ResponseWriter, idle, heartbeat time.Duration, onFail func(error)) *clientStream {
	cs := &clientStream{w: w, rc: http.NewResponseController(w), idle: idle, heartbeat: heartbeat, onFail: onFail}
	cs.buf.Grow(512)
	return cs
}

// Write appends p to the pending frames. It never blocks on the network.
func (cs *clientStream) Write(p []byte) (int, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.err != nil {
		return 0, cs.err
	}
	return cs.buf.Write(p)
}

// startHeartbeat arms the idle heartbeat; call it once the response headers are written.
func (cs *clientStream) startHeartbeat() {
	if cs.heartbeat <= 0 {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.lastFlush = time.Now()
	cs.timer = time.AfterFunc(cs.heartbeat, cs.ping)
}

// ping writes a ": ping" comment when nothing was flushed for a heartbeat interval, and re-arms
// itself for when the next one is due. Re-arming here, not on every flush, keeps timers off the
// per-token path.
func (cs *clientStream) ping() {
	cs.mu.Lock()
	if cs.closed || cs.err != nil {
		cs.mu.Unlock()
		return
	}
	next := cs.heartbeat
	if idle := time.Since(cs.lastFlush); idle < cs.heartbeat {
		next = cs.heartbeat - idle
	} else {
		cs.buf.WriteString(": ping\n\n")
		cs.flushLocked()
	}
	failed := cs.err
	if failed == nil {
		cs.timer.Reset(next)
	}
	cs.mu.Unlock()
	if failed != nil {
		cs.onFail(causeOf(failed))
	}
}

// flush writes the pending frames to the client and flushes the connection. It returns the
// first write failure; after one, every later call fails the same way.
func (cs *clientStream) flush() error {
	cs.mu.Lock()
	hadErr := cs.err != nil
	err := cs.flushLocked()
	cs.mu.Unlock()
	if err != nil && !hadErr {
		cs.onFail(causeOf(err))
	}
	return err
}

func (cs *clientStream) flushLocked() error {
	if cs.err != nil {
		cs.buf.Reset()
		return cs.err
	}
	if cs.buf.Len() == 0 {
		return nil
	}
	now := time.Now()
	if cs.idle > 0 && now.Sub(cs.deadlineSet) >= cs.idle/8 {
		// Best effort: a ResponseWriter without deadline support (ErrNotSupported) still works,
		// it just cannot drop a stalled client.
		_ = cs.rc.SetWriteDeadline(now.Add(cs.idle))
		cs.deadlineSet = now
	}
	_, err := cs.w.Write(cs.buf.Bytes())
	cs.buf.Reset()
	if err == nil {
		err = cs.rc.Flush()
	}
	if err != nil {
		cs.err = fmt.Errorf("write to client: %w", err)
		return cs.err
	}
	cs.lastFlush = now
	return nil
}

// close stops the heartbeat and gives the server a fresh deadline to finish the response, so a
// deadline set for the last frame cannot cut the response's own end.
func (cs *clientStream) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	if cs.timer != nil {
		cs.timer.Stop()
	}
	if cs.idle > 0 && cs.err == nil {
		_ = cs.rc.SetWriteDeadline(time.Now().Add(cs.idle))
	}
}

// failure classifies the stream's first write failure (errSlowClient or errClientGone), or nil.
// The HTTP server cancels the request context itself on a write error, so the run's context
// cause cannot tell a drop from a departure; this can.
func (cs *clientStream) failure() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.err == nil {
		return nil
	}
	return causeOf(cs.err)
}

// causeOf classifies a write failure: a deadline means the client stopped reading.
func causeOf(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errSlowClient
	}
	return errClientGone
}

// flushHeaders sends the response headers at once, so a client sees the stream open before the
// model's first token (time to response headers is measured separately from time to first chunk).
func (cs *clientStream) flushHeaders() error {
	cs.mu.Lock()
	if cs.idle > 0 {
		_ = cs.rc.SetWriteDeadline(time.Now().Add(cs.idle))
	}
	err := cs.rc.Flush()
	if err != nil && cs.err == nil {
		cs.err = fmt.Errorf("write to client: %w", err)
		cs.mu.Unlock()
		cs.onFail(causeOf(err))
		return cs.err
	}
	cs.mu.Unlock()
	return err
}
