package session

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

// Every path ends in end, which gives the session exactly one outcome. An error outcome is the
// root cause: the checker then judges only what arrived (Finish gets the error), so no rule
// restates it.

// StallWindow is how long a stream open at a limit must have been silent to be stalled.
const StallWindow = 10 * time.Second

// What a checker's Finish is told when the stream ended in an unscripted in-band error, or
// silent (protocol.ErrTruncated: without its terminal).
var (
	errInBand = errors.New("the stream ended in an in-band error")
	errIdle   = errors.New("no byte within the idle timeout")
)

// end closes out the session with outcome o and err: it counts them and flushes the metrics.
func (s *streamState) end(o measure.Outcome, err error) Result {
	r, p, res := s.r, s.p, &s.res
	res.Outcome, res.RetryAfter = o, s.retryAfter
	if err != nil {
		res.Err = err
	}
	rec := r.Rec
	rec.outcome(o)
	if o == measure.OutcomeCompleted && !s.m.afterWarmup() {
		rec.warmupRequests.Add(1)
	}
	switch {
	case o.IsError():
		rec.failed.Add(1)
	case len(res.Violations) > 0:
		rec.failed.Add(1)
		rules := make([]string, 0, len(res.Violations))
		for _, v := range res.Violations {
			rules = append(rules, string(v.Rule))
		}
		slices.Sort(rules)
		bump(rec, rec.failedBy, strings.Join(slices.Compact(rules), ","))
	case o == measure.OutcomeAborted:
		// Neither a success nor a failure of the target.
	default:
		rec.ok.Add(1)
	}
	if r.Ended != nil {
		res.tape, res.redact = s.tape, r.Redact
		r.Ended(p, res)
		res.tape, res.redact = nil, nil
	}
	if s.tape != nil {
		// Here, on a fresh stack (a pool's calls run deep), not at close.
		s.tape.reset()
		tapes.Put(s.tape)
		s.tape = nil
	}
	s.m.tokens.keepText(s.checker)
	s.m.tokens.settle(p.Encoding)
	s.m.flush()
	s.record(o)
	return *res
}

// record hands the request that just ended, with outcome o, to Runner.Record.
func (s *streamState) record(o measure.Outcome) {
	r, p, m := s.r, s.p, s.m
	if r.Record == nil || m == nil {
		return
	}
	rec := measure.Record{Session: p.ID, Scenario: p.Pick.Scenario, Dialect: p.Label, Target: p.Pick.Target,
		Start: m.intended, TTFTMs: measure.Millis(m.tokens.firstToken), TTFCMs: measure.Millis(m.firstChunk),
		E2EMs: measure.Millis(m.duration), ITLMs: measure.Millis(m.tokens.tpot()), OutputTokens: m.tokens.count(),
		Outcome: o, Warmup: !m.record}
	if p.conversation != nil {
		rec.Turn = p.Session.Turn + 1
	}
	for _, v := range s.res.Violations {
		if rule := string(v.Rule); !slices.Contains(rec.Rules, rule) {
			rec.Rules = append(rec.Rules, rule)
		}
	}
	slices.Sort(rec.Rules)
	r.Record(&rec)
}

