// Package mockprovider is a scripted LLM provider on the OpenAI chat completions, Responses and
// Anthropic messages wires: a request names its scenario and holds the turn it is at, so the
// mock keeps no state across requests. It records every session and can model finite capacity.
package mockprovider

import (
	"cmp"
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
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/rxstamp"
	"github.com/streambench/streambench/scenarios"
)

// MaxBodyBytes is the default Options.MaxBody.
const MaxBodyBytes = 4 << 20

// DefaultBodyReadTimeout is the default Options.BodyReadTimeout.
const DefaultBodyReadTimeout = 10 * time.Second

// MaxSelectorBytes caps the scenario name and session id a request may send: both are kept in
// the session log, which must stay bounded in bytes.
const MaxSelectorBytes = 256

// maxErrorMessageBytes caps an error message echoed back and logged: some quote the request.
const maxErrorMessageBytes = 4096

// Request headers that select a scenario; they win over the directive in the user message.
const (
	HeaderScenario   = "X-Streambench-Scenario"
	HeaderSeed       = "X-Streambench-Seed"
	HeaderSession    = "X-Streambench-Session"
	HeaderChild      = scenarios.ChildHeader       // selects a swarm child's script by its path.
	HeaderToolPrefix = "X-Streambench-Tool-Prefix" // prefixes every tool call's name (Directive.ToolPrefix).
	// HeaderFault is set on scripted error responses ("http-429", "midstream"), so a runtime's
	// logs can tell injected faults from real ones.
	HeaderFault = "X-Streambench-Fault"
)

// Paths the mock serves.
const (
	PathOpenAI    = "/v1/chat/completions"
	PathAnthropic = "/v1/messages"
	PathResponses = "/v1/responses"
	PathSessions  = mockrecords.Path
	PathMetrics   = "/metrics"
	PathHealth    = "/healthz"
	PathModels    = "/v1/models"
)

// Model is the one model GET /v1/models lists (the mock answers any model name).
const Model = "streambench-mock"

// DefaultMaxStreamsPerConn is the default Options.MaxConcurrentStreamsPerConn.
const DefaultMaxStreamsPerConn = 250

// pingInterval is how long a stream on a wire with pings (Anthropic's) may stay silent.
const pingInterval = 5 * time.Second

// Options configure a Server.
type Options struct {
	Library        *scenarios.Library // the scenarios requests can select. Required.
	TimeScale      float64            // multiplies every scripted delay: 1 as scripted, 0 none (tests).
	Capacity       Capacity           // the optional capacity model; the zero value is unlimited.
	Logger         *slog.Logger       // receives one line per failed request and lifecycle events; nil discards.
	SessionHistory int                // how many session records to keep (0: DefaultSessionHistory).
	// MaxConcurrentStreamsPerConn is the HTTP/2 stream limit per connection Serve advertises
	// (0: DefaultMaxStreamsPerConn). net/http's HTTP/2 write scheduler scans every open stream
	// of a connection per frame, so past the limit Go clients open another connection, which
	// keeps the cost per frame flat.
	MaxConcurrentStreamsPerConn int
	// Clock paces every stream (nil: hrtimer.NewPerWaiter(), a Go timer per stream, so a late
	// wake delays only its stream); hrtimer.New() wakes within microseconds while the process
	// idles, at more CPU per token under load. In a synctest bubble pass NewPerWaiter or
	// NewPortable.
	Clock           *hrtimer.Clock
	MaxBody         int64         // the largest request body in bytes (0: MaxBodyBytes; larger gets 413).
	BodyReadTimeout time.Duration // caps reading one body (0: DefaultBodyReadTimeout; negative: none; else 408).
	Fault           Fault         // breaks the wire contract in every stream, and in non-streaming answers where it means something there (Faults).
}

// Server is the mock provider, an http.Handler; create it with New. Safe for concurrent use.
type Server struct {
	opts      Options
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
	opts.SessionHistory = cmp.Or(opts.SessionHistory, DefaultSessionHistory)
	opts.MaxConcurrentStreamsPerConn = cmp.Or(max(opts.MaxConcurrentStreamsPerConn, 0), DefaultMaxStreamsPerConn)
	opts.MaxBody = cmp.Or(max(opts.MaxBody, 0), MaxBodyBytes)
	opts.BodyReadTimeout = cmp.Or(opts.BodyReadTimeout, DefaultBodyReadTimeout)
	opts.Clock = cmp.Or(opts.Clock, hrtimer.NewPerWaiter())
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	m := newMetrics()
	s := &Server{opts: opts, metrics: m, admission: newAdmission(opts.Capacity, m),
		sessions: newSessionLog(opts.SessionHistory), pacing: newPacingRecorder()}
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
		Registry: s.metrics.registry, ErrorLog: slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
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

// ServeHTTP routes a request to the mock's endpoints (never /debug/pprof/: profiles listen apart).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Protocols is the protocol set the mock serves on one port: HTTP/1.1 and h2c (prior knowledge).
func Protocols() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &p
}

// HTTPServer returns the http.Server Serve and ListenAndServe use to serve s.
func (s *Server) HTTPServer() *http.Server {
	return &http.Server{
		Handler:           s,
		Protocols:         Protocols(),
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: s.opts.MaxConcurrentStreamsPerConn},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
		ConnContext:       withStampedConn,
	}
}

// Serve serves on ln until Shutdown, then returns http.ErrServerClosed. Its connections' reads
// carry the kernel's receive stamps (rxstamp), so a request's schedule starts when it reached
// this host, not when its handler got to run.
func (s *Server) Serve(ln net.Listener) error {
	hs := s.HTTPServer()
	if !s.httpServer.CompareAndSwap(nil, hs) {
		return errors.New("mockprovider: Serve called twice")
	}
	s.opts.Logger.Info("mock provider serving", "addr", ln.Addr().String())
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

type stampedConnKey struct{}

// withStampedConn is the server's ConnContext: it keeps a stamped connection for arrivalOf.
func withStampedConn(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*rxstamp.Conn); ok {
		return context.WithValue(ctx, stampedConnKey{}, sc)
	}
	return ctx
}

// arrivalOf returns when r reached this host: the receive stamp of its connection's newest read
// (on h2c maybe a later frame's, never an earlier one's), else now.
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

// Shutdown lets in-flight streams play to their end until ctx is done, then closes them.
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

// Sessions returns the records of sessionID (all for ""), oldest first.
func (s *Server) Sessions(sessionID string) []mockrecords.Record {
	return s.sessions.snapshot(sessionID)
}

// PacingError returns a snapshot of the per-frame pacing error (flushed − scheduled, µs).
func (s *Server) PacingError() *hdrhistogram.Histogram {
	h, _ := s.pacing.snapshot(false)
	return h
}

// TakePacingError returns the pacing error histogram and clears it, as one step.
func (s *Server) TakePacingError() *hdrhistogram.Histogram {
	h, _ := s.pacing.snapshot(true)
	return h
}

// Registry is the server's own Prometheus registry, for embedding its series elsewhere.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.registry }

// ActiveStreams is the number of requests currently playing.
func (s *Server) ActiveStreams() int { return int(s.admission.active.Load()) }
