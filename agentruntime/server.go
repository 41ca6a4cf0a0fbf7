// Package agentruntime is the reference agent runtime every protocol rule is checked against:
// client dialects over a real tool loop against a model provider, with a fault switch per rule.
package agentruntime

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	runtimepprof "runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/openai"
)

// Defaults for the zero Options fields.
const (
	DefaultClientIdleTimeout = 30 * time.Second
	DefaultHeartbeat         = 10 * time.Second // under compose's 15 s
	DefaultMaxBody           = 1 << 20
	DefaultBodyReadTimeout   = 10 * time.Second
	DefaultMaxTurns          = 16
	DefaultProviderH2CConns  = 4 // the provider connection cap with h2c.
)

// Options configure a Server; a zero field means its Default. The zero value plus ProviderURL
// is a correct runtime whose simulated tools settle at once.
type Options struct {
	Deployments   *Deployments // the agents served; nil means DefaultDeployments().
	ProviderURL   string       // the provider's base URL for deployments that name none.
	ProviderHTTP1 bool         // talks HTTP/1.1 to the provider instead of h2c.
	// ProviderMaxConns caps connections to each provider host: 0 means DefaultProviderH2CConns
	// with h2c (uncapped, a burst of streams before the first connection is up dials one each)
	// and no cap with HTTP/1.1; negative, no cap.
	ProviderMaxConns int
	// ProviderHeader is set on every provider request after the wire's own headers (so it may
	// replace the placeholder Authorization), for gateways that route by header.
	ProviderHeader    http.Header
	ProviderClient    *http.Client                     // when set, replaces the client built from the fields above.
	Wires             map[string]protocol.ProviderWire // wire name to implementation; nil means openai and anthropic.
	Faults            Faults                           // the zero value breaks nothing.
	ClientIdleTimeout time.Duration                    // drops a client that accepts no bytes this long (negative: never).
	Heartbeat         time.Duration                    // the compose ": ping" interval when idle (negative: none).
	MaxBody           int64                            // caps request bodies in bytes.
	// BodyReadTimeout caps reading a request body (negative: no limit), so a client that
	// stalls mid-body gets 408 instead of holding a handler.
	BodyReadTimeout time.Duration
	MaxTurns        int          // caps a run's model turns, so a model that always calls tools stops.
	ToolTimeScale   float64      // multiplies simulated tool durations: 1 as scripted, 0 at once (tests).
	Logger          *slog.Logger // nil discards.
	// ReconnectWindow is how long a resumable canvas execution is kept after its client dropped.
	ReconnectWindow time.Duration
	TLS             *tls.Config // makes Serve speak HTTPS only (HTTP/1.1 and h2 by ALPN).
}

// Server is the reference runtime. Create it with New; it is safe for concurrent use.
type Server struct {
	opts      Options
	deps      *Deployments
	metrics   *metrics
	mux       *http.ServeMux
	runs      registry[*runEntry]   // open compose runs and canvas executions, for stops and approvals
	execs     registry[*canvasExec] // resumable canvas executions (reconnect.go)
	lgThreads registry[struct{}]    // the langgraph threads with a run streaming

	hardStop    context.Context // cancelled when Shutdown's grace period ends (or Close).
	cancelHard  context.CancelCauseFunc
	leakRelease chan struct{} // closed by Shutdown/Close; holds leak-goroutine fault goroutines
	closeOnce   sync.Once

	hs     *http.Server // serves every listener Serve is given
	active atomic.Int64 // running streams, so a hard shutdown can let them write their terminal.

	labels   context.Context // carries LabelKey for every goroutine a request starts.
	instance string
}

// LabelKey is the pprof goroutine label whose value is Server.Instance(): every goroutine a
// request starts carries it, so goroutine profiles (and leak checks) can be scoped to one
// runtime of several in a process.
const LabelKey = "streambench_runtime"

// Instance is this server's id in the LabelKey goroutine label.
func (s *Server) Instance() string { return s.instance }

// errShutdown is the cancel cause of streams still open when the server stops.
var errShutdown = errors.New("runtime shutting down")

