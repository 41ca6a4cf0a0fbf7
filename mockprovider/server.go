// Package mockprovider is a scripted LLM provider that speaks the OpenAI chat completions,
// OpenAI Responses and Anthropic messages wire formats. Every request selects a scenario (a directive in the last
// user message or X-Streambench-* headers); the mock renders the scenario's Script for the
// seed and plays the turn the request is at (the number of assistant turns already in it),
// paced on the script's schedule. It records every session for the load generator, exposes
// Prometheus metrics, and can model a provider with finite capacity.
//
// The mock is stateless across requests: a multi-turn tool loop works because the turn is
// derived from the request itself (on the Responses wire, from previous_response_id when the
// request continues a response: its id carries the turn), so any agent runtime that forwards the user's text can be
// load-tested against it.
package mockprovider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/rxstamp"
	"github.com/streambench/streambench/scenarios"
)

// MaxBodyBytes is the default largest request body the mock reads (Options.MaxBody);
// larger bodies get 413.
const MaxBodyBytes = 4 << 20

// DefaultBodyReadTimeout is how long the mock waits for a whole request body by default
// (Options.BodyReadTimeout); a client that stalls mid-body gets 408.
const DefaultBodyReadTimeout = 10 * time.Second

// MaxSelectorBytes caps the scenario name and session id a request may send (directive or
// header): both are kept in the session log, which must stay bounded in bytes, not only in
// records.
const MaxSelectorBytes = 256

// maxErrorMessageBytes caps an error message echoed back and kept in the session log: some
// messages quote what the client sent, which can be megabytes.
const maxErrorMessageBytes = 4096

// Request headers that select a scenario; they win over the directive in the user message.
const (
	HeaderScenario = "X-Streambench-Scenario"
	HeaderSeed     = "X-Streambench-Seed"
	HeaderSession  = "X-Streambench-Session"
	// HeaderChild selects a swarm child's script by its path (scenarios.ChildHeader).
	HeaderChild = scenarios.ChildHeader
	// HeaderToolPrefix puts a prefix before every tool call's name, as the directive's
	// toolPrefix= does (scenarios.Directive.ToolPrefix).
	HeaderToolPrefix = "X-Streambench-Tool-Prefix"
	// HeaderFault is set on error responses the scenario scripted ("http-429", "midstream"),
	// so a runtime's logs can tell injected faults from real ones.
	HeaderFault = "X-Streambench-Fault"
)

// Paths the mock serves.
const (
	PathOpenAI    = "/v1/chat/completions"
	PathAnthropic = "/v1/messages"
	PathResponses = "/v1/responses"
	PathSessions  = "/_streambench/sessions"
	PathMetrics   = "/metrics"
	PathHealth    = "/healthz"
	PathModels    = "/v1/models"
)

// Model is the one model GET /v1/models lists (the mock answers any model name).
const Model = "streambench-mock"

// DefaultMaxStreamsPerConn is the default HTTP/2 stream limit per connection (see
// Options.MaxConcurrentStreamsPerConn): 2,000 streams then take 8 connections.
const DefaultMaxStreamsPerConn = 250

// pingInterval is how long an Anthropic stream may stay silent before the mock sends a ping,
// as the real API does during long pauses (stalls, slow time to first token). The OpenAI wire
// has no keep-alive and gets none.
const pingInterval = 5 * time.Second

