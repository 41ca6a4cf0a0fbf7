package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// Result is what a session leaves behind for the run.
type Result struct {
	Violations []protocol.Violation
	Outcome    measure.Outcome
	// RetryAfter is the Retry-After of a 429 or 503 answer, 0 without one.
	RetryAfter time.Duration
	// Err says what ended the session in an error outcome (or an aborted session's failed
	// stop request).
	Err error
	// Abort is the client's scripted abort or stop, for the cancel check (nil: none).
	Abort *Abort

	// tape and redact give Frames, inside Runner.Ended only.
	tape   *tape
	redact func(string) string
}

// Frames is what the stream carried, bounded and redacted; nil outside Runner.Ended.
func (res *Result) Frames() []string { return res.tape.frames(res.redact) }

// clientAction is the scripted abort or stop of one session. It fires at most once, from the
// reading goroutine (frame-triggered) or a timer goroutine (time-triggered).
type clientAction struct {
	fired    atomic.Bool
	mu       sync.Mutex
	at       time.Time // when the client acted (wall clock, to join the mock's records)
	cancel   context.CancelFunc
	stop     func() // sends the stop request; nil means abort
	stopDone chan stopOutcome
	// terminalAt is when the reading goroutine (alone) saw the stream's terminal frame.
	terminalAt time.Time
}

// fire performs the action unless it already happened, and reports whether this call fired.
func (a *clientAction) fire() bool {
	// at is set under the lock before fired: a reader that sees fired may time from firedAt.
	a.mu.Lock()
	if a.fired.Load() {
		a.mu.Unlock()
		return false
	}
	a.at = time.Now()
	a.fired.Store(true)
	stop := a.stop
	a.mu.Unlock()
	if stop != nil {
		stop()
	} else {
		a.cancel()
	}
	return true
}

func (a *clientAction) firedAt() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.at
}

// Play plays session p: its stream read to the end (or the scripted action), judged and measured
// from intended, the scheduled start, so queueing is not hidden. A multi-turn client reads one
// stream per model turn, each with its own checker; a conversation one per user turn, each a request.
//
// Only small frames may sit under the blocking read: the chain parked there (the user's loop,
// Play, read, the decoder, the body readers) must stay under ~3 KiB, or every stream keeps an
// 8 KiB stack. Set-up and verdict code runs on fresh stacks (OnFreshStack); rare big frames are not inlined.
func (r *Runner) Play(ctx context.Context, p *Plan, intended time.Time) Result {
	s := &streamState{r: r, ctx: ctx, p: p, intended: intended, turns: 1}
	if mt, ok := p.Client.(protocol.MultiTurn); ok {
		s.turns = max(mt.Turns(p.Session), 1)
	}
	if p.conversation != nil {
		s.turns = len(p.conversation.Turns)
	}
	defer s.close()
	ended := !OnFreshStack(s.open)
	for !ended {
		s.read()
		if s.dropped {
			ended = !OnFreshStack(s.resume)
			continue
		}
		var more bool
		if more, ended = s.nextTurn(); !more && !ended {
			// The verdict calls deep: on a fresh stack, so the user's next stream is not read
			// on a stack this one's end grew.
			OnFreshStack(func() bool { s.res = s.finish(); return true })
			break
		}
	}
	s.m.judgeGoodput(s.res, r.GoodputSLOs)
	return s.res
}

// nextTurn ends the turn just read and requests the next: more when its stream is open, ended
// when the session ended (s.res holds its result), neither when finish must judge the last.
func (s *streamState) nextTurn() (more, ended bool) {
	if s.p.Session.Turn+1 >= s.turns || s.streamErr != nil || s.act.fired.Load() || s.ctx.Err() != nil || s.sctx.Err() != nil {
		return false, false
	}
	if s.inBand != "" || !s.turnTerminal {
		return false, false // the turn ended in an error or without its terminal: finish judges it
	}
	s.res.Violations = append(s.res.Violations, s.checker.Finish(nil)...)
	s.judgeOutput()
	s.m.tokens.keepText(s.checker)
	s.closeBody()
	s.turnTerminal = false
	if s.p.conversation != nil {
		s.nextConversationTurn()
	}
	s.p.Session.Turn++
	if !OnFreshStack(s.request) {
		return false, true
	}
	return true, false
}

