package mockprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

// request is one model request being served: what was parsed, selected and recorded so far.
type request struct {
	srv       *Server
	wire      *wire
	w         http.ResponseWriter
	r         *http.Request
	seq       uint64
	arrival   time.Time
	ref       sessionRef
	parsed    wireRequest
	dir       scenarios.Directive // the request's resolved directive; the zero value for an endpoint request.
	script    *scenarios.Script
	turn      *scenarios.ScriptTurn
	turnIdx   int
	tokens    int
	frames    int
	responded bool // set once response bytes were flushed.
}

func (s *Server) modelHandler(wr *wire) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.newRequest(wr, w, r).serve()
	})
}

// newRequest starts the request's session record.
//
// The stack frames under which a stream plays stay small: a handler goroutine starts with an
// 8 KiB stack, and the first flush (net/http formats the Date header there) is the deepest
// point of a request. With the session record and serve's validation in the frames below it,
// every stream outgrew its stack and copied it, ~7% of the mock's CPU at 2,000 new streams a
// second (issue 15's profile). Kept out of line so that its record's frame is gone by then.
//
//go:noinline
func (s *Server) newRequest(wr *wire, w http.ResponseWriter, r *http.Request) *request {
	req := &request{srv: s, wire: wr, w: w, r: r, seq: s.requests.Add(1), arrival: arrivalOf(r, time.Now())}
	session := r.Header.Get(HeaderSession)
	if len(session) > MaxSelectorBytes {
		session = "" // refused by selectScenario; an oversized id is never stored
	}
	req.ref = s.sessions.add(SessionRecord{
		Session: session, Wire: wr.name, Start: req.arrival, Outcome: OutcomeStreaming,
	})
	return req
}

// serve reads the body, validates and selects (prepare), applies admission, then plays the
// turn.
func (q *request) serve() {
	s := q.srv
	if q.r.Method != http.MethodPost {
		q.refuseMethod()
		return
	}
	// The body is read here rather than in prepare: net/http's read path is deep, and under
	// prepare's frame it could still outgrow the first stack.
	body, err := q.readBody()
	if err != nil {
		q.bodyFailed(err, len(body))
		return
	}
	if !q.prepare(body) {
		return
	}
	queued, err := s.admission.acquire(q.r.Context())
	if err != nil {
		if errors.Is(err, errQueueFull) || errors.Is(err, errQueueTimeout) {
			q.w.Header().Set("Retry-After", "1")
			q.ref.update(func(rec *SessionRecord) { rec.Queued = queued })
			q.fail(http.StatusTooManyRequests, errRateLimit, fmt.Sprintf("mock provider at capacity (max %d concurrent streams, queue %d): %v",
				s.opts.Capacity.MaxConcurrent, s.opts.Capacity.QueueSize, err))
			return
		}
		q.clientGone(time.Now(), func(rec *SessionRecord) { rec.Queued = queued })
		return
	}
	defer s.admission.release()
	q.ref.update(func(rec *SessionRecord) { rec.Queued = queued })
	s.metrics.started.WithLabelValues(q.wire.name).Inc()
	// The schedule starts at the request's arrival, or when it got its slot if it had to
	// queue: time spent queued adds to its TTFT, as at a saturated provider.
	base := q.arrival
	if queued > 0 {
		base = time.Now()
	}
	if q.parsed.Stream {
		q.stream(base)
	} else {
		q.respond(base)
	}
}

// refuseMethod answers a request that is not a POST.
func (q *request) refuseMethod() {
	q.w.Header().Set("Allow", http.MethodPost)
	q.fail(http.StatusMethodNotAllowed, errInvalidRequest,
		fmt.Sprintf("method %s is not allowed on %s: use POST", q.r.Method, q.r.URL.Path))
}

// bodyFailed answers a request whose body could not be read (got bytes of it).
func (q *request) bodyFailed(err error, got int) {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		q.fail(http.StatusRequestEntityTooLarge, errRequestTooLarge,
			fmt.Sprintf("request body is larger than the mock's limit of %d bytes", tooBig.Limit))
	case errors.Is(err, os.ErrDeadlineExceeded):
		q.fail(http.StatusRequestTimeout, errInvalidRequest,
			fmt.Sprintf("request body not received within %v (got %d bytes)", q.srv.opts.BodyReadTimeout, got))
	default:
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("reading request body: %v", err))
	}
}

