package loadgen

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// sessionPlan is everything about one session that is known before it starts.
type sessionPlan struct {
	pick    Pick
	id      string
	dialect protocol.Dialect
	label   string // dialect part of the histogram keys (sim-chat-optedin, ...)
	session *protocol.Session
	// req is the profile's headers and paths (nil in tests that build plans by hand).
	req *profileRequest
	// trigger is the scripted client action (abort, or stop when stop is set); triggerAt is
	// when it fires, from the request, for time-based triggers (timed). The rendered Script
	// itself is not kept: at thousands of open streams its steps would dominate memory.
	trigger   *scenarios.Trigger
	stop      bool
	triggerAt time.Duration
	timed     bool
}

// plan derives session index's plan. The scenario exists: Config validation checked the mix.
func (r *runner) plan(index uint64, suffix string) *sessionPlan {
	pick := r.cfg.Mix.Pick(r.cfg.Seed, index)
	sc, _ := r.cfg.Library.Get(pick.Scenario)
	script := sc.Render(pick.Seed)
	id := r.runID + "-" + strconv.FormatUint(index, 10) + suffix
	input := scenarios.Directive{Scenario: pick.Scenario, Seed: pick.Seed, Session: id}.String()
	if sc.Prompt != "" {
		input += " " + sc.Prompt
	}
	ro := r.reqOpts[pick.Profile]
	p := &sessionPlan{
		pick: pick, id: id, req: ro,
		dialect: r.dialects[pick.Profile.Dialect],
		label:   pick.Profile.Label(),
		session: &protocol.Session{
			ID: id, Target: pick.Target.Slug, Input: input,
			OptedIn:  pick.Profile.Dialect == DialectSimChat && pick.Profile.OptedIn,
			Policy:   pick.Target.Policy(),
			Expected: script.Expected(),
		},
	}
	if ro != nil {
		p.session.Path, p.session.StopPath = ro.path, ro.stopPath
	}
	p.trigger = script.Client.Abort
	if p.trigger == nil && script.Client.Stop != nil {
		_, canStop := p.dialect.(protocol.Stopper)
		p.trigger, p.stop = script.Client.Stop, canStop
	}
	if p.trigger != nil {
		p.triggerAt, p.timed = r.triggerTime(p, script, p.trigger)
	}
	return p
}

// planShallow is plan(index, "") run on a fresh goroutine (see onFreshStack): rendering the
// script is deep, and the calling goroutine goes on to hold the session's stream.
func (r *runner) planShallow(index uint64) *sessionPlan {
	var p *sessionPlan
	onFreshStack(func() bool { p = r.plan(index, ""); return true })
	return p
}

// sessionResult is what a session leaves behind for the run.
type sessionResult struct {
	violations []protocol.Violation
	frames     []string // only when capturing (replays for violation samples)
	outcome    Outcome
}

// clientAction is the scripted abort or stop of one session. It fires at most once, from the
// reading goroutine (frame-triggered) or a timer goroutine (time-triggered).
type clientAction struct {
	fired  atomic.Bool
	mu     sync.Mutex
	at     time.Time // when the client acted (wall clock, for joining with the mock's records)
	cancel context.CancelFunc
	stop   func() // sends the stop request; nil means abort
	// stopDone carries the stop request's outcome.
	stopDone chan stopOutcome
	// terminalAt is when the reading goroutine saw the stream's terminal frame (only that
	// goroutine touches it).
	terminalAt time.Time
}

