package agentruntime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// emitter turns the tool loop's events into one dialect's frames, on the run's goroutine. It
// only appends frames to run.cs (whose write failures cancel the run): the loop flushes before
// every wait, so a burst of provider frames goes out in one write.
type emitter interface {
	open()                             // the response headers and the opening frames (execute sends them with the 200).
	modelStart(turn int)               // before each provider turn is requested.
	thinking(text string)              // a piece of thinking text.
	text(text string)                  // a piece of answer (or preamble) text.
	toolArgs(t *toolRun, piece string) // a piece of t's JSON arguments as the model streams them.
	turnEnd(final bool)                // a provider turn ended: final, or about to run tools.
	toolStart(t *toolRun)              // toolStart and toolEnd bracket each simulated tool.
	toolEnd(t *toolRun)
	finish(res *runResult) // the terminal frames and the end marker (execute flushes them).
}

type runOutcome uint8

const (
	outcomeDone     runOutcome = iota + 1 // the final turn completed
	outcomeFailed                         // provider error, transport error or too many turns
	outcomeStopped                        // compose stop request
	outcomeGone                           // the client left or was dropped: nothing can be written
	outcomeShutdown                       // the server stopped
	outcomePaused                         // a human-input tool settled: the run waits (pause.go)
)

type runResult struct {
	outcome   runOutcome
	err       error
	finalText string     // the final turn's text (the answer).
	tools     []*toolRun // every tool call of the run, in call order.
	usage     protocol.Usage
}

// run is one client stream's tool loop.
type run struct {
	s       *Server
	dep     *Deployment
	dialect string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	cs      *clientStream
	w       http.ResponseWriter
	started time.Time
	id      string
	faults  *Faults
	fired   uint64      // the switches once has fired, as Faults' bits.
	header  http.Header // carries the X-Streambench-* request headers to the provider.
	input   string

	usage          protocol.Usage
	turnText       strings.Builder
	firstChunkDone bool     // the slow-first-chunk delay was served.
	seeds          runSeeds // the state of the Sim seed rules (pause.go, capability.go).
}

// newRun prepares a run for r. A detached run, like every run with the no-cancel fault, goes on
// when its client leaves; every run ends at a hard shutdown.
func (s *Server) newRun(w http.ResponseWriter, r *http.Request, dep *Deployment, dialect, input string, detached bool) *run {
	parent := r.Context()
	noCancel := s.opts.Faults.has("no-cancel") || detached
	if noCancel {
		parent = context.WithoutCancel(parent)
	}
	ctx, cancel := context.WithCancelCause(parent)
	rn := &run{
		s: s, dep: dep, dialect: dialect, ctx: ctx, cancel: cancel, w: w,
		started: time.Now(), faults: &s.opts.Faults, input: input,
		header: forwardHeaders(r.Header),
	}
	beat := time.Duration(0)
	if dialect == compose.Name {
		beat = s.opts.Heartbeat
	}
	rn.cs = newClientStream(w, s.opts.ClientIdleTimeout, beat, func(cause error) {
		if errors.Is(cause, errSlowClient) {
			s.metrics.slowClientsDropped.Inc()
		}
		if !noCancel {
			cancel(cause)
		}
	})
	return rn
}

// forwardHeaders copies the X-Streambench-* headers, which select the mock's scenario.
func forwardHeaders(h http.Header) http.Header {
	var out http.Header
	for k, v := range h {
		if len(k) > len("X-Streambench-") && strings.EqualFold(k[:len("X-Streambench-")], "X-Streambench-") {
			if out == nil {
				out = make(http.Header)
			}
			out[k] = slices.Clone(v)
		}
	}
	return out
}