// prepare parses the body, validates and selects the request's turn, and answers the
// errors: bad input and scripted HTTP faults. It reports whether the turn is to be played. It is a function of
// its own so that its frame (every error message's formatting) is gone while the turn plays
// (see newRequest).
func (q *request) prepare(body []byte) bool {
	s := q.srv
	parsed, err := q.wire.parse(body)
	if err != nil {
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("invalid request body: %v", err))
		return false
	}
	q.parsed = parsed
	dir, err := s.selectScenario(q.r.Header, parsed.LastUserText)
	if errors.Is(err, errNoScenario) && parsed.MaxTokens > 0 {
		// Earlier assistant messages are a conversation's history (load --conversations, a
		// --prompts record of messages), not a scripted tool loop: answered alike.
		return q.prepareEndpoint()
	}
	if err != nil {
		q.fail(http.StatusBadRequest, errInvalidRequest, err.Error())
		return false
	}
	q.dir = dir
	q.ref.update(func(rec *SessionRecord) {
		rec.Session, rec.Scenario, rec.Seed, rec.Turn = dir.Session, dir.Scenario, dir.Seed, parsed.AssistantTurns
	})
	sc, ok := s.library.Get(dir.Scenario)
	if !ok {
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("unknown scenario %q; known scenarios: %s",
			dir.Scenario, strings.Join(s.library.Names(), ", ")))
		return false
	}
	q.script = s.scripts.render(sc, dir.Seed)
	// A swarm child is named by the header or by the directive's child= (which survives a
	// gateway that drops custom headers); when both are there they must agree.
	path := q.r.Header.Get(HeaderChild)
	if dir.Child != "" && path != "" && dir.Child != path {
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("swarm child %q in header %s but %q in the directive: name one",
			clipSelector(path), HeaderChild, clipSelector(dir.Child)))
		return false
	}
	path = cmp.Or(path, dir.Child)
	if path != "" {
		child, ok := q.script.Child(path)
		if !ok || len(path) > MaxSelectorBytes {
			q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("scenario %s has no swarm child at path %q (header %s or directive child=)",
				dir.Scenario, clipSelector(path), HeaderChild))
			return false
		}
		q.ref.update(func(rec *SessionRecord) { rec.Child = path })
		q.script = child
	}
	q.turnIdx = parsed.AssistantTurns
	if q.turnIdx >= len(q.script.Turns) {
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf(
			"scenario %s has %d turn(s) but the request already holds %d assistant message(s): there is no turn %d to play",
			dir.Scenario, len(q.script.Turns), q.turnIdx, q.turnIdx))
		return false
	}
	q.turn = &q.script.Turns[q.turnIdx]
	if dir.ToolPrefix != "" && len(q.turn.ToolCalls) > 0 {
		// The runtime shows its tools to the model under prefixed names: the calls carry
		// them. A copy of the turn: the cached script is shared.
		turn := *q.turn
		turn.ToolCalls = slices.Clone(turn.ToolCalls)
		for i := range turn.ToolCalls {
			turn.ToolCalls[i].Name = dir.ToolPrefix + turn.ToolCalls[i].Name
		}
		q.turn = &turn
	}

	if status := q.turn.HTTPStatus; status != 0 {
		s.metrics.providerErrors.WithLabelValues(q.wire.name, "http-"+strconv.Itoa(status)).Inc()
		if status == http.StatusTooManyRequests {
			q.w.Header().Set("Retry-After", "1")
		}
		q.w.Header().Set(HeaderFault, "http-"+strconv.Itoa(status))
		q.fail(status, faultErrorKind(status), fmt.Sprintf(
			"%s [streambench scenario %s, turn %d: scripted HTTP %d fault]", q.turn.ErrorMessage, dir.Scenario, q.turnIdx, status))
		return false
	}
	return true
}