// fire performs the action unless it already happened. It reports whether this call fired.
func (a *clientAction) fire() bool {
	if !a.fired.CompareAndSwap(false, true) {
		return false
	}
	a.mu.Lock()
	a.at = time.Now()
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

// frameCapture formats an event as the frame it was on the wire, for violation samples.
func frameCapture(ev *sse.Event) string {
	if ev.Type == "" {
		return "data: " + string(ev.Data)
	}
	return "event: " + ev.Type + "\ndata: " + string(ev.Data)
}

// visible reports whether the session's client is sent thinking (or tool) frames at all.
func visible(p *sessionPlan, tool bool) bool {
	if p.pick.Profile.Dialect != DialectSimChat {
		return true
	}
	if !p.session.OptedIn {
		return false
	}
	if tool {
		return p.session.Policy.IncludeToolCalls
	}
	return p.session.Policy.IncludeThinking
}

// runSession opens one stream, reads it to the end (or the scripted abort), feeds the checker
// and records the session's metrics. intended is when the schedule wanted it to start: latencies
// count from there, so queueing before the start is not hidden. capture > 0 keeps that many raw
// frames and makes the session a replay (nothing counted, violations only returned).
func (r *runner) runSession(ctx context.Context, p *sessionPlan, intended time.Time, capture int) sessionResult {
	res := r.stream(ctx, p, intended, capture)
	if capture == 0 && r.cfg.OnSessionEnd != nil {
		r.cfg.OnSessionEnd(SessionEnd{Scenario: p.pick.Scenario, Dialect: p.label, Outcome: res.outcome, Violations: res.violations})
	}
	return res
}

// stream is runSession's body. It keeps the frames that stay on the goroutine's stack while
// the stream is open small: the request set-up (open) and the verdict (finish) return before
// or run after the read loop, so only streamState.read's small frame sits under the blocking
// read. A goroutine parked on a deep stack keeps an 8 KiB stack (GC halves a stack only when
// under a quarter of it is in use), which was half the generator's memory per open stream.
func (r *runner) stream(ctx context.Context, p *sessionPlan, intended time.Time, capture int) sessionResult {
	s := &streamState{r: r, ctx: ctx, p: p, intended: intended, capture: capture, counting: capture == 0}
	defer s.close()
	if !onFreshStack(s.open) {
		return s.res
	}
	s.read()
	return s.finish()
}

// onFreshStack runs f on a new goroutine and waits for it. The HTTP client and the request's
// set-up call deep (net/http, TLS-free but still a dozen large frames): run on the session's
// goroutine they would grow its stack to 8 KiB for the stream's whole life, since a parked
// reader can never shrink below a quarter in use. A fresh goroutine's stack is freed when it
// ends; starting one costs about a microsecond per session.
func onFreshStack(f func() bool) bool {
	done := make(chan bool, 1)
	go func() { done <- f() }()
	return <-done
}

// streamState is one session's stream between open, read and finish.
type streamState struct {
	r        *runner
	ctx      context.Context
	p        *sessionPlan
	intended time.Time
	capture  int
	counting bool

	m       *sessionMetrics
	res     sessionResult
	sctx    context.Context // the stream's own context: ctx bounded by the stream timeout
	act     *clientAction
	checker protocol.Checker
	dec     *sse.Decoder
	// streamErr is how reading the stream ended (nil: at its end, or the client left).
	streamErr error

	// Released by close, in reverse order of acquisition.
	active    bool
	cancel    context.CancelFunc
	timer     *time.Timer // time-triggered abort
	stopTimer *time.Timer // time-triggered stop
	body      io.Closer
}

// close releases what open acquired.
func (s *streamState) close() {
	if s.body != nil {
		_ = s.body.Close()
	}
	if s.stopTimer != nil {
		s.stopTimer.Stop()
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.cancel != nil {
		s.cancel()
	}
	if s.active {
		s.r.rec.active.Add(-1)
	}
}

// open sends the request and checks the response head. It reports false when the session
// already ended (s.res holds its result).
//
//go:noinline
func (s *streamState) open() bool {
	r, p, intended, counting := s.r, s.p, s.intended, s.counting
	rec := r.rec
	m := rec.session(p.pick.Index, p.pick.Scenario, p.label, counting && !intended.Before(r.warmupEnd))
	s.m = m
	if counting {
		rec.started.Add(1)
		rec.active.Add(1)
		s.active = true
		if lag := time.Since(intended); r.cfg.openLoop() {
			m.startLag = observed(lag)
			if lag > lateStart {
				rec.late.Add(1)
			}
		}
	}
	s.res = sessionResult{outcome: OutcomeOK}
	res := &s.res
	exp := &p.session.Expected
	trig, isStop := p.trigger, p.stop
	stopper, _ := p.dialect.(protocol.Stopper)

	sctx, cancel := context.WithTimeoutCause(s.ctx, r.cfg.StreamTimeout, errStreamTimeout)
	s.sctx, s.cancel = sctx, cancel
	act := &clientAction{cancel: cancel}
	s.act = act

	var connectStart time.Time
	trace := &httptrace.ClientTrace{
		ConnectStart: func(string, string) { connectStart = time.Now() },
		ConnectDone: func(_, _ string, err error) {
			if err == nil && !connectStart.IsZero() {
				m.connect.Store(int64(observed(time.Since(connectStart))))
			}
		},
	}
	if trig != nil && trig.BeforeHeaders {
		// The request is on the wire and the runtime has started on it; the response head
		// cannot have arrived yet.
		trace.WroteRequest = func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				act.fire()
			}
		}
	}
	req, err := p.dialect.NewRequest(httptrace.WithClientTrace(sctx, trace), r.cfg.Target, p.session)
	if err != nil {
		// A request we cannot even build is a generator defect, reported as a transport error
		// so it is never silent.
		s.res = r.finishFailed(p, m, res, counting, fmt.Errorf("session %s: %w", p.id, err), "transport")
		return false
	}
	if p.req != nil {
		p.req.apply(req)
	}
	sent := time.Now()
	if trig != nil && !isStop && p.timed {
		s.timer = time.AfterFunc(p.triggerAt, func() { act.fire() })
	}
	resp, err := r.client.Do(req)
	if err != nil {
		switch {
		case act.fired.Load():
			s.res = r.finishAborted(s.ctx, p, m, res, counting, act, nil, nil)
			return false
		case s.hangLimit() != "":
			// No response head before the limit: the user saw nothing at all.
			s.streamErr = err
			s.res = s.finishHung(s.hangLimit() + " (no response headers)")
			return false
		case s.ctx.Err() != nil:
			s.res = s.finishCut()
			return false
		}
		s.res = r.finishFailed(p, m, res, counting, fmt.Errorf("session %s: %w", p.id, err), "transport")
		return false
	}
	s.body = resp.Body
	if !isStop && act.fired.Load() {
		// The client left before the head arrived (Do may still return a response that came
		// in the same instant): it never saw the head, so none is measured.
		s.res = r.finishAborted(s.ctx, p, m, res, counting, act, nil, nil)
		return false
	}
	m.headers = observed(time.Since(intended))
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		if counting {
			if exp.ProviderError != "" && resp.StatusCode >= 400 {
				// The scenario asked the provider to fail; the runtime answered with an HTTP
				// error instead of an error frame. Scripted, so not an error of the run.
				rec.scripted.Add(1)
				rec.ok.Add(1)
				m.flush()
				return false
			}
			rec.httpError(resp.StatusCode)
			rec.failed.Add(1)
			r.noteError(fmt.Errorf("session %s: %s %s: HTTP %d: %s", p.id, req.Method, req.URL.Path, resp.StatusCode, bytes.TrimSpace(body)))
		}
		res.outcome = OutcomeFailed
		res.violations = nil
		if s.capture > 0 {
			res.frames = append(res.frames, r.redact(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body)))
		}
		m.flush()
		return false
	}
	res.violations = append(res.violations, p.dialect.CheckHeaders(resp.Header, p.session)...)
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
	s.checker = p.dialect.NewChecker(p.session)
	s.dec = sse.NewDecoder(resp.Body)
	return true
}