// finish judges the stream read by read and gives the session its outcome.
//
//go:noinline
func (s *streamState) finish() Result {
	p, res, streamErr := s.p, &s.res, s.streamErr
	s.m.duration = observed(time.Since(s.intended))
	limit := s.limit()
	if s.act.fired.Load() {
		if p.stop && limit != nil && !s.turnTerminal {
			// A stop the runtime never ended the stream for is not an abort.
			return s.finishUnfinished("after the stop request")
		}
		return s.finishAborted(true, streamErr)
	}
	switch {
	case limit != nil && !s.turnTerminal:
		return s.finishUnfinished("")
	case limit != nil:
		// The terminal came but the connection was held open: judged as if it ended there
		// (a dialect that wants [DONE] after its terminal still says so).
		streamErr = nil
	case s.ctx.Err() != nil && streamErr != nil:
		return s.finishCut()
	}
	var limitErr *sse.LimitError
	switch {
	case streamErr != nil && errors.As(streamErr, &limitErr):
		res.Violations = append(res.Violations, s.checker.Finish(streamErr)...)
		return s.end(measure.OutcomeDecodeError, fmt.Errorf("session %s: decode stream from %s: %w", p.ID, s.host, streamErr))
	case streamErr != nil:
		res.Violations = append(res.Violations, s.checker.Finish(streamErr)...)
		switch {
		case s.contentLength >= 0 && errors.Is(streamErr, io.ErrUnexpectedEOF):
			// net/http says only "unexpected EOF" for a body cut short of its length.
			streamErr = fmt.Errorf("body ended before its Content-Length of %d bytes: %w", s.contentLength, streamErr)
		case errors.Is(streamErr, io.ErrUnexpectedEOF) && s.dec.BytesRead() == 0:
			// Go's httputil.ReverseProxy cuts so when it races its own request body
			// (golang/go#40747; loadgen TestStockReverseProxy).
			streamErr = fmt.Errorf("%w (the target closed the response before its first byte; a Go httputil.ReverseProxy in the path does so when it races its own request body, golang/go#40747)", streamErr)
		}
		return s.end(measure.OutcomeTransportError, fmt.Errorf("session %s: read stream from %s after %d bytes: %w", p.ID, s.host, s.dec.BytesRead(), streamErr))
	case s.inBand != "" && s.scriptedInBand():
		res.Violations = append(res.Violations, s.checker.Finish(nil)...)
		return s.end(measure.OutcomeScriptedError, nil)
	case s.inBand != "":
		res.Violations = append(res.Violations, s.checker.Finish(errInBand)...)
		return s.end(measure.OutcomeInBandError, fmt.Errorf("session %s: %s answered 200, then an in-band error: %s", p.ID, s.host, measure.Clip(s.inBand, maxInBandQuote)))
	case !s.turnTerminal:
		res.Violations = append(res.Violations, s.checker.Finish(protocol.ErrTruncated)...)
		detail := ""
		if s.dec.Truncated() {
			detail = ", inside an undispatched event or an unterminated line (its data discarded)"
		}
		if tm, ok := s.checker.(protocol.TerminalMissing); ok && tm.TerminalMissing() != "" {
			detail += ": " + tm.TerminalMissing()
		}
		return s.end(measure.OutcomeTruncated, fmt.Errorf("session %s: the stream from %s ended after %d bytes without its terminal%s%s", p.ID, s.host, s.dec.BytesRead(), detail, s.head.note()))
	}
	res.Violations = append(res.Violations, s.checker.Finish(nil)...)
	if s.dec.Truncated() {
		// WHATWG discards an event cut by the end of the stream, so no checker sees it.
		res.Violations = append(res.Violations, protocol.Violation{Rule: protocol.RFraming, Detail: fmt.Sprintf(
			"the stream ended inside an undispatched event or an unterminated line (after %d bytes; its data was discarded)", s.dec.BytesRead())})
	}
	s.judgeOutput()
	return s.end(measure.OutcomeCompleted, nil)
}

// judgeOutput flags an answer without text, thinking or tool call (R-answer-output), which
// would pass otherwise. With ground truth the content rules judge instead (a script may want
// none), and a client sent no answer frames (a PII-redacted canvas) is not judged.
func (s *streamState) judgeOutput() {
	if s.output || (s.p.Session.Endpoint == nil && !s.p.Session.NoGroundTruth) || !s.p.Client.Sees(protocol.FrameAnswer) {
		return
	}
	s.res.Violations = append(s.res.Violations, protocol.Violation{Rule: protocol.RAnswerOutput, Detail: fmt.Sprintf(
		"the answer from %s ended without any text, thinking or tool call (%d bytes of stream)", s.host, s.dec.BytesRead())})
}

// scriptedInBand tells whether an in-band error is the script's: the scenario fails the
// provider (or its plan ends in error), and the client is not a provider-wire one, whose
// scripted failure must come as an HTTP status.
func (s *streamState) scriptedInBand() bool {
	e := &s.p.Session.Expected
	planned := !s.p.Session.NoGroundTruth && e.Plan != nil && e.Plan.EndsInError()
	if !s.p.Session.ScriptedError() && !planned {
		return false
	}
	_, direct := s.p.Client.(protocol.ErrorChecker)
	return !(direct && e.ProviderStatus != 0)
}