// New validates opts and builds a Server.
func New(opts Options) (*Server, error) {
	if opts.ToolTimeScale < 0 {
		return nil, fmt.Errorf("agentruntime: ToolTimeScale must be >= 0, got %g", opts.ToolTimeScale)
	}
	if opts.Deployments == nil {
		opts.Deployments = DefaultDeployments()
	}
	if opts.Wires == nil {
		opts.Wires = map[string]protocol.ProviderWire{"openai": openai.Wire{}, "anthropic": anthropic.Wire{}}
	}
	for _, d := range opts.Deployments.All() {
		if _, ok := opts.Wires[d.Wire]; !ok {
			return nil, fmt.Errorf("agentruntime: deployment %q: no implementation for wire %q", d.Slug, d.Wire)
		}
		if d.Provider == "" && opts.ProviderURL == "" {
			return nil, fmt.Errorf("agentruntime: deployment %q has no provider URL and Options.ProviderURL is empty", d.Slug)
		}
	}
	opts.Logger = cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	opts.ClientIdleTimeout = durationSetting(opts.ClientIdleTimeout, DefaultClientIdleTimeout)
	opts.Heartbeat = durationSetting(opts.Heartbeat, DefaultHeartbeat)
	opts.BodyReadTimeout = durationSetting(opts.BodyReadTimeout, DefaultBodyReadTimeout)
	opts.MaxBody = cmp.Or(max(opts.MaxBody, 0), DefaultMaxBody)
	opts.MaxTurns = cmp.Or(max(opts.MaxTurns, 0), DefaultMaxTurns)
	opts.ReconnectWindow = cmp.Or(max(opts.ReconnectWindow, 0), DefaultReconnectWindow)
	h := make(http.Header, len(opts.ProviderHeader)) // a copy, its keys canonical
	for k, vs := range opts.ProviderHeader {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	opts.ProviderHeader = h
	if opts.ProviderClient == nil {
		maxConns := opts.ProviderMaxConns
		switch {
		case maxConns == 0 && !opts.ProviderHTTP1:
			maxConns = DefaultProviderH2CConns
		case maxConns < 0:
			maxConns = 0
		}
		opts.ProviderClient = &http.Client{Transport: newProviderTransport(!opts.ProviderHTTP1, maxConns)}
	}
	s := &Server{opts: opts, deps: opts.Deployments, metrics: newMetrics()}
	s.hardStop, s.cancelHard = context.WithCancelCause(context.Background())
	s.leakRelease = make(chan struct{})
	s.instance = rand.Text()[:12]
	s.labels = runtimepprof.WithLabels(context.Background(), runtimepprof.Labels(LabelKey, s.instance))
	s.mux = s.routes()
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetHTTP2(opts.TLS != nil)
	p.SetUnencryptedHTTP2(opts.TLS == nil)
	s.hs = &http.Server{
		Handler:           s.mux,
		Protocols:         p,
		TLSConfig:         opts.TLS.Clone(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.hardStop },
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// newProviderTransport pools provider connections (with h2c, a few multiplexed ones).
func newProviderTransport(h2c bool, maxConns int) *http.Transport {
	t := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1024,
		MaxIdleConnsPerHost: 1024,
		MaxConnsPerHost:     maxConns,
		IdleConnTimeout:     90 * time.Second,
	}
	if h2c {
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
	}
	return t
}

// Handler returns the runtime's HTTP handler (never /debug/pprof/: profiles listen apart).
func (s *Server) Handler() http.Handler { return s.mux }

// Metrics returns the handler serving the runtime's Prometheus metrics.
func (s *Server) Metrics() http.Handler {
	return promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{})
}

// Serve serves the handler on ln (HTTP/1.1 and h2c; with Options.TLS, HTTPS with HTTP/1.1 and
// h2) until Shutdown or Close, then returns http.ErrServerClosed.
func (s *Server) Serve(ln net.Listener) error {
	if s.opts.TLS != nil {
		return s.hs.ServeTLS(ln, "", "")
	}
	return s.hs.Serve(ln)
}

// Shutdown lets open streams finish until ctx ends, then cancels the rest (their clients get the
// error terminal) and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.hs.Shutdown(ctx)
	if err != nil { // the grace period is over: let what is left write its terminal, then cut
		s.cancelHard(errShutdown)
		s.waitActive(2 * time.Second)
		_ = s.hs.Close()
	}
	s.release()
	return err
}