// read reads the stream to its end (or the client's scripted action), feeding the checker
// and the session's metrics. It blocks for the stream's whole life, so its frame is kept
// small: everything rare happens in calls that return.
//
//go:noinline
func (s *streamState) read() {
	p, m, act, checker, dec := s.p, s.m, s.act, s.checker, s.dec
	trig, isStop := p.trigger, p.stop
	seesThinking, seesTools := visible(p, false), visible(p, true)
	var (
		ev                   sse.Event
		pending              int64 // frames not yet added to the shared counter
		chunks               int
		lastChunk            time.Time
		sawThinking, sawTool bool
	)
	for {
		if err := dec.Next(&ev); err != nil {
			if !errors.Is(err, io.EOF) {
				s.streamErr = err
			}
			break
		}
		now := time.Now()
		pending++
		if pending == 32 && s.counting {
			s.r.rec.frames.Add(pending)
			pending = 0
		}
		if s.capture > 0 {
			s.captureFrame(&ev)
		}
		if isStop && !p.session.Stopped && act.fired.Load() {
			// The checker judges the stopped terminal by Session.Stopped, so it must be set
			// before any frame the stop request may have caused is observed. Only this
			// goroutine touches the session.
			p.session.Stopped = true
		}
		obs := checker.Observe(&ev)
		if m.firstEvent == 0 {
			m.firstEvent = observed(now.Sub(s.intended))
		}
		switch obs.Kind {
		case protocol.FrameAnswer:
			chunks++
			if chunks == 1 {
				m.firstChunk = observed(now.Sub(s.intended))
			} else {
				m.gap(now.Sub(lastChunk))
			}
			lastChunk = now
			if trig != nil && trig.AfterChunks > 0 && chunks >= trig.AfterChunks {
				act.fire()
			}
		case protocol.FrameThinking:
			if !sawThinking {
				sawThinking = true
				m.firstThinking = observed(now.Sub(s.intended))
				if trig != nil && trig.DuringThinking && seesThinking {
					act.fire()
				}
			}
		case protocol.FrameToolStart:
			if !sawTool {
				sawTool = true
				if trig != nil && trig.DuringTool && seesTools {
					act.fire()
				}
			}
		case protocol.FrameToolEnd:
			// After a stop, the first tool settlement is how long the runtime took to cancel
			// the running tools (a disconnect hides it; a stop request keeps the stream open).
			if isStop && act.fired.Load() && m.toolCancel == 0 {
				m.toolCancel = observed(now.Sub(act.firedAt()))
			}
		case protocol.FrameTerminal:
			if act.terminalAt.IsZero() {
				act.terminalAt = now
			}
			if isStop && act.fired.Load() && m.stop == 0 {
				m.stop = observed(now.Sub(act.firedAt()))
			}
		}
		if act.fired.Load() && !isStop {
			break // the client left: whatever is still buffered was never "seen"
		}
	}
	if s.counting {
		s.r.rec.frames.Add(pending)
		s.r.rec.bytes.Add(dec.BytesRead())
	}
}