func (rn *run) execute(em emitter) {
	s := rn.s
	s.active.Add(1)
	defer s.active.Add(-1)
	s.metrics.clientStreamsOpen.WithLabelValues(rn.dialect).Inc()
	s.metrics.clientStreamsTotal.WithLabelValues(rn.dialect).Inc()
	defer s.metrics.clientStreamsOpen.WithLabelValues(rn.dialect).Dec()
	stopHard := context.AfterFunc(s.hardStop, func() { rn.cancel(errShutdown) })
	defer stopHard()
	defer rn.cancel(nil)

	em.open()
	rn.w.WriteHeader(http.StatusOK)
	_ = rn.cs.flush(true)
	rn.cs.startHeartbeat()
	defer rn.cs.close()

	res := rn.loop(em)
	res.usage = rn.usage
	// A run that ended otherwise, or whose "failure" was its cancellation, ends as its context did.
	if res.outcome != outcomeDone && res.outcome != outcomePaused && (res.outcome != outcomeFailed || rn.ctx.Err() != nil) {
		res.outcome, res.err = rn.cancelOutcome(), context.Cause(rn.ctx)
	}
	switch res.outcome {
	case outcomeGone:
		if !errors.Is(rn.cs.failure(), errSlowClient) { // drops are counted as such, not as aborts
			s.metrics.clientAborts.WithLabelValues(rn.dialect).Inc()
		}
		if rn.faults.has("leak-goroutine") {
			go func() { <-s.leakRelease }() // the fault: parked until Shutdown
		}
		return
	case outcomeFailed:
		// A connection's failure warns (a reset, a cut stream, bytes that do not decode); the
		// provider's (most often scripted) error or a rejected plan is information.
		level, msg := slog.LevelInfo, "run failed"
		if errors.As(res.err, new(*providerConnError)) && !errors.As(res.err, new(*protocol.ProviderError)) {
			level, msg = slog.LevelWarn, "run failed: provider connection"
		}
		s.opts.Logger.Log(context.Background(), level, msg, "dialect", rn.dialect, "deployment", rn.dep.Slug, "err", res.err)
	}
	em.finish(res)
	rn.flush()
}

func (rn *run) cancelOutcome() runOutcome {
	switch cause := context.Cause(rn.ctx); {
	case errors.Is(cause, errStopped):
		return outcomeStopped
	case errors.Is(cause, errShutdown):
		return outcomeShutdown
	case errors.Is(cause, errPlanEnded): // a rejected or undecided plan (plan.go)
		return outcomeFailed
	case errors.Is(cause, errPlanEndedDone):
		return outcomeDone
	default:
		return outcomeGone
	}
}

// loop plays model turns until a final one; tools run between turns.
func (rn *run) loop(em emitter) *runResult {
	res := &runResult{}
	msgs := []protocol.Message{{Role: "user", Text: rn.input}}
	for turn := 0; ; turn++ {
		if turn >= rn.s.opts.MaxTurns {
			return &runResult{outcome: outcomeFailed, err: fmt.Errorf("model still calling tools after %d turns", rn.s.opts.MaxTurns), tools: res.tools}
		}
		if rn.ctx.Err() != nil {
			return &runResult{tools: res.tools}
		}
		em.modelStart(turn)
		calls, err := rn.streamTurn(em, msgs)
		if err != nil {
			if rn.ctx.Err() != nil {
				return &runResult{tools: res.tools}
			}
			rn.s.metrics.providerErrors.Inc()
			return &runResult{outcome: outcomeFailed, err: err, tools: res.tools}
		}
		text := rn.turnText.String()
		if len(calls) == 0 {
			em.turnEnd(true)
			return &runResult{outcome: outcomeDone, finalText: rn.finalOutputText(text), tools: res.tools}
		}
		em.turnEnd(false)
		rn.seeds.preambles.WriteString(text)
		res.tools = append(res.tools, calls...)
		toolCtx, expire := rn.toolContext(calls)
		rn.runTurnTools(toolCtx, em, calls)
		end := rn.endByTools(toolCtx, calls, res.tools)
		expire(nil)
		if end != nil {
			return end
		}
		if rn.ctx.Err() != nil {
			return &runResult{tools: res.tools}
		}
		msgs = appendToolTurn(msgs, text, calls)
	}
}

// appendToolTurn appends a turn that ended in tool calls, and their results, to the conversation.
func appendToolTurn(msgs []protocol.Message, text string, calls []*toolRun) []protocol.Message {
	assistant := protocol.Message{Role: "assistant", Text: text, ToolCalls: make([]protocol.ToolCall, len(calls))}
	for i, c := range calls {
		assistant.ToolCalls[i] = protocol.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Args}
	}
	msgs = append(msgs, assistant)
	for _, c := range calls {
		msgs = append(msgs, protocol.Message{Role: "tool", Text: c.Result, ToolCallID: c.ID, IsError: c.Status != scenarios.OutcomeSuccess})
	}
	return msgs
}

// streamTurn requests one model turn, relays its events live and returns its tool calls.
func (rn *run) streamTurn(em emitter, msgs []protocol.Message) ([]*toolRun, error) {
	return rn.providerTurn(rn.ctx, &protocol.ModelRequest{Messages: msgs, Thinking: rn.dep.ModelThinks(), Header: rn.header}, turnSink{
		beforeRequest: rn.flush,
		body: func(body io.Reader) io.Reader {
			rn.turnText.Reset()
			return flushBeforeRead{body, rn}
		},
		thinking: func(text string) {
			if text := rn.admitThinking(text); text != "" {
				em.thinking(text)
			}
		},
		text: func(text string) {
			rn.turnText.WriteString(text)
			em.text(text)
		},
		toolArgs: em.toolArgs,
		usage:    &rn.usage,
	})
}