// readBody reads the whole body within the size limit and the body read timeout. After a
// good read the deadline is cleared, so it bounds the body only, never the stream; after a
// failed one it stays, so net/http's discard of the unread rest fails at once instead of
// waiting for a stalled client, and the connection is closed.
func (q *request) readBody() ([]byte, error) {
	limited := http.MaxBytesReader(q.w, q.r.Body, q.srv.opts.MaxBody)
	timeout := q.srv.opts.BodyReadTimeout
	if timeout < 0 {
		return io.ReadAll(limited)
	}
	rc := http.NewResponseController(q.w)
	deadlineSet := rc.SetReadDeadline(time.Now().Add(timeout)) == nil
	body, err := io.ReadAll(limited)
	if err != nil {
		q.w.Header().Set("Connection", "close")
	} else if deadlineSet {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return body, err
}

// errNoScenario is selectScenario's error for a request that names no scenario.
var errNoScenario = errors.New("no scenario selected")

// prepareEndpoint selects the turn of a request without a directive that asks for max_tokens,
// as an application's request to an inference endpoint does: one turn of max_tokens generated
// tokens (at most MaxEndpointTokens) paced by the library's plain-answer timing
// (scenarios.DefaultTiming without it), its text drawn from the request's sequence number.
func (q *request) prepareEndpoint() bool {
	timing := scenarios.DefaultTiming()
	if sc, ok := q.srv.library.Get("plain-answer"); ok {
		timing = sc.Timing
	}
	digests := mockrecords.PromptDigests(q.parsed.LastUserText)
	q.ref.update(func(rec *SessionRecord) { rec.PromptDigests = digests })
	sc := scenarios.Endpoint(timing, min(q.parsed.MaxTokens, MaxEndpointTokens))
	q.ref.update(func(rec *SessionRecord) { rec.Scenario, rec.Seed = sc.Name, q.seq })
	// Not through the script cache: its key is the scenario, new for every request here.
	q.script = sc.Render(q.seq)
	q.turn = &q.script.Turns[0]
	return true
}

// MaxEndpointTokens bounds the answer to a request without a directive (its max_tokens).
const MaxEndpointTokens = 32_768

// selectScenario resolves the directive in the last user message and the X-Streambench-*
// headers, field by field, headers winning.
func (s *Server) selectScenario(h http.Header, lastUser string) (scenarios.Directive, error) {
	dir, found, err := scenarios.ParseDirective(lastUser)
	if err != nil {
		return dir, fmt.Errorf("last user message: %w", err)
	}
	if v := h.Get(HeaderScenario); v != "" {
		dir.Scenario, found = v, true
	}
	if v := h.Get(HeaderSeed); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return dir, fmt.Errorf("header %s %q: expected a decimal unsigned 64-bit integer", HeaderSeed, v)
		}
		dir.Seed = seed
	}
	if v := h.Get(HeaderSession); v != "" {
		dir.Session = v
	}
	if v := h.Get(HeaderToolPrefix); v != "" {
		if err := scenarios.ValidToolPrefix(v); err != nil {
			return dir, fmt.Errorf("header %s: %w", HeaderToolPrefix, err)
		}
		dir.ToolPrefix = v
	}
	if len(dir.Session) > MaxSelectorBytes {
		return dir, fmt.Errorf("session id is %d bytes, at most %d (directive session= or header %s)", len(dir.Session), MaxSelectorBytes, HeaderSession)
	}
	if len(dir.Scenario) > MaxSelectorBytes {
		return dir, fmt.Errorf("scenario name is %d bytes, at most %d (directive scenario= or header %s)", len(dir.Scenario), MaxSelectorBytes, HeaderScenario)
	}
	if !found {
		return dir, fmt.Errorf("%w: put a directive like [[streambench scenario=NAME seed=N session=ID]] "+
			"in the last user message, or send the %s header (with optional %s and %s), or ask for max_tokens "+
			"(then the answer is that many generated tokens); known scenarios: %s",
			errNoScenario, HeaderScenario, HeaderSeed, HeaderSession, strings.Join(s.library.Names(), ", "))
	}
	return dir, nil
}

