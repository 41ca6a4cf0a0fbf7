package mockprovider

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/streambench/streambench/protocol"
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

// newRequest starts the request's session record. It is kept out of line, like prepare, so
// that the frames under which a stream plays stay small: the first flush is a request's deepest
// point, and a stream that outgrows its first 8 KiB stack copies it (BenchmarkStreamStack).
//
//go:noinline
func (s *Server) newRequest(wr *wire, w http.ResponseWriter, r *http.Request) *request {
	req := &request{srv: s, wire: wr, w: w, r: r, seq: s.requests.Add(1), arrival: arrivalOf(r, time.Now())}
	session := r.Header.Get(HeaderSession)
	if len(session) > MaxSelectorBytes {
		session = "" // refused by selectScenario; an oversized id is never stored
	}
	req.ref = s.sessions.add(mockrecords.Record{
		Session: session, Wire: wr.name, Start: req.arrival, Outcome: mockrecords.OutcomeStreaming,
	})
	return req
}

// serve reads the body, validates and selects (prepare), applies admission, then plays the turn.
func (q *request) serve() {
	s := q.srv
	if q.r.Method != http.MethodPost {
		q.refuseMethod()
		return
	}
	// Read here, not in prepare: net/http's read path is deep (see newRequest).
	body, err := protocol.ReadRequestBody(q.w, q.r, s.opts.MaxBody, s.opts.BodyReadTimeout)
	if err != nil {
		q.bodyFailed(err, len(body))
		return
	}
	if !q.prepare(body) {
		return
	}
	queued, err := s.admission.acquire(q.r.Context())
	q.ref.update(func(rec *mockrecords.Record) { rec.Queued = queued })
	switch {
	case errors.Is(err, errQueueFull) || errors.Is(err, errQueueTimeout):
		q.w.Header().Set("Retry-After", "1")
		q.fail(http.StatusTooManyRequests, errRateLimit, fmt.Sprintf("mock provider at capacity (max %d concurrent streams, queue %d): %v",
			s.opts.Capacity.MaxConcurrent, s.opts.Capacity.QueueSize, err))
		return
	case err != nil: // the client left while queued
		q.clientGone(time.Now())
		return
	}
	defer s.admission.release()
	s.metrics.started.WithLabelValues(q.wire.name).Inc()
	// Time spent queued adds to the TTFT, as at a saturated provider.
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

// prepare parses the body, selects the turn and answers bad input and scripted HTTP faults; it
// reports whether the turn is to be played (out of line: see newRequest).
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
		// Earlier assistant messages are then a conversation's history, not a tool loop.
		return q.prepareEndpoint()
	}
	if err != nil {
		q.fail(http.StatusBadRequest, errInvalidRequest, err.Error())
		return false
	}
	q.dir = dir
	q.ref.update(func(rec *mockrecords.Record) {
		rec.Session, rec.Scenario, rec.Seed, rec.Turn = dir.Session, dir.Scenario, dir.Seed, parsed.AssistantTurns
	})
	sc, ok := s.opts.Library.Get(dir.Scenario)
	if !ok {
		q.fail(http.StatusBadRequest, errInvalidRequest, fmt.Sprintf("unknown scenario %q; known scenarios: %s",
			dir.Scenario, strings.Join(s.opts.Library.Names(), ", ")))
		return false
	}
	q.script = s.scripts.render(sc, dir.Seed)
	// A swarm child is named by the header or the directive's child=; both must agree.
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
		q.ref.update(func(rec *mockrecords.Record) { rec.Child = path })
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
		// A copy of the turn: the cached script is shared.
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

var errNoScenario = errors.New("no scenario selected")

