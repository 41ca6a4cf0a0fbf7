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

// Cancel causes of a stream whose client accepted no bytes for the idle timeout, or left.
var (
	errSlowClient = errors.New("client accepted no bytes within the idle timeout")
	errClientGone = errors.New("client went away")
)

// clientStream is the write side of one client stream: Write buffers frames, flush hands them
// to the connection under a write deadline, so a client that accepts nothing for the idle
// timeout is dropped. The heartbeat timer also takes the lock.
type clientStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration

	heartbeat time.Duration     // the ": ping" interval when idle (0: none).
	onFail    func(cause error) // called once, outside the lock, with the first failure's cause.

	mu        sync.Mutex
	buf       bytes.Buffer
	err       error
	lastFlush time.Time
	// deadlineSet is when the write deadline was last moved; moving it at most every eighth of
	// the idle timeout keeps timer updates off the per-token path.
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

// ping writes a ": ping" comment after a heartbeat interval with nothing flushed, and re-arms
// itself (not every flush: timers stay off the per-token path).
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
		cs.flushLocked(false)
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

// flush writes the pending frames to the client (with headers, the response headers even when
// no frame is pending: time to headers is not time to first chunk); after a failure, every
// call returns it.
func (cs *clientStream) flush(headers bool) error {
	cs.mu.Lock()
	hadErr := cs.err != nil
	err := cs.flushLocked(headers)
	cs.mu.Unlock()
	if err != nil && !hadErr {
		cs.onFail(causeOf(err))
	}
	return err
}

func (cs *clientStream) flushLocked(headers bool) error {
	if cs.err != nil {
		cs.buf.Reset()
		return cs.err
	}
	if cs.buf.Len() == 0 && !headers {
		return nil
	}
	now := time.Now()
	if cs.idle > 0 && now.Sub(cs.deadlineSet) >= cs.idle/8 {
		_ = cs.rc.SetWriteDeadline(now.Add(cs.idle)) // without deadline support, no stalled client is dropped
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

// close stops the heartbeat and gives the server a fresh deadline to finish the response.
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

// failure classifies the stream's first write failure, or nil: the run's context cause cannot
// tell a drop from a departure (net/http cancels the request itself on a write error).
func (cs *clientStream) failure() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.err == nil {
		return nil
	}
	return causeOf(cs.err)
}

func causeOf(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errSlowClient
	}
	return errClientGone
}