// OnFreshStack runs f on a new goroutine and waits for it, so that f's deep calls do not grow
// the caller's stack for a stream's whole life (about a microsecond per call).
func OnFreshStack(f func() bool) bool {
	done := make(chan bool, 1)
	go func() { done <- f() }()
	return <-done
}

// streamState is one session's stream between open, read and finish.
type streamState struct {
	r        *Runner
	ctx      context.Context
	p        *Plan
	intended time.Time

	m             *sessionMetrics
	res           Result
	sctx          context.Context // ctx bounded by the stream timeout
	host          string          // the target's host:port, for error messages
	contentLength int64           // -1: none, as for most streams
	turns         int             // requests the session takes (MultiTurn), else 1
	chunks        int             // answer chunks so far, over every turn
	output        bool            // the answer so far carried text, thinking or a tool call
	act           *clientAction
	checker       protocol.Checker
	appr          *approver // nil for most clients
	dec           *sse.Decoder
	head          *bodyHead // set when the response is not an event stream
	// arrivals gives the kernel's receive times of the stream's reads (nil: unknown); watched
	// is the same for the idle watch's timer goroutine.
	arrivals  arrivals
	watched   atomic.Pointer[arrivalsRef]
	streamErr error // how reading ended (nil: at its end, or the client left)
	// resp is kept only for a scripted reconnect: a response head is ~2 KiB a stream would
	// otherwise hold for its life.
	resp        *http.Response
	dropped     bool // read dropped the stream for the scripted reconnect
	reconnected bool

	turnTerminal bool      // the current turn delivered its terminal frame
	lastChunk    time.Time // this read's last answer chunk
	stopNoted    bool      // this read told the checker of the stop
	inBand       string    // the first in-band error's message
	tape         *tape
	retryAfter   time.Duration
	// lastRead is when the stream was last touched, or without receive stamps last delivered
	// bytes (monotonic ns since monoBase).
	lastRead    atomic.Int64
	idle        *time.Timer
	cancelCause context.CancelCauseFunc

	// Released by close, in reverse order of acquisition.
	active    bool
	cancel    context.CancelFunc
	timer     *time.Timer // time-triggered abort
	stopTimer *time.Timer // time-triggered stop
	body      io.Closer
}

// arrivals is a response body (transport.Transport's) that knows when its connection's newest
// read arrived; Stamped says whether it keeps receive times at all.
type arrivals interface {
	Stamped() bool
	Latest() (time.Time, bool)
}

// arrivalsRef holds an arrivals for an atomic pointer.
type arrivalsRef struct{ arrivals }

// setArrivals makes body's receive times, if stamped, the stream's.
func (s *streamState) setArrivals(body io.ReadCloser) {
	s.arrivals, _ = body.(arrivals)
	if s.arrivals == nil || !s.arrivals.Stamped() {
		s.arrivals = nil
		s.watched.Store(nil)
		return
	}
	s.watched.Store(&arrivalsRef{s.arrivals})
}

// closeBody closes the body, first forgetting its receive times: its connection may serve another.
func (s *streamState) closeBody() {
	if s.body == nil {
		return
	}
	s.setArrivals(nil)
	_ = s.body.Close()
	s.body = nil
}

// arrived is when the stream's last read reached this host (its receive stamp, else now), so
// the generator's own delay in getting to a read is not charged to the target.
func (s *streamState) arrived() time.Time {
	if s.arrivals != nil {
		if t, ok := s.arrivals.Latest(); ok {
			return t
		}
	}
	return time.Now()
}