type turnSink struct {
	beforeRequest  func()                    // nil: nothing
	body           func(io.Reader) io.Reader // wraps the response body (nil: as is)
	thinking, text func(text string)         // nil: dropped
	toolArgs       func(call *toolRun, piece string)
	usage          *protocol.Usage // the turn's usage is added to it
}

// providerTurn requests one model turn from the deployment's provider, feeds its events to sink
// and returns its tool calls; a transport or decoding failure is a providerConnError.
func (rn *run) providerTurn(ctx context.Context, mr *protocol.ModelRequest, sink turnSink) ([]*toolRun, error) {
	s := rn.s
	wire := s.opts.Wires[rn.dep.Wire]
	base := cmp.Or(rn.dep.Provider, s.opts.ProviderURL)
	mr.Model, mr.Tools = rn.dep.Model, rn.dep.Tools
	req, err := wire.NewRequest(ctx, base, mr)
	if err != nil {
		return nil, fmt.Errorf("building provider request: %w", err)
	}
	for k, vs := range s.opts.ProviderHeader {
		req.Header[k] = slices.Clone(vs)
	}
	if sink.beforeRequest != nil {
		sink.beforeRequest()
	}
	s.metrics.providerRequests.Inc()
	s.metrics.providerInFlight.Inc()
	defer s.metrics.providerInFlight.Dec()
	resp, err := s.opts.ProviderClient.Do(req)
	if err != nil {
		return nil, &providerConnError{fmt.Errorf("provider %s: %w", base, err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, wire.ParseError(resp)
	}
	var body io.Reader = resp.Body
	if sink.body != nil {
		body = sink.body(body)
	}
	var calls turnCalls
	stream := wire.NewStream(body)
	var ev protocol.ModelEvent
	for {
		err := stream.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &providerConnError{fmt.Errorf("provider stream: %w", err)}
		}
		switch ev.Kind {
		case protocol.ModelThinking:
			if sink.thinking != nil {
				sink.thinking(ev.Text)
			}
		case protocol.ModelText:
			sink.text(ev.Text)
		case protocol.ModelToolStart:
			calls.start(&ev)
		case protocol.ModelToolArgs:
			call, err := calls.arg(&ev)
			if err != nil {
				return nil, err
			}
			if sink.toolArgs != nil {
				sink.toolArgs(call, ev.Text)
			}
		case protocol.ModelTurnEnd:
			sink.usage.InputTokens += ev.Usage.InputTokens
			sink.usage.OutputTokens += ev.Usage.OutputTokens
		case protocol.ModelError:
			return nil, &protocol.ProviderError{Status: http.StatusOK, Type: "stream_error", Message: ev.Text}
		}
	}
	return calls.done()
}

// beforeFirstChunk serves the slow-first-chunk fault: the stream's first answer chunk waits.
func (rn *run) beforeFirstChunk() {
	if rn.firstChunkDone {
		return
	}
	rn.firstChunkDone = true
	if d := rn.faults.SlowFirstChunk; d > 0 {
		rn.flush()
		sleep(rn.ctx, d)
	}
}

// flush sends the frames written so far; the loop calls it before every wait.
func (rn *run) flush() { _ = rn.cs.flush(false) }

// flushBeforeRead flushes the client stream before each read of the provider's body: the
// decoder reads only when it has decoded everything buffered, so that is when the runtime may
// wait for the provider.
type flushBeforeRead struct {
	body io.Reader
	rn   *run
}

// Read flushes the client stream, then reads from the provider.
func (f flushBeforeRead) Read(p []byte) (int, error) {
	f.rn.flush()
	return f.body.Read(p)
}

func (rn *run) elapsedMs() int64 { return time.Since(rn.started).Milliseconds() }

// errStopped is the cancel cause of a compose run ended by a stop request.
var errStopped = errors.New("stopped by request")

var (
	_ emitter   = (*simChatEmitter)(nil)
	_ emitter   = (*simCanvasEmitter)(nil)
	_ emitter   = (*composeEmitter)(nil)
	_ emitter   = (*langGraphEmitter)(nil)
	_ io.Writer = (*clientStream)(nil)
)

// providerConnError is a provider request that failed in transport or decoding.
type providerConnError struct{ err error }

func (e *providerConnError) Error() string { return e.err.Error() }
func (e *providerConnError) Unwrap() error { return e.err }