// Options configure a Server.
type Options struct {
	Library *scenarios.Library // holds the scenarios requests can select. Required.
	// TimeScale multiplies every scripted delay: 1 plays as scripted, 0 plays with no delay
	// at all (tests), 0.1 ten times faster.
	TimeScale      float64
	Capacity       Capacity     // the optional capacity model; the zero value is unlimited.
	Logger         *slog.Logger // receives one line per failed request and lifecycle events; nil discards.
	SessionHistory int          // how many session records to keep (0: DefaultSessionHistory).
	// MaxConcurrentStreamsPerConn is the HTTP/2 stream limit per connection advertised by
	// Serve (0: DefaultMaxStreamsPerConn). net/http's HTTP/2 write scheduler scans every open
	// stream of a connection for each frame it sends, so the cost per frame grows with the
	// streams sharing a connection; past the limit Go clients open another connection, which
	// keeps thousands of streams on a handful of connections at a flat cost per frame.
	MaxConcurrentStreamsPerConn int
	// Clock paces every stream (nil: hrtimer.NewPerWaiter(): each stream waits on a Go timer
	// of its own, so a late wake delays only its stream). Pass hrtimer.New() for wakes within
	// microseconds of their deadline while the process idles (a timerfd), at more CPU per
	// token under load. Tests inside a testing/synctest bubble may pass either
	// hrtimer.NewPerWaiter() or hrtimer.NewPortable().
	Clock   *hrtimer.Clock
	MaxBody int64 // the largest request body in bytes (0: MaxBodyBytes).
	// BodyReadTimeout caps how long reading one request body may take (0:
	// DefaultBodyReadTimeout; negative: no limit).
	BodyReadTimeout time.Duration
	// Fault, when set, breaks the wire contract in every stream (see Fault): the proof that
	// the client dialects' checks can fail. Streams only; non-streaming answers are unchanged.
	Fault Fault
}

// Server is the mock provider: an http.Handler with a lifecycle. Create it with New; serve it
// with Serve or ListenAndServe, or mount it in any http.Server (an httptest server in tests).
// All methods are safe for concurrent use.
type Server struct {
	opts      Options
	library   *scenarios.Library
	logger    *slog.Logger
	mux       *http.ServeMux
	metrics   *metrics
	admission *admission
	sessions  *sessionLog
	pacing    *pacingRecorder
	scripts   scriptCache
	requests  atomic.Uint64 // sequence for response ids and pacing shards

	httpServer atomic.Pointer[http.Server]
}

// New validates opts and returns a Server ready to serve.
func New(opts Options) (*Server, error) {
	if opts.Library == nil {
		return nil, errors.New("mockprovider: Options.Library is required (use scenarios.Embedded())")
	}
	if opts.TimeScale < 0 {
		return nil, fmt.Errorf("mockprovider: TimeScale must be >= 0, got %g", opts.TimeScale)
	}
	if err := opts.Capacity.validate(); err != nil {
		return nil, fmt.Errorf("mockprovider: %w", err)
	}
	if _, err := ParseFault(string(opts.Fault)); err != nil {
		return nil, fmt.Errorf("mockprovider: Options.Fault: %w", err)
	}
	if opts.SessionHistory < 0 {
		return nil, fmt.Errorf("mockprovider: SessionHistory must be >= 0, got %d", opts.SessionHistory)
	}
	if opts.SessionHistory == 0 {
		opts.SessionHistory = DefaultSessionHistory
	}
	if opts.MaxConcurrentStreamsPerConn <= 0 {
		opts.MaxConcurrentStreamsPerConn = DefaultMaxStreamsPerConn
	}
	if opts.Clock == nil {
		opts.Clock = hrtimer.NewPerWaiter()
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = MaxBodyBytes
	}
	if opts.BodyReadTimeout == 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m := newMetrics()
	s := &Server{
		opts:      opts,
		library:   opts.Library,
		logger:    logger,
		metrics:   m,
		admission: newAdmission(opts.Capacity, m),
		sessions:  newSessionLog(opts.SessionHistory),
		pacing:    newPacingRecorder(),
	}
	s.mux = s.routes()
	return s, nil
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(PathOpenAI, s.modelHandler(openaiWire()))
	mux.Handle(PathAnthropic, s.modelHandler(anthropicWire()))
	mux.Handle(PathResponses, s.modelHandler(responsesWire()))
	mux.HandleFunc(PathSessions, s.handleSessions)
	mux.Handle("GET "+PathMetrics, promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{
		Registry: s.metrics.registry, ErrorLog: slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}))
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET "+PathModels, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"`+Model+`","object":"model","owned_by":"streambench"}]}`+"\n")
	})
	mux.HandleFunc("/", s.handleNoRoute)
	return mux
}