// stream plays the turn as an event stream, each step at base + its scripted offset.
func (q *request) stream(base time.Time) {
	s := q.srv
	rc := http.NewResponseController(q.w)
	fault := s.opts.Fault
	var w http.ResponseWriter = q.w
	if rewrite := fault.rewriter(q.wire.name); rewrite != nil {
		w = faultResponseWriter{ResponseWriter: q.w, fw: &faultWriter{w: q.w, rewrite: rewrite}}
	}
	includeUsage := q.parsed.IncludeUsage && !(fault == FaultOpenAINoUsage && q.wire.name == "openai")
	sw := q.wire.newStream(w, q.meta(), includeUsage)

	if !q.flushed(rc, sw.Start()) {
		return
	}
	q.firstByte(time.Now())

	waiter, unhook := q.newWaiter()
	defer unhook()
	sched := newSchedule(base, s.opts.TimeScale, s.admission)
	turn := q.turn
	for i := range turn.Steps {
		step := &turn.Steps[i]
		due := sched.due(step.At)
		if gone, at := q.waitUntil(waiter, due, sw); gone {
			q.clientGone(at, nil)
			return
		}
		if !q.flushed(rc, sw.Step(turn, fault.step(turn, step))) {
			return
		}
		s.pacing.record(q.seq, time.Since(due).Microseconds())
		q.frames++
		q.tokens += step.Tokens
		if turn.ErrorAfterStep == i && fault != FaultDropError {
			q.providerError(sw, rc)
			return
		}
	}
	if turn.ErrorAfterStep >= len(turn.Steps) && fault != FaultDropError {
		q.providerError(sw, rc)
		return
	}
	if q.flushed(rc, sw.Finish(turn)) {
		q.finish(OutcomeCompleted, http.StatusOK, "")
	}
}

// flushed flushes what a write (whose error is err) wrote; false, the request failed, when
// either failed.
func (q *request) flushed(rc *http.ResponseController, err error) bool {
	if err == nil {
		err = rc.Flush()
	}
	if err != nil {
		q.writeFailed(err)
		return false
	}
	return true
}

// newWaiter returns a waiter on the server's clock that the request's context interrupts, and
// the function that unhooks it: each wait then blocks on the waiter's channel alone, where
// selecting on the context's channel as well cost more at every token.
func (q *request) newWaiter() (*hrtimer.Waiter, func() bool) {
	w := q.srv.opts.Clock.NewWaiter()
	return w, context.AfterFunc(q.r.Context(), w.Interrupt)
}

// waitUntil sleeps on the stream's waiter (from newWaiter) until due, sending a keep-alive ping through sw
// (on wires that have one) when the silence would exceed pingInterval. It returns gone=true,
// with the time it noticed, as soon as the client goes away or a ping cannot be written.
func (q *request) waitUntil(waiter *hrtimer.Waiter, due time.Time, sw streamWriter) (gone bool, at time.Time) {
	for {
		wake := due
		ping := sw != nil && q.wire.pings && time.Until(due) > pingInterval
		if ping {
			wake = time.Now().Add(pingInterval)
		}
		// Until returns false once the context's AfterFunc interrupted the waiter, and checks
		// that after every wake: a client gone meanwhile is noticed here, not by a write into
		// the void. (Selecting on ctx.Done() as well cost 2% of the mock's CPU per token.)
		if !waiter.Until(nil, wake) {
			return true, time.Now()
		}
		if !ping {
			return false, time.Time{}
		}
		err := sw.Ping()
		if err == nil {
			err = http.NewResponseController(q.w).Flush()
		}
		if err != nil {
			q.srv.logger.Debug("ping failed", "wire", q.wire.name, "error", err)
			return true, time.Now()
		}
	}
}

// providerError ends the stream with the scripted mid-stream error.
func (q *request) providerError(sw streamWriter, rc *http.ResponseController) {
	q.srv.metrics.providerErrors.WithLabelValues(q.wire.name, "midstream").Inc()
	if q.flushed(rc, sw.Error(q.turn.ErrorMessage)) {
		q.finish(OutcomeProviderError, http.StatusOK, q.turn.ErrorMessage)
	}
}