// captureFrame keeps a raw frame of a replayed session.
//
//go:noinline
func (s *streamState) captureFrame(ev *sse.Event) {
	if len(s.res.frames) < s.capture {
		s.res.frames = append(s.res.frames, s.r.redact(frameCapture(ev)))
	}
}

// finish judges the stream read by read and counts the session's outcome.
//
//go:noinline
func (s *streamState) finish() sessionResult {
	r, p, m, res, counting, streamErr := s.r, s.p, s.m, &s.res, s.counting, s.streamErr
	rec := r.rec
	m.duration = observed(time.Since(s.intended))
	sawTerminal := !s.act.terminalAt.IsZero()
	hungBy := ""
	if streamErr != nil {
		hungBy = s.hangLimit()
	}
	if s.act.fired.Load() {
		if p.stop && hungBy != "" && !sawTerminal {
			// A stop asks the runtime to end the stream; one that never does is hung.
			return s.finishHung(hungBy + " (after the stop request)")
		}
		return r.finishAborted(s.ctx, p, m, res, counting, s.act, s.checker, streamErr)
	}
	switch {
	case hungBy != "" && !sawTerminal:
		return s.finishHung(hungBy)
	case hungBy != "":
		// The terminal came but the runtime held the connection open until the limit: the
		// user has the answer, so the stream is judged as if it ended there (a dialect that
		// wants [DONE] after its terminal still says so), not counted as hung or an error.
		streamErr = nil
	case s.ctx.Err() != nil && streamErr != nil:
		return s.finishCut()
	}
	res.violations = append(res.violations, s.checker.Finish(streamErr)...)
	var limit *sse.LimitError
	switch {
	case streamErr != nil && errors.As(streamErr, &limit):
		return r.finishFailed(p, m, res, counting, streamErr, "decode")
	case streamErr != nil:
		return r.finishFailed(p, m, res, counting, fmt.Errorf("session %s: read stream: %w", p.id, streamErr), "transport")
	}
	if counting {
		if p.session.Expected.ProviderError != "" {
			rec.scripted.Add(1)
		}
		if len(res.violations) > 0 {
			rec.failed.Add(1)
			rec.failedByViolations(res.violations)
			res.outcome = OutcomeFailed
		} else {
			rec.ok.Add(1)
		}
		r.noteViolations(p, res.violations)
	}
	m.flush()
	return *res
}