// ServeHTTP routes a request to the provider endpoints, the sessions and metrics endpoints
// and /healthz. It serves no /debug/pprof/: profiles go on a listener of their own
// (streambench mock --pprof ADDR).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Protocols is the protocol set the mock serves on one port: HTTP/1.1 and cleartext HTTP/2
// (prior knowledge), so a runtime can multiplex thousands of provider streams on a few
// connections. Use it on an httptest server's Config to serve h2c in tests.
func Protocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// HTTPServer returns an http.Server configured to serve s: HTTP/1.1 and h2c, a high HTTP/2
// stream limit, header read timeout. Serve and ListenAndServe use it.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		Protocols:         Protocols(),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: s.opts.MaxConcurrentStreamsPerConn},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
		ConnContext:       withStampedConn,
	}
}

// Serve serves on ln until Shutdown. It returns http.ErrServerClosed after Shutdown. Its
// connections' reads carry the kernel's receive stamps (rxstamp), so that a request's
// schedule starts when the request reached this host, not when its handler got to run.
func (s *Server) Serve(ln net.Listener) error {
	hs := s.HTTPServer()
	if !s.httpServer.CompareAndSwap(nil, hs) {
		return errors.New("mockprovider: Serve called twice")
	}
	s.logger.Info("mock provider serving", "addr", ln.Addr().String())
	return hs.Serve(stampingListener{ln})
}

// stampingListener turns on receive stamps for every TCP connection it accepts.
type stampingListener struct{ net.Listener }

func (l stampingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc, _ := rxstamp.Wrap(c)
	return sc, nil
}

// stampedConnKey is the context key of a request's *rxstamp.Conn.
type stampedConnKey struct{}

// withStampedConn is the server's ConnContext: it keeps a stamped connection where the
// request's handler finds it (arrivalOf).
func withStampedConn(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*rxstamp.Conn); ok {
		return context.WithValue(ctx, stampedConnKey{}, sc)
	}
	return ctx
}

// arrivalOf returns when r reached this host: the receive stamp of its connection's newest
// read, which at the handler's start is the read that brought the request's head (a
// pipelined request's came with the one before it; on h2c it may be a later frame's: never
// before the request arrived); that read's return when it carried no kernel stamp. now when
// the connection is not stamped (the handler mounted in another server, not Linux) or the
// time is implausible (after now, or maxArrivalLag before: rxstamp.Conn.Arrived's now, and
// a bound of its own).
func arrivalOf(r *http.Request, now time.Time) time.Time {
	sc, ok := r.Context().Value(stampedConnKey{}).(*rxstamp.Conn)
	if !ok {
		return now
	}
	if t := sc.Arrived(now); now.Sub(t) < maxArrivalLag {
		return t
	}
	return now
}

// maxArrivalLag bounds how long before its handler ran a request is taken to have arrived.
const maxArrivalLag = 10 * time.Second

// ListenAndServe listens on addr (host:port) and serves until Shutdown.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mockprovider: listen %s: %w", addr, err)
	}
	return s.Serve(ln)
}

// Shutdown stops accepting connections and waits for in-flight requests (streams play to their
// end) until ctx is done, then closes every connection, which cancels the remaining streams.
func (s *Server) Shutdown(ctx context.Context) error {
	hs := s.httpServer.Load()
	if hs == nil {
		return nil
	}
	err := hs.Shutdown(ctx)
	if err != nil {
		hs.Close()
	}
	return err
}

// Sessions returns the records of sessionID (every record when sessionID is ""), oldest first.
// Records of requests still streaming have Outcome OutcomeStreaming and a zero End.
func (s *Server) Sessions(sessionID string) []SessionRecord {
	return s.sessions.snapshot(sessionID)
}

// PacingError returns a snapshot of the pacing error histogram: for every streamed frame, the
// time it was flushed minus the time the schedule said it should be, in microseconds.
func (s *Server) PacingError() *hdrhistogram.Histogram {
	h, _ := s.pacing.snapshot(false)
	return h
}

// TakePacingError returns the pacing error histogram and clears it, as one step: the
// self-test drops its warm-up and keeps its ramp apart this way.
func (s *Server) TakePacingError() *hdrhistogram.Histogram {
	h, _ := s.pacing.snapshot(true)
	return h
}

// Registry is the server's own Prometheus registry, for embedding its series elsewhere.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// ActiveStreams is the number of requests currently playing.
func (s *Server) ActiveStreams() int { return int(s.admission.active.Load()) }