func (s *streamState) close() {
	if s.appr != nil {
		s.appr.wait()
	}
	s.closeBody()
	for _, t := range [...]*time.Timer{s.stopTimer, s.timer, s.idle} {
		if t != nil {
			t.Stop()
		}
	}
	if s.cancel != nil {
		s.cancel()
	}
	if s.active {
		s.r.Rec.Active.Add(-1)
	}
}

// open starts the session and sends its first request; false when the session ended.
//
//go:noinline
func (s *streamState) open() bool {
	r, p, intended := s.r, s.p, s.intended
	s.tape = tapes.Get().(*tape)
	rec := r.Rec
	m := rec.session(p.Pick.Index, p.Pick.Scenario, p.Label, !intended.Before(r.WarmupEnd))
	s.m = m
	m.intended, m.warmupEnd = intended, r.WarmupEnd
	m.tokens.usageOnly = p.Session.NoGroundTruth
	m.scripted = p.scripted
	rec.Started.Add(1)
	rec.Active.Add(1)
	s.active = true
	if lag := time.Since(intended); r.OpenLoop {
		m.startLag = observed(lag)
		if lag > LateStart {
			rec.Late.Add(1)
			if r.LateBy > 0 && intended.Before(r.Start.Add(r.LateBy)) {
				rec.LateAtBegin.Add(1) // due before a late --start-at shard began
			}
		}
	}
	s.res = Result{}
	tctx, cancelTimeout := context.WithTimeoutCause(s.ctx, r.StreamTimeout, errStreamTimeout)
	sctx, cancel := context.WithCancelCause(tctx)
	s.sctx = sctx
	s.cancel = func() { cancel(nil); cancelTimeout() }
	s.cancelCause = cancel
	s.act = &clientAction{cancel: func() { cancel(nil) }}
	s.startIdleWatch()
	if p.trigger != nil && !p.stop && p.timed {
		act := s.act
		s.timer = time.AfterFunc(p.triggerAt, func() { act.fire() })
	}
	return s.request()
}