// hangLimit names the limit that ended the stream's context (the run's grace period or the
// stream timeout), or returns "" when none did: the stream ended by itself, the client left,
// or the caller cancelled the run.
func (s *streamState) hangLimit() string {
	if s.sctx == nil {
		return ""
	}
	switch cause := context.Cause(s.sctx); {
	case errors.Is(cause, errGraceEnded):
		return "the " + s.r.cfg.Grace.String() + " grace period"
	case errors.Is(cause, errStreamTimeout):
		return "the " + s.r.cfg.StreamTimeout.String() + " stream timeout"
	case errors.Is(cause, errReplayLimit):
		return "the replay's " + s.r.replayLimit().String() + " limit"
	}
	return ""
}

// finishHung closes out a session whose stream had no terminal frame when limit ended it: a
// failure, raised as R-terminal and counted apart as hung. The checker judges only what
// arrived (a cut stream is partial), so the missing end is R-terminal's finding alone.
func (s *streamState) finishHung(limit string) sessionResult {
	r, p, m, res := s.r, s.p, s.m, &s.res
	res.outcome = OutcomeHung
	acted := s.act != nil && s.act.fired.Load()
	if acted {
		// The checker judges what arrived in the light of the client's scripted action.
		p.session.Aborted, p.session.Stopped = true, p.stop
	}
	if s.checker != nil {
		res.violations = append(res.violations, s.checker.Finish(cmp.Or(s.streamErr, context.Cause(s.sctx)))...)
	}
	detail := fmt.Sprintf("no terminal within %s (stream open %v)", limit, time.Since(s.intended).Round(time.Millisecond))
	res.violations = append(res.violations, protocol.Violation{Rule: protocol.RTerminal, Detail: detail})
	if s.counting {
		r.rec.hung.Add(1)
		r.rec.failed.Add(1)
		r.noteHungViolations(p, res.violations)
		if acted {
			// The client stopped: whether the provider saw it go is still worth knowing.
			r.aborts.add(abortRecord{
				index: p.pick.Index, session: p.id, scenario: p.pick.Scenario, dialect: p.label, at: s.act.firedAt(),
				duringTool: duringTool(p.session.Expected.Client),
			})
		}
	} else {
		res.frames = append(res.frames, "hung: "+detail)
	}
	m.flush()
	return *res
}

// finishCut closes out a session the caller cancelled (Run's context) before it ended:
// nothing is judged, and it is counted apart, not as an abort or a failure.
func (s *streamState) finishCut() sessionResult {
	s.res.outcome = OutcomeCut
	if s.counting {
		s.r.rec.cut.Add(1)
	}
	s.m.flush()
	return s.res
}

// lateStart is how far behind its intended time an open-loop start may be before it counts as
// late: scheduler wake-up jitter under a millisecond is not a missed schedule.
const lateStart = time.Millisecond

// finishFailed counts a transport or decode failure.
func (r *runner) finishFailed(p *sessionPlan, m *sessionMetrics, res *sessionResult, counting bool, err error, kind string) sessionResult {
	res.outcome = OutcomeFailed
	if counting {
		if kind == "decode" {
			r.rec.decode.Add(1)
		} else {
			r.rec.transport.Add(1)
		}
		r.rec.failed.Add(1)
		r.noteError(err)
		r.noteViolations(p, res.violations)
	} else {
		res.frames = append(res.frames, "error: "+r.redact(err.Error()))
	}
	m.flush()
	return *res
}

// finishAborted closes out a session the client aborted or stopped on purpose.
func (r *runner) finishAborted(ctx context.Context, p *sessionPlan, m *sessionMetrics, res *sessionResult, counting bool, act *clientAction, checker protocol.Checker, streamErr error) sessionResult {
	res.outcome = OutcomeAborted
	p.session.Aborted = true
	stopped := act.stopDone != nil
	if stopped {
		p.session.Stopped = true
		select {
		case out := <-act.stopDone:
			// A 404 for a run whose terminal we had already received is a stop that arrived
			// after the run finished on its own: a race, not an error.
			late := out.status == http.StatusNotFound && !act.terminalAt.IsZero() && !act.terminalAt.After(out.at)
			if out.err != nil && !late && counting {
				r.rec.transport.Add(1)
				r.noteError(out.err)
			}
		case <-ctx.Done():
		}
	}
	if checker != nil {
		if stopped {
			res.violations = append(res.violations, checker.Finish(streamErr)...)
		} else {
			res.violations = append(res.violations, checker.Finish(nil)...)
		}
	}
	if counting {
		r.rec.aborted.Add(1)
		r.noteViolations(p, res.violations)
		r.aborts.add(abortRecord{
			index: p.pick.Index, session: p.id, scenario: p.pick.Scenario, dialect: p.label, at: act.firedAt(),
			duringTool: duringTool(p.session.Expected.Client),
		})
	}
	m.flush()
	return *res
}