// httpError ends the session on a non-200 answer, read for a protocol.ErrorChecker or quoted.
func (s *streamState) httpError(req *http.Request, resp *http.Response) {
	p, res := s.p, &s.res
	limit := int64(512)
	ec, judges := p.Client.(protocol.ErrorChecker)
	if judges {
		limit = 64 << 10
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, limit))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		s.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	// The very status the script's provider failure has.
	e := &p.Session.Expected
	scripted := !p.Session.NoGroundTruth && e.ProviderStatus != 0 && resp.StatusCode == e.ProviderStatus
	if judges && scripted {
		res.Violations = append(res.Violations, ec.CheckError(resp.StatusCode, resp.Header, body, p.Session)...)
	} else {
		res.Violations = nil // the error's headers are not the stream's
	}
	if scripted {
		s.res = s.end(measure.OutcomeScriptedError, nil)
		return
	}
	bump(s.r.Rec, s.r.Rec.httpStatus, resp.StatusCode)
	err := fmt.Errorf("session %s: %s %s: HTTP %d: %s",
		p.ID, req.Method, req.URL.Redacted(), resp.StatusCode, bytes.TrimSpace(body[:min(len(body), 512)]))
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		err = fmt.Errorf("session %s: %s %s: HTTP %d redirect to %s (not followed: a stream request is never redirected)",
			p.ID, req.Method, req.URL.Redacted(), resp.StatusCode, loc)
	}
	s.res = s.end(measure.OutcomeHTTPError, err)
}

// MaxRetryAfter caps how long a closed-loop user honouring Retry-After waits.
const MaxRetryAfter = 30 * time.Second

// retryAfter is a Retry-After header's wait from now, capped at MaxRetryAfter; 0 if not understood.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(max(secs, 0), int64(MaxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// limit is the cause that ended the stream's context when a limit did, else nil.
func (s *streamState) limit() error {
	if s.sctx == nil {
		return nil
	}
	switch cause := context.Cause(s.sctx); {
	case errors.Is(cause, errIdle), errors.Is(cause, errStreamTimeout), errors.Is(cause, ErrGraceEnded):
		return cause
	}
	return nil
}

// finishUnfinished closes out a session whose stream a limit ended: stalled, over time or cut.
func (s *streamState) finishUnfinished(when string) Result {
	r, p, res := s.r, s.p, &s.res
	cause := s.limit()
	acted := s.act != nil && s.act.fired.Load()
	if acted {
		p.Session.Aborted = true
		s.noteStop()
	}
	if s.checker != nil {
		res.Violations = append(res.Violations, s.checker.Finish(cmp.Or(s.streamErr, cause))...)
	}
	open := time.Since(s.intended).Round(time.Millisecond)
	if when != "" {
		when = " (" + when + ")"
	}
	var o measure.Outcome
	var err error
	silent := s.silent()
	switch {
	case errors.Is(cause, errIdle):
		o = measure.OutcomeStalled
		err = fmt.Errorf("session %s: stalled: no byte from %s for the %s idle timeout%s (stream open %v)", p.ID, s.host, r.IdleTimeout, when, open)
	case silent >= StallWindow:
		ended := "the " + r.StreamTimeout.String() + " stream timeout"
		if errors.Is(cause, ErrGraceEnded) {
			ended = "the run's " + r.Grace.String() + " grace period"
		}
		o = measure.OutcomeStalled
		err = fmt.Errorf("session %s: stalled: no byte from %s for %v when %s ended it%s (stream open %v)", p.ID, s.host, silent.Round(time.Millisecond), ended, when, open)
	case errors.Is(cause, ErrGraceEnded):
		o = measure.OutcomeCut
		err = fmt.Errorf("session %s: cut: still open when the run's %s grace period ended%s (stream open %v)", p.ID, r.Grace, when, open)
	default:
		o = measure.OutcomeOverTime
		err = fmt.Errorf("session %s: over time: still delivering at the %s stream timeout%s (stream open %v)", p.ID, r.StreamTimeout, when, open)
	}
	if s.dec != nil && s.m.firstEvent == 0 && s.dec.BytesRead() > 0 {
		err = fmt.Errorf("%w; %d bytes of its body arrived and made no SSE event%s", err, s.dec.BytesRead(), s.head.note())
	}
	if acted {
		s.noteAbort() // whether the provider saw the client go is still worth knowing
	}
	return s.end(o, err)
}

// noteStop tells a stop session's checker that the stop was sent (again is harmless).
func (s *streamState) noteStop() {
	if !s.p.stop || s.checker == nil {
		return
	}
	if so, ok := s.checker.(protocol.StopObserver); ok {
		so.StopSent()
	}
}

// finishCut closes out a session the caller cancelled (the second Ctrl-C): not judged.
func (s *streamState) finishCut() Result {
	s.res.Violations = nil
	return s.end(measure.OutcomeCut, nil)
}