// prepareEndpoint selects the turn of a request without a directive that asks for max_tokens:
// that many generated tokens at plain-answer's timing.
func (q *request) prepareEndpoint() bool {
	timing := scenarios.DefaultTiming()
	if sc, ok := q.srv.opts.Library.Get("plain-answer"); ok {
		timing = sc.Timing
	}
	sc := scenarios.Endpoint(timing, min(q.parsed.MaxTokens, MaxEndpointTokens))
	digests := mockrecords.PromptDigests(q.parsed.LastUserText)
	q.ref.update(func(rec *mockrecords.Record) { rec.Scenario, rec.Seed, rec.PromptDigests = sc.Name, q.seq, digests })
	// Not cached: the scenario is new for every request.
	q.script = sc.Render(q.seq)
	q.turn = &q.script.Turns[0]
	return true
}

// MaxEndpointTokens bounds the answer to a request without a directive (its max_tokens).
const MaxEndpointTokens = 32_768

// selectScenario resolves the directive in the last user message and the headers, which win.
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
			errNoScenario, HeaderScenario, HeaderSeed, HeaderSession, strings.Join(s.opts.Library.Names(), ", "))
	}
	return dir, nil
}

// stream plays the turn as an event stream, each step at base + its scripted offset.
func (q *request) stream(base time.Time) {
	s := q.srv
	rc := http.NewResponseController(q.w)
	fault := s.opts.Fault
	includeUsage := q.parsed.IncludeUsage && !(fault == FaultOpenAINoUsage && q.wire.name == "openai")
	setStreamHeaders(q.w)
	sw := q.wire.newStream(fault.writer(q.w, q.wire.name, false), q.meta(), includeUsage)

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
			q.clientGone(at)
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
		q.finish(mockrecords.OutcomeCompleted, http.StatusOK, "")
	}
}

// flushed flushes what a write (whose error is err) wrote, and reports whether both worked.
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
// the function that unhooks it (cheaper per token than selecting on the context as well).
func (q *request) newWaiter() (*hrtimer.Waiter, func() bool) {
	w := q.srv.opts.Clock.NewWaiter()
	return w, context.AfterFunc(q.r.Context(), w.Interrupt)
}

// waitUntil sleeps until due, pinging through sw on wires that ping; gone=true, with when it
// noticed, as soon as the client goes away or a ping fails.
func (q *request) waitUntil(waiter *hrtimer.Waiter, due time.Time, sw streamWriter) (gone bool, at time.Time) {
	for {
		wake := due
		ping := sw != nil && q.wire.pings && time.Until(due) > pingInterval
		if ping {
			wake = time.Now().Add(pingInterval)
		}
		// Until returns false once the context interrupted the waiter, checked after every wake.
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
			q.srv.opts.Logger.Debug("ping failed", "wire", q.wire.name, "error", err)
			return true, time.Now()
		}
	}
}

func (q *request) providerError(sw streamWriter, rc *http.ResponseController) {
	q.srv.metrics.providerErrors.WithLabelValues(q.wire.name, "midstream").Inc()
	if q.flushed(rc, sw.Error(q.turn.ErrorMessage)) {
		q.finish(mockrecords.OutcomeProviderError, http.StatusOK, q.turn.ErrorMessage)
	}
}

// respond plays a non-streaming request: at the last step's due time, the whole message or
// error, with the fault's changes to an answer.
func (q *request) respond(base time.Time) {
	s := q.srv
	fault := s.opts.Fault
	turn := fault.answerTurn(q.turn)
	last := len(turn.Steps) - 1
	failing := turn.ErrorAfterStep >= 0 && fault != FaultDropError
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
			q.clientGone(at)
			return
		}
	}
	if failing {
		s.metrics.providerErrors.WithLabelValues(q.wire.name, "midstream").Inc()
		q.firstByte(time.Now())
		q.w.Header().Set(HeaderFault, "midstream")
		q.wire.writeError(q.w, http.StatusInternalServerError, q.wire.errTypes[errServer], q.turn.ErrorMessage)
		q.finish(mockrecords.OutcomeProviderError, http.StatusInternalServerError, q.turn.ErrorMessage)
		return
	}
	q.w.Header().Set("Content-Type", "application/json")
	if err := q.wire.writeResponse(fault.writer(q.w, q.wire.name, true), turn, q.meta()); err != nil {
		q.writeFailed(err)
		return
	}
	q.firstByte(time.Now())
	q.tokens, q.frames = turn.OutputTokens, 1
	q.finish(mockrecords.OutcomeCompleted, http.StatusOK, "")
}

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
	q.srv.opts.Logger.Debug("request refused", "wire", q.wire.name, "status", status, "error", message)
	q.wire.writeError(q.w, status, q.wire.errTypes[kind], message)
	q.finish(mockrecords.OutcomeHTTPError, status, message)
}