// stopOutcome is how the stop request went: the HTTP status (0 when none came back), when
// the answer arrived, and an error for anything but 200.
type stopOutcome struct {
	status int
	at     time.Time
	err    error
}

// sendStop sends the compose stop request for p's run.
func (r *runner) sendStop(ctx context.Context, s protocol.Stopper, p *sessionPlan, resp *http.Response) stopOutcome {
	req, err := s.NewStopRequest(ctx, r.cfg.Target, p.session, resp)
	if err != nil {
		return stopOutcome{at: time.Now(), err: fmt.Errorf("session %s: stop request: %w", p.id, err)}
	}
	if p.req != nil {
		p.req.apply(req)
	}
	sr, err := r.client.Do(req)
	if err != nil {
		return stopOutcome{at: time.Now(), err: fmt.Errorf("session %s: stop request: %w", p.id, err)}
	}
	defer sr.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(sr.Body, 512))
	out := stopOutcome{status: sr.StatusCode, at: time.Now()}
	if sr.StatusCode != http.StatusOK {
		out.err = fmt.Errorf("session %s: stop request: HTTP %d: %s", p.id, sr.StatusCode, body)
	}
	return out
}

// triggerTime is when a time-based trigger fires, measured from the request: After as given;
// during thinking or a tool the client cannot see, the scripted moment (scaled like the mock's
// clock). Frame-triggered actions return false.
func (r *runner) triggerTime(p *sessionPlan, script *scenarios.Script, t *scenarios.Trigger) (time.Duration, bool) {
	switch {
	case t.After > 0:
		return t.After, true
	case t.DuringThinking && !visible(p, false):
		if at, ok := scriptedThinking(script); ok {
			return time.Duration(float64(at) * r.cfg.ScriptTimeScale), true
		}
	case t.DuringTool && !visible(p, true):
		if at, ok := scriptedTool(script); ok {
			return time.Duration(float64(at) * r.cfg.ScriptTimeScale), true
		}
	}
	return 0, false
}

// turnLength is how long a turn keeps the conversation busy: its last frame, then its
// (parallel) tools.
func turnLength(t *scenarios.ScriptTurn) time.Duration {
	var d time.Duration
	if n := len(t.Steps); n > 0 {
		d = t.Steps[n-1].At
	}
	var tools time.Duration
	for _, c := range t.ToolCalls {
		tools = max(tools, c.Duration)
	}
	return d + tools
}

// scriptedThinking is the middle of the first thinking span of the script, from the first
// request: the moment the model is certainly thinking.
func scriptedThinking(s *scenarios.Script) (time.Duration, bool) {
	var base time.Duration
	for ti := range s.Turns {
		t := &s.Turns[ti]
		for i, st := range t.Steps {
			if st.Kind != scenarios.StepThinking {
				continue
			}
			end := st.At + time.Millisecond
			for _, next := range t.Steps[i+1:] {
				if next.Kind != scenarios.StepThinking {
					end = next.At
					break
				}
			}
			return base + (st.At+end)/2, true
		}
		base += turnLength(t)
	}
	return 0, false
}

// scriptedTool is the middle of the first tool run (the shortest tool of the first turn with
// tools), from the first request.
func scriptedTool(s *scenarios.Script) (time.Duration, bool) {
	var base time.Duration
	for ti := range s.Turns {
		t := &s.Turns[ti]
		if len(t.ToolCalls) > 0 {
			var end time.Duration
			if n := len(t.Steps); n > 0 {
				end = t.Steps[n-1].At
			}
			shortest := t.ToolCalls[0].Duration
			for _, c := range t.ToolCalls[1:] {
				shortest = min(shortest, c.Duration)
			}
			return base + end + shortest/2, true
		}
		base += turnLength(t)
	}
	return 0, false
}

// duringTool tells whether the client acts while a tool runs.
func duringTool(c scenarios.Client) bool {
	t := c.Abort
	if t == nil {
		t = c.Stop
	}
	return t != nil && t.DuringTool
}
