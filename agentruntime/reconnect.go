package agentruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/streambench/streambench/protocol/simcanvas"
)

// Canvas reconnect (docs/PROTOCOLS.md, "The canvas reconnect endpoint"): a resumable execution
// forwards its frames to whichever client stream is attached and keeps a bounded buffer of the
// kinds a reconnect replays, until the attached stream's [DONE] or a window with no client.

// DefaultReconnectWindow is how long a dropped resumable execution is kept.
const DefaultReconnectWindow = 10 * time.Second

// Replay buffer bounds per execution: the oldest buffered events go first beyond them.
const (
	maxReplayEvents = 64
	maxReplayBytes  = 1 << 20
)

var doneFrame = []byte("data: [DONE]\n\n")

type bufferedFrame struct {
	id    int64
	frame []byte
}

// canvasExec is one resumable execution: the io.Writer its run writes its frames to.
type canvasExec struct {
	s         *Server
	id        string
	workflow  string
	cancelRun context.CancelCauseFunc
	first     *clientStream     // the execute request's own stream
	w         *simcanvas.Writer // the run's writer, which names the frame each Write takes

	mu       sync.Mutex
	frames   []bufferedFrame
	bytes    int
	lastID   int64
	attached *clientStream // nil while no client is connected
	wake     chan struct{} // tells the attached reconnect handler there is something to flush
	sawDone  bool          // the run wrote [DONE]
	runDone  bool          // the run's handler returned
	timer    *time.Timer   // the reconnect window while detached
	released bool
}

// resumable makes rn's execution resumable: it returns the execution, which its emitter writes
// to, and what the handler calls when the run returned.
func (s *Server) resumable(rn *run, r *http.Request) (*canvasExec, func()) {
	rn.cancel(nil) // replaced before the run starts: this context ended with the client
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	rn.ctx, rn.cancel = ctx, cancel
	cs := rn.cs
	x := &canvasExec{s: s, id: rn.id, workflow: rn.dep.Slug, cancelRun: cancel, first: cs, attached: cs}
	cs.onFail = func(cause error) {
		if errors.Is(cause, errSlowClient) {
			s.metrics.slowClientsDropped.Inc()
		}
		x.detach(cs)
	}
	stop := context.AfterFunc(r.Context(), func() { x.detach(cs) })
	s.execs.add(x.id, x)
	s.metrics.canvasResumable.Inc()
	return x, func() {
		stop()
		x.runEnded()
	}
}

// Write takes one frame (the Writer writes one per call), keeps it when it is of a buffered kind
// and forwards it to the attached stream. It never fails: the run goes on without a client.
func (x *canvasExec) Write(p []byte) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.released {
		return len(p), nil
	}
	if typ := x.w.Type; typ != "" {
		x.lastID = x.w.EventID()
		if !simcanvas.LiveOnly(typ) || x.s.opts.Faults.has("replay-live-only") {
			x.keep(x.lastID, p)
		}
	}
	if x.attached != nil {
		_, _ = x.attached.Write(p)
		x.signal()
	}
	if bytes.Equal(p, doneFrame) {
		x.sawDone = true
	}
	return len(p), nil
}

func (x *canvasExec) keep(id int64, frame []byte) {
	x.frames = append(x.frames, bufferedFrame{id: id, frame: bytes.Clone(frame)})
	x.bytes += len(frame)
	for len(x.frames) > maxReplayEvents || (x.bytes > maxReplayBytes && len(x.frames) > 1) {
		x.bytes -= len(x.frames[0].frame)
		x.frames[0] = bufferedFrame{}
		x.frames = x.frames[1:]
	}
}

func (x *canvasExec) signal() {
	if x.wake != nil {
		select {
		case x.wake <- struct{}{}:
		default:
		}
	}
}

// ended reports whether nothing more will be written: the end marker, or the run returned.
func (x *canvasExec) ended() bool { return x.sawDone || x.runDone }

// detach disconnects cs if it is the attached stream, and starts the reconnect window.
func (x *canvasExec) detach(cs *clientStream) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.attached != cs || x.released {
		return
	}
	x.attached, x.wake = nil, nil
	x.startTimerLocked(x.s.opts.ReconnectWindow)
}