// waitActive waits until no stream runs, or at most d; polling, because a WaitGroup would race
// (Add during Wait) with late requests.
func (s *Server) waitActive(d time.Duration) {
	for deadline := time.Now().Add(d); s.active.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

// Close cancels every open stream at once and closes every connection.
func (s *Server) Close() error {
	s.cancelHard(errShutdown)
	_ = s.hs.Close()
	s.release()
	return nil
}

// release frees the leak-goroutine fault's goroutines and the provider's idle connections.
func (s *Server) release() {
	s.closeOnce.Do(func() {
		close(s.leakRelease)
		s.opts.ProviderClient.CloseIdleConnections()
	})
}

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/chat/{slug}", s.post(s.handleSimChat))
	mux.HandleFunc("/api/workflows/{id}/execute", s.post(s.handleSimCanvas))
	mux.HandleFunc("GET /api/workflows/{id}/executions/{execution}/stream", s.labelled(s.handleCanvasReconnect))
	mux.HandleFunc("/agent/{agentId}/stream", s.post(s.handleCompose))
	mux.HandleFunc("/agui/{agentId}", s.post(s.handleAGUI))
	mux.HandleFunc("/agent/{agentId}/runs/{runId}/stop", s.post(s.handleComposeStop))
	mux.HandleFunc("/api/workflows/{id}/executions/{executionId}/cancel", s.post(s.handleSimCanvasCancel))
	mux.HandleFunc("/agent/{agentId}/runs/{runId}/approval", s.post(s.handleComposeApproval))
	mux.HandleFunc("/runs/stream", s.post(s.handleLangGraph))
	mux.HandleFunc("/threads/{thread_id}/runs/stream", s.post(s.handleLangGraph))
	mux.Handle("GET /metrics", s.Metrics())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`+"\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s (endpoints: POST /api/chat/{slug}, POST /api/workflows/{id}/execute, GET /api/workflows/{id}/executions/{execution}/stream, POST /api/workflows/{id}/executions/{executionId}/cancel, POST /agent/{agentId}/stream, POST /agent/{agentId}/runs/{runId}/stop, POST /agent/{agentId}/runs/{runId}/approval, GET /metrics, GET /healthz)", r.Method, r.URL.Path))
	})
	return mux
}

// post rejects every method but POST with a JSON 405, and labels the handler (see labelled).
func (s *Server) post(h http.HandlerFunc) http.HandlerFunc {
	return s.labelled(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			s.writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (use POST)", r.Method, r.URL.Path))
			return
		}
		h(w, r)
	})
}

// labelled labels the handler's goroutine, and every goroutine it starts, with LabelKey.
func (s *Server) labelled(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		runtimepprof.SetGoroutineLabels(s.labels)
		defer runtimepprof.SetGoroutineLabels(r.Context())
		h(w, r)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	s.metrics.badRequests.WithLabelValues(fmt.Sprint(status)).Inc()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error string `json:"error"`
	}{msg})
}

// readBody decodes the JSON request body into v, answering 413, 408 or 400 itself on
// failure. The body must be valid UTF-8: encoding/json would replace bad bytes with U+FFFD and
// pass a different message on than the client sent.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := protocol.ReadRequestBody(w, r, s.opts.MaxBody, s.opts.BodyReadTimeout)
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			s.writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit))
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.writeError(w, http.StatusRequestTimeout, fmt.Sprintf("request body not received within %v (got %d bytes)", s.opts.BodyReadTimeout, len(body)))
		default:
			s.writeError(w, http.StatusBadRequest, fmt.Sprintf("reading request body: %v", err))
		}
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		s.writeError(w, http.StatusBadRequest, "request body: empty, want a JSON object")
		return false
	}
	if !utf8.Valid(body) {
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf("request body: not valid UTF-8 at byte %d", invalidUTF8At(body)))
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		s.writeError(w, http.StatusBadRequest, describeJSONError(err))
		return false
	}
	return true
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("request body is not valid JSON at byte %d: %v", syn.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Sprintf("request body must be a JSON object, got %s", typ.Value)
	case errors.As(err, &typ):
		return fmt.Sprintf("request body field %q must be a JSON %s, got %s", typ.Field, typ.Type, typ.Value)
	}
	return fmt.Sprintf("request body is not valid JSON: %v", err)
}

func (s *Server) deployment(w http.ResponseWriter, kind, slug string) (*Deployment, bool) {
	d, ok := s.deps.Lookup(slug)
	if !ok {
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("%s: %s %q (known: %v)", errUnknownDeployment, kind, slug, s.deps.Slugs()))
		return nil, false
	}
	return d, true
}

// durationSetting is an Options duration as used: def for 0, 0 (off) for a negative one.
func durationSetting(d, def time.Duration) time.Duration { return max(cmp.Or(d, def), 0) }

// startRun resolves the path's deployment, reads the body and its user message (input; missing
// is the 400 without one) and prepares dialect's run of it, answering errors itself.
func startRun[T any](s *Server, w http.ResponseWriter, r *http.Request, kind, pathValue, dialect string,
	input func(*T) *string, missing string) (rn *run, body T, ok bool) {
	dep, ok := s.deployment(w, kind, r.PathValue(pathValue))
	if !ok || !s.readBody(w, r, &body) {
		return nil, body, false
	}
	if p := input(&body); p != nil && *p != "" {
		return s.newRun(w, r, dep, dialect, *p, false), body, true
	}
	s.writeError(w, http.StatusBadRequest, missing)
	return nil, body, false
}

// runIDPrefix and runIDRandom make up a run id: the prefix and 20 base32 characters.
const (
	runIDPrefix = "run_"
	runIDRandom = 20
)

// newRunID returns an unguessable run id for the compose stop endpoint.
func newRunID() string { return runIDPrefix + rand.Text()[:runIDRandom] }

// validRunID reports whether id has the shape newRunID gives (else a stop gets 400, not 404).
var validRunID = regexp.MustCompile(`^` + runIDPrefix + `[A-Z2-7]{20}$`).MatchString

// runEntry is an open compose run that a stop request can end.
type runEntry struct {
	agentID string
	stop    context.CancelCauseFunc
	plan    *planGate // the run's approval slot, for the approval endpoint (plan.go).
}

// registry maps ids to what they name; the zero value is ready; safe for concurrent use.
type registry[T any] struct{ m sync.Map }

// add maps id to v unless id is taken, and reports whether it did.
func (r *registry[T]) add(id string, v T) bool {
	_, taken := r.m.LoadOrStore(id, v)
	return !taken
}

func (r *registry[T]) remove(id string) { r.m.Delete(id) }

func (r *registry[T]) get(id string) (T, bool) {
	v, ok := r.m.Load(id)
	t, _ := v.(T)
	return t, ok
}