// boundMessage cuts the middle (the client's bytes quoted back) out of a message over
// maxErrorMessageBytes, keeping where the problem is and what was expected.
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

func (q *request) firstByte(at time.Time) {
	q.responded = true
	q.ref.update(func(rec *mockrecords.Record) { rec.FirstByte = at })
}

// writeFailed handles a failed write or flush: the client is gone.
func (q *request) writeFailed(err error) {
	q.srv.opts.Logger.Debug("stream write failed", "wire", q.wire.name, "error", err)
	q.clientGone(time.Now())
}

// clientGone records that the client went away at, and ends the request.
func (q *request) clientGone(at time.Time) {
	q.srv.metrics.clientCancelled.WithLabelValues(q.wire.name).Inc()
	q.ref.update(func(rec *mockrecords.Record) { rec.ClientGone = at })
	status := http.StatusOK
	if !q.responded {
		status = 0 // nothing was answered: the client left while the request was queued
	}
	q.finish(mockrecords.OutcomeClientCancelled, status, "")
}

func (q *request) finish(outcome mockrecords.Outcome, status int, message string) {
	s := q.srv
	if outcome == mockrecords.OutcomeCompleted {
		s.metrics.completed.WithLabelValues(q.wire.name).Inc()
	}
	s.metrics.tokensSent.Add(float64(q.tokens))
	end := time.Now()
	q.ref.update(func(rec *mockrecords.Record) {
		rec.End, rec.Outcome, rec.Status, rec.Error = end, outcome, status, message
		rec.Tokens, rec.Frames = q.tokens, q.frames
	})
}

// schedule turns scripted offsets into wall-clock due times, scaled by TimeScale and by the
// capacity model's slowdown when each step is scheduled: a change of factor re-anchors at the
// previous step, so it stretches later gaps only. Due times never depend on when the previous
// frame went out, so lateness does not accumulate.
type schedule struct {
	timeScale float64
	adm       *admission
	base      time.Time
	anchor    time.Time // anchor and anchorAt: where offsets are scaled by factor from.
	anchorAt  time.Duration
	factor    float64
	last      time.Time
	lastAt    time.Duration
}

func newSchedule(base time.Time, timeScale float64, adm *admission) *schedule {
	return &schedule{timeScale: timeScale, adm: adm, base: base, anchor: base, last: base, factor: -1}
}

// due returns when a step scripted at `at` must be emitted (offsets do not decrease).
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

// handleSessions serves GET /_streambench/sessions[?session=ID]. A bad, unknown or repeated
// parameter is a 400: every record for a typo'd filter would look like an answer.
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
		Sessions []mockrecords.Record `json:"sessions"`
	}{records}); err != nil {
		s.opts.Logger.Debug("writing sessions failed", "error", err)
	}
}

// handleNoRoute answers a path the mock does not serve with a 404 listing the ones it does.
func (s *Server) handleNoRoute(w http.ResponseWriter, r *http.Request) {
	writePlainError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s (endpoints: POST %s, POST %s, POST %s, GET %s, GET %s, GET %s)",
		r.Method, r.URL.Path, PathOpenAI, PathAnthropic, PathResponses, PathSessions, PathMetrics, PathHealth))
}

// writePlainError answers an error on an endpoint outside the wires, in the openai error shape.
func writePlainError(w http.ResponseWriter, status int, message string) {
	errType := "invalid_request_error"
	if status == http.StatusNotFound {
		errType = "not_found_error"
	}
	openai.WriteError(w, status, errType, message)
}

func clipSelector(s string) string {
	if len(s) > MaxSelectorBytes {
		return s[:MaxSelectorBytes] + "…"
	}
	return s
}