// request sends the current turn's request and checks the head; false when the session ended.
//
//go:noinline
func (s *streamState) request() bool {
	r, p, intended, m, act := s.r, s.p, s.intended, s.m, s.act
	res := &s.res
	isStop := p.stop
	stopper, _ := p.Client.(protocol.Stopper)
	if act.fired.Load() {
		// The client left between two turns.
		s.res = s.finishAborted(false, nil)
		return false
	}
	s.dec = nil // an earlier turn's

	var connectStart time.Time
	trace := &httptrace.ClientTrace{
		ConnectStart: func(string, string) { connectStart = time.Now() },
		ConnectDone: func(_, _ string, err error) {
			if err == nil && !connectStart.IsZero() {
				m.connect.Store(int64(observed(time.Since(connectStart))))
			}
		},
	}
	if p.trigger != nil && p.trigger.BeforeHeaders {
		// The request is on the wire; the response head cannot have arrived yet.
		trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				act.fire()
			}
		}
	}
	req, err := p.Client.NewRequest(httptrace.WithClientTrace(s.sctx, trace), r.Target, p.Session)
	if err != nil {
		// A generator defect, reported so it is never silent.
		s.res = s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: %w", p.ID, err))
		return false
	}
	ApplyStreamHeader(req, p.Header)
	s.host = req.URL.Host
	sent := time.Now()
	s.touch()
	resp, err := r.Client.Do(req)
	if err != nil {
		switch {
		case act.fired.Load():
			s.res = s.finishAborted(false, nil)
			return false
		case s.limit() != nil:
			// No response head before the limit.
			s.streamErr = err
			s.res = s.finishUnfinished("no response headers")
			return false
		case s.ctx.Err() != nil:
			s.res = s.finishCut()
			return false
		}
		s.res = s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: %w", p.ID, err))
		return false
	}
	s.touch()
	s.setArrivals(resp.Body)
	resp.Body = s.watchBody(resp.Body)
	s.body = resp.Body
	if !isStop && act.fired.Load() {
		// The client left before the head arrived (Do may still return one): none is measured.
		s.res = s.finishAborted(false, nil)
		return false
	}
	if m.headers == 0 {
		m.headers = observed(s.arrived().Sub(intended))
	}
	if resp.StatusCode != http.StatusOK {
		s.httpError(req, resp)
		return false
	}
	res.Violations = append(res.Violations, p.Client.CheckHeaders(resp.Header, p.Session)...)
	if ce := resp.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		// A compressed body is not an event stream the client can read: judged on its headers.
		detail := fmt.Sprintf("Content-Encoding %q on a request sent with Accept-Encoding: %s: the body is not decoded as an event stream",
			ce, req.Header.Get("Accept-Encoding"))
		res.Violations = append(res.Violations, protocol.Violation{Rule: protocol.RHeaders, Detail: detail})
		s.res = s.end(measure.OutcomeCompleted, nil)
		return false
	}
	if isStop {
		ctx := s.ctx
		act.stopDone = make(chan stopOutcome, 1)
		act.stop = func() {
			go func() {
				act.stopDone <- r.sendStop(ctx, stopper, p, resp)
			}()
		}
		if p.timed {
			s.stopTimer = time.AfterFunc(max(p.triggerAt-time.Since(sent), 0), func() { act.fire() })
		}
	}
	s.checker = p.Client.NewChecker(p.Session)
	s.resp = nil
	if p.reconnect != nil {
		s.resp = resp
	}
	s.appr = s.newApprover(resp)
	s.m.watch(s.checker)
	s.head = nil
	if !sse.IsEventStream(resp.Header.Get("Content-Type")) {
		// Not an event stream (a JSON error with 200, an HTML page): its start is quoted.
		s.head = &bodyHead{ReadCloser: resp.Body, contentType: resp.Header.Get("Content-Type")}
		resp.Body = s.head
	}
	s.dec = protocol.NewDecoder(p.Client, resp.Body)
	s.contentLength = resp.ContentLength
	return true
}

// read feeds the stream to the checker and the metrics; it blocks for the stream's life, so its
// frame is kept small.
//
//go:noinline
func (s *streamState) read() {
	dec := s.dec
	var ev sse.Event
	var pending int64 // frames not yet added to the shared counter
	s.lastChunk, s.stopNoted = time.Time{}, false
	for {
		if err := dec.Next(&ev); err != nil {
			if !errors.Is(err, io.EOF) {
				s.streamErr = err
			}
			break
		}
		if pending++; pending == 32 {
			s.r.Rec.Frames.Add(pending)
			pending = 0
		}
		if !s.observe(&ev) {
			break
		}
	}
	s.r.Rec.Frames.Add(pending)
	s.r.Rec.bytes.Add(dec.BytesRead())
	if s.appr != nil {
		s.appr.wait()
	}
}

// observe judges and measures one frame; false when the client reads no further.
//
//go:noinline
func (s *streamState) observe(ev *sse.Event) bool {
	m, act := s.m, s.act
	now := s.arrived()
	s.tape.record(ev)
	if s.p.stop && !s.stopNoted && act.fired.Load() {
		// The checker must know of the stop before any frame it may have caused.
		s.stopNoted = true
		if so, ok := s.checker.(protocol.StopObserver); ok {
			so.StopSent()
		}
	}
	obs := s.checker.Observe(ev)
	if obs.Kind == protocol.FrameOther && s.appr != nil {
		s.appr.due()
	}
	if m.firstEvent == 0 {
		m.firstEvent = observed(now.Sub(s.intended))
	}
	// After a stop request, what still streams is the runtime's race, not a token rate.
	if !s.stopNoted {
		m.tokens.observe(now, now.Sub(s.intended), &obs, m)
	}
	s.timeFrame(now, &obs)
	// When the client left, whatever is still buffered was never "seen"; on the scripted
	// reconnect, the client drops this stream and resumes it.
	return !(act.fired.Load() && !s.p.stop) && !s.dropped
}