// respond plays a non-streaming request: it waits until the turn's last step is due (or the
// step the scripted error follows), then answers with the whole message or the error.
func (q *request) respond(base time.Time) {
	s := q.srv
	turn := q.turn
	last := len(turn.Steps) - 1
	failing := turn.ErrorAfterStep >= 0
	if failing && turn.ErrorAfterStep < last {
		last = turn.ErrorAfterStep
	}
	if last >= 0 {
		sched := newSchedule(base, s.opts.TimeScale, s.admission)
		var due time.Time
		for i := 0; i <= last; i++ {
			due = sched.due(turn.Steps[i].At)
		}
		waiter, unhook := q.newWaiter()
		defer unhook()
		if gone, at := q.waitUntil(waiter, due, nil); gone {
			q.clientGone(at, nil)
			return
		}
	}
	if failing {
		s.metrics.providerErrors.WithLabelValues(q.wire.name, "midstream").Inc()
		q.firstByte(time.Now())
		q.w.Header().Set(HeaderFault, "midstream")
		q.wire.writeError(q.w, http.StatusInternalServerError, q.wire.errType(errServer), q.turn.ErrorMessage)
		q.finish(OutcomeProviderError, http.StatusInternalServerError, q.turn.ErrorMessage)
		return
	}
	if err := q.wire.writeResponse(q.w, turn, q.meta()); err != nil {
		q.writeFailed(err)
		return
	}
	q.firstByte(time.Now())
	for i := range turn.Steps {
		q.tokens += turn.Steps[i].Tokens
	}
	q.frames = 1
	q.finish(OutcomeCompleted, http.StatusOK, "")
}

// meta is the response identity for the wire's writers.
func (q *request) meta() streamMeta {
	id := q.wire.idPrefix + strconv.FormatUint(q.seq, 10)
	if q.wire.responseID != nil && q.dir.Scenario != "" {
		id = q.wire.responseID(q.seq, q.dir, q.turnIdx)
	}
	return streamMeta{
		ID:          id,
		Model:       q.parsed.Model,
		Created:     q.arrival.Unix(),
		InputTokens: q.turn.InputTokens,
	}
}

// fail answers with an HTTP error in the wire's error shape and records it.
func (q *request) fail(status int, kind errorKind, message string) {
	message = boundMessage(message)
	q.srv.metrics.httpErrors.WithLabelValues(q.wire.name, strconv.Itoa(status)).Inc()
	q.srv.logger.Debug("request refused", "wire", q.wire.name, "status", status, "error", message)
	q.wire.writeError(q.w, status, q.wire.errType(kind), message)
	q.finish(OutcomeHTTPError, status, message)
}

// boundMessage cuts the middle out of a message over maxErrorMessageBytes: its start says
// where the problem is and its end what was expected, while the middle is the client's own
// bytes quoted back.
func boundMessage(message string) string {
	if len(message) <= maxErrorMessageBytes {
		return message
	}
	head, tail := maxErrorMessageBytes/2, len(message)-maxErrorMessageBytes/4
	for head > 0 && !utf8.RuneStart(message[head]) {
		head--
	}
	for tail < len(message) && !utf8.RuneStart(message[tail]) {
		tail++
	}
	return message[:head] + fmt.Sprintf("…(%d bytes cut)…", tail-head) + message[tail:]
}

// firstByte records when the first response bytes were flushed.
func (q *request) firstByte(at time.Time) {
	q.responded = true
	q.ref.update(func(rec *SessionRecord) { rec.FirstByte = at })
}

// writeFailed handles a failed write or flush: the client is gone (a broken connection or a
// reset stream), noticed by the write rather than by the context.
func (q *request) writeFailed(err error) {
	q.srv.logger.Debug("stream write failed", "wire", q.wire.name, "error", err)
	q.clientGone(time.Now(), nil)
}

// clientGone records that the client went away at, and ends the request.
func (q *request) clientGone(at time.Time, also func(*SessionRecord)) {
	q.srv.metrics.clientCancelled.WithLabelValues(q.wire.name).Inc()
	q.ref.update(func(rec *SessionRecord) {
		rec.ClientGone = at
		if also != nil {
			also(rec)
		}
	})
	status := http.StatusOK
	if !q.responded {
		status = 0 // nothing was answered: the client left while the request was queued
	}
	q.finish(OutcomeClientCancelled, status, "")
}