// finishAborted closes out a session the client aborted or stopped; judge says whether the
// turn's checker judges what arrived. A failed stop request is a transport error.
func (s *streamState) finishAborted(judge bool, streamErr error) Result {
	p, res, act := s.p, &s.res, s.act
	p.Session.Aborted = true
	stopped := act.stopDone != nil
	var stopErr error
	if stopped {
		s.noteStop() // a stop fired after the last frame was read
		select {
		case out := <-act.stopDone:
			// A 404 after the terminal came is a stop that lost the race, not an error.
			late := out.status == http.StatusNotFound && !act.terminalAt.IsZero() && !act.terminalAt.After(out.at)
			if out.err != nil && !late {
				stopErr = out.err
			}
		case <-s.ctx.Done():
		}
	}
	if judge && s.checker != nil {
		if !stopped {
			streamErr = nil
		}
		res.Violations = append(res.Violations, s.checker.Finish(streamErr)...)
	}
	s.noteAbort()
	if stopErr != nil {
		return s.end(measure.OutcomeTransportError, stopErr)
	}
	return s.end(measure.OutcomeAborted, nil)
}

func (s *streamState) touch() { s.lastRead.Store(int64(time.Since(monoBase))) }

// touchRead notes a read that delivered bytes on an unstamped stream, never moving time back.
func (s *streamState) touchRead() {
	if t := int64(s.arrived().Sub(monoBase)); t > s.lastRead.Load() {
		s.lastRead.Store(t)
	}
}

// silent is how long ago the stream last delivered bytes (by receive stamp) or was touched.
func (s *streamState) silent() time.Duration {
	last := s.lastRead.Load()
	if w := s.watched.Load(); w != nil {
		if t, ok := w.Latest(); ok {
			last = max(last, int64(t.Sub(monoBase)))
		}
	}
	return time.Since(monoBase) - time.Duration(last)
}

// monoBase is the origin of lastRead's monotonic nanoseconds (a wall clock may step).
var monoBase = time.Now()

// startIdleWatch ends the stream with errIdle once nothing arrived for the idle timeout: a
// timer re-arming itself, one firing per timeout rather than work per read.
func (s *streamState) startIdleWatch() {
	s.touch()
	idle := s.r.IdleTimeout
	if idle <= 0 {
		return
	}
	var check func()
	check = func() {
		since := s.silent()
		if since >= idle {
			s.cancelCause(errIdle)
			return
		}
		s.idle.Reset(idle - since)
	}
	// Armed only once assigned: check re-arms s.idle.
	s.idle = time.AfterFunc(time.Hour, check)
	s.idle.Reset(idle)
}

// watchBody makes an unstamped body's reads touch the stream; a stamped one is returned as is.
func (s *streamState) watchBody(body io.ReadCloser) io.ReadCloser {
	if s.arrivals != nil {
		return body
	}
	return &watchedBody{ReadCloser: body, s: s}
}

type watchedBody struct {
	io.ReadCloser
	s *streamState
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.touchRead()
	}
	return n, err
}

// maxInBandQuote bounds the quote of an in-band error: a whole failed-provider message.
const maxInBandQuote = 1 << 10

// The causes a session's context is cancelled with when a limit ends it.
var (
	// ErrGraceEnded is the cause when the run's grace period ended.
	ErrGraceEnded    = errors.New("the run's grace period ended")
	errStreamTimeout = errors.New("the stream timeout ended")
)

// outcomeList is measure.Outcomes, indexed by the Recorder's counters.
var outcomeList = measure.Outcomes()

// Abort is one session the client aborted or stopped, for the cancel check.
type Abort struct {
	Index                      uint64
	Session, Scenario, Dialect string
	At                         time.Time // wall clock of the abort
	DuringTool                 bool
	// Continues: the request asked the target to go on when the client leaves, so R-abort is
	// judged the other way round.
	Continues bool
}

func (s *streamState) noteAbort() {
	p := s.p
	dc, continuer := p.Client.(protocol.DisconnectContinuer)
	trigger := cmp.Or(p.Session.Expected.Client.Abort, p.Session.Expected.Client.Stop)
	s.res.Abort = &Abort{
		Index: p.Pick.Index, Session: p.ID, Scenario: p.Pick.Scenario, Dialect: p.Label, At: s.act.firedAt(),
		DuringTool: trigger != nil && trigger.DuringTool, Continues: continuer && dc.ContinuesOnDisconnect(),
	}
}