// timeFrame times one observed frame by its kind and fires a trigger it meets.
func (s *streamState) timeFrame(now time.Time, obs *protocol.Observation) {
	p, m, act, trig := s.p, s.m, s.act, s.p.trigger
	switch obs.Kind {
	case protocol.FrameAnswer:
		s.output = true
		s.chunks++
		if s.chunks == 1 {
			m.firstChunk = observed(now.Sub(s.intended))
		} else if !s.lastChunk.IsZero() && !s.stopNoted {
			m.gap(now.Sub(s.lastChunk)) // within a turn: the client's own turnaround is no gap
		}
		s.lastChunk = now
		if trig != nil && trig.AfterChunks > 0 && s.chunks >= trig.AfterChunks {
			act.fire()
		}
		s.dropped = p.reconnect != nil && !s.reconnected && s.chunks >= p.reconnect.AfterChunks
	case protocol.FrameThinking:
		s.output = true
		if m.firstThinking == 0 {
			m.firstThinking = observed(now.Sub(s.intended))
			if trig != nil && trig.DuringThinking && p.Client.Sees(protocol.FrameThinking) {
				act.fire()
			}
		}
	case protocol.FrameToolStart:
		s.output = true
		if trig != nil && trig.DuringTool && p.Client.Sees(protocol.FrameToolStart) {
			act.fire()
		}
	case protocol.FrameToolEnd:
		// After a stop, the first tool settlement times the runtime's cancel of its tools.
		if p.stop && act.fired.Load() && m.toolCancel == 0 {
			m.toolCancel = observed(now.Sub(act.firedAt()))
		}
	case protocol.FrameTerminal:
		s.turnTerminal = true
		if obs.Error != "" && s.inBand == "" {
			s.inBand = obs.Error
		}
		if act.terminalAt.IsZero() {
			act.terminalAt = now
		}
		if p.stop && act.fired.Load() && m.stop == 0 {
			m.stop = observed(now.Sub(act.firedAt()))
		}
	}
}

// bodyHead keeps the first maxBodyHead bytes of a body that is not an event stream.
type bodyHead struct {
	io.ReadCloser
	contentType string
	head        []byte
}

const maxBodyHead = 512

func (b *bodyHead) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := maxBodyHead - len(b.head); room > 0 && n > 0 {
		b.head = append(b.head, p[:min(n, room)]...)
	}
	return n, err
}

// note is what a session's error says of the body: its Content-Type and first bytes.
func (b *bodyHead) note() string {
	if b == nil {
		return ""
	}
	return fmt.Sprintf("; its body (Content-Type %q, not text/event-stream) began: %q", b.contentType, bytes.TrimSpace(b.head))
}

// LateStart is how late an open-loop start may be before it counts as late (wake-up jitter).
const LateStart = time.Millisecond

// stopOutcome is the stop request's status (0: none), when it was answered, and its error.
type stopOutcome struct {
	status int
	at     time.Time
	err    error
}

func (r *Runner) sendStop(ctx context.Context, s protocol.Stopper, p *Plan, resp *http.Response) stopOutcome {
	req, err := s.NewStopRequest(ctx, r.Target, p.Session, resp)
	var sr *http.Response
	if err == nil {
		ApplyHeader(req, p.Header)
		sr, err = r.Client.Do(req)
	}
	if err != nil {
		return stopOutcome{at: time.Now(), err: fmt.Errorf("session %s: stop request: %w", p.ID, err)}
	}
	defer sr.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(sr.Body, 512))
	out := stopOutcome{status: sr.StatusCode, at: time.Now()}
	if sr.StatusCode != http.StatusOK {
		out.err = fmt.Errorf("session %s: stop request: HTTP %d: %s", p.ID, sr.StatusCode, body)
	}
	return out
}