// expire ends a window with no client, or the end grace, cancelling a run still going.
func (x *canvasExec) expire() {
	x.mu.Lock()
	endGraceOver := x.runDone && x.attached == x.first
	if (x.attached != nil && !endGraceOver) || x.released {
		x.mu.Unlock()
		return
	}
	running := !x.runDone
	x.releaseLocked()
	x.mu.Unlock()
	if running {
		x.cancelRun(errClientGone)
	}
}

// runEnded is called when the run's handler returned; a reconnect handler is woken to finish.
func (x *canvasExec) runEnded() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.runDone = true
	if x.attached == x.first {
		// Its client may have dropped unnoticed yet (on a busy machine a close is read late).
		x.startTimerLocked(min(endGrace, x.s.opts.ReconnectWindow))
		return
	}
	x.signal()
}

// endGrace is how long an execution whose run ended with its first stream attached stays
// resumable, for a client whose drop was not noticed yet.
const endGrace = 2 * time.Second

// startTimerLocked (re)starts the timer that releases the execution (expire). x.mu is held.
func (x *canvasExec) startTimerLocked(d time.Duration) {
	if x.timer == nil {
		x.timer = time.AfterFunc(d, x.expire)
	} else {
		x.timer.Reset(d)
	}
}

func (x *canvasExec) releaseLocked() {
	if x.released {
		return
	}
	x.released = true
	if x.timer != nil {
		x.timer.Stop()
	}
	x.frames, x.attached, x.wake = nil, nil, nil
	x.s.execs.remove(x.id)
	x.s.metrics.canvasResumable.Dec()
}

// attach serves a reconnect on cs up to now (the end marker when ended) and returns the channel
// that signals new frames.
func (x *canvasExec) attach(w http.ResponseWriter, cs *clientStream, last int64) (wake chan struct{}, ended, ok bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.released {
		return nil, false, false
	}
	h := w.Header()
	simcanvas.SetResponseHeaders(h)
	h.Set(simcanvas.ExecutionIDHeader, x.id)
	h.Set(simcanvas.HeaderReplayThrough, strconv.FormatInt(x.lastID, 10))
	w.WriteHeader(http.StatusOK)
	if !x.s.opts.Faults.has("drop-replay") {
		for _, f := range x.frames {
			if f.id > last {
				_, _ = cs.Write(f.frame)
			}
		}
	}
	if x.ended() {
		if x.sawDone {
			_, _ = cs.Write(doneFrame)
		}
		x.releaseLocked()
		return nil, true, true
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	// A previous stream still attached (its drop not noticed yet) gets nothing more.
	x.attached, x.wake = cs, make(chan struct{}, 1)
	return x.wake, false, true
}

// finishAttached ends a reconnect whose stream saw the end: the execution is released.
func (x *canvasExec) finishAttached(cs *clientStream) (ended bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.attached != cs {
		return true // detached or released meanwhile: nothing more comes to cs
	}
	if !x.ended() {
		return false
	}
	x.releaseLocked()
	return true
}

func (s *Server) handleCanvasReconnect(w http.ResponseWriter, r *http.Request) {
	x, ok := s.execs.get(r.PathValue("execution"))
	if !ok || x.workflow != r.PathValue("id") {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no resumable execution %q of workflow %q (unknown, not started with \"resumable\": true, or over and released)",
			r.PathValue("execution"), r.PathValue("id")))
		return
	}
	var last int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.writeError(w, http.StatusBadRequest, fmt.Sprintf("Last-Event-ID %q: expected a decimal event id", v))
			return
		}
		last = n
	}
	var cs *clientStream
	cs = newClientStream(w, s.opts.ClientIdleTimeout, 0, func(error) { x.detach(cs) })
	wake, ended, ok := x.attach(w, cs, last)
	if !ok {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("execution %q is over and released", x.id))
		return
	}
	defer cs.close()
	for {
		if err := cs.flush(false); err != nil || ended {
			return // a failed flush detached cs (onFail)
		}
		select {
		case <-wake:
			ended = x.finishAttached(cs)
		case <-r.Context().Done():
			x.detach(cs)
			return
		}
	}
}

var _ io.Writer = (*canvasExec)(nil)