// finish closes the request's record.
func (q *request) finish(outcome Outcome, status int, message string) {
	s := q.srv
	if outcome == OutcomeCompleted {
		s.metrics.completed.WithLabelValues(q.wire.name).Inc()
	}
	s.metrics.tokensSent.Add(float64(q.tokens))
	end := time.Now()
	q.ref.update(func(rec *SessionRecord) {
		rec.End, rec.Outcome, rec.Status, rec.Error = end, outcome, status, message
		rec.Tokens, rec.Frames = q.tokens, q.frames
	})
}

// schedule turns scripted offsets into wall-clock due times. Offsets are scaled by TimeScale
// and by the capacity model's slowdown at the moment each step is scheduled: when the factor
// changes, the schedule re-anchors at the previous step, so a change stretches later gaps
// only, never retroactively. Due times come from the intended schedule, never from when the
// previous frame actually went out, so lateness does not accumulate.
type schedule struct {
	timeScale float64
	adm       *admission
	base      time.Time
	// anchor and anchorAt are a scheduled time and its scripted offset from which offsets
	// are scaled by factor.
	anchor   time.Time
	anchorAt time.Duration
	factor   float64
	last     time.Time
	lastAt   time.Duration
}

func newSchedule(base time.Time, timeScale float64, adm *admission) *schedule {
	return &schedule{timeScale: timeScale, adm: adm, base: base, anchor: base, last: base, factor: -1}
}

// due returns when a step scripted at `at` (from the request's arrival) must be emitted.
// Offsets must not decrease.
func (sc *schedule) due(at time.Duration) time.Time {
	if sc.timeScale == 0 {
		return sc.base
	}
	if at < sc.lastAt {
		at = sc.lastAt
	}
	if f := sc.timeScale * sc.adm.slowdown(); f != sc.factor {
		sc.anchor, sc.anchorAt, sc.factor = sc.last, sc.lastAt, f
	}
	sc.last = sc.anchor.Add(time.Duration(float64(at-sc.anchorAt) * sc.factor))
	sc.lastAt = at
	return sc.last
}

// handleSessions serves GET /_streambench/sessions[?session=ID]. A query it cannot read, an
// unknown parameter or a repeated one is a 400: answering every record to a typo'd filter
// would look like an answer to the question asked.
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writePlainError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s: use GET", r.Method, PathSessions))
		return
	}
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writePlainError(w, http.StatusBadRequest, fmt.Sprintf("query %q: %v", r.URL.RawQuery, err))
		return
	}
	for key, values := range query {
		switch {
		case key != "session":
			writePlainError(w, http.StatusBadRequest, fmt.Sprintf("query parameter %q is unknown (known: session)", key))
			return
		case len(values) > 1:
			writePlainError(w, http.StatusBadRequest, fmt.Sprintf("query parameter %q given %d times, want at most one", key, len(values)))
			return
		}
	}
	records := s.Sessions(query.Get("session"))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	if err := enc.Encode(struct {
		Sessions []SessionRecord `json:"sessions"`
	}{records}); err != nil {
		s.logger.Debug("writing sessions failed", "error", err)
	}
}

// handleNoRoute answers every path the mock does not serve with a JSON 404 listing the ones
// it does, in the openai error shape (the mock's endpoints outside a wire have no shape of
// their own).
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) {
	writePlainError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s (endpoints: POST %s, POST %s, POST %s, GET %s, GET %s, GET %s)",
		r.Method, r.URL.Path, PathOpenAI, PathAnthropic, PathResponses, PathSessions, PathMetrics, PathHealth))
}

// writePlainError answers an error on an endpoint outside the two wires, in the openai error
// shape {"error":{"message","type"}}.
func writePlainError(w http.ResponseWriter, status int, message string) {
	errType := "invalid_request_error"
	if status == http.StatusNotFound {
		errType = "not_found_error"
	}
	openai.WriteError(w, status, errType, message)
}

// clipSelector bounds a selector echoed in an error message.
func clipSelector(s string) string {
	if len(s) > MaxSelectorBytes {
		return s[:MaxSelectorBytes] + "…"
	}
	return s
}
