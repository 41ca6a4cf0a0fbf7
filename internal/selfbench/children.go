package selfbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/internal/floorrelay"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/sse"
	"github.com/streambench/streambench/stack"
)

// The hidden `bench` modes the measurements start as child processes: each prints
// "listening on http://ADDR" and serves until interrupted.
const (
	floorServerMode = "floor-server" // NewFloorServer
	floorRelayMode  = "floor-relay"  // NewFloorRelay
	naiveServerMode = "naive-server" // NewNaiveServer
	pacedServerMode = "paced-server" // NewPacedServer
	probeClientMode = "probe-client" // NewProbeClient
)

// startBenchChild starts this executable's bench child mode on a free loopback port; what names it in errors.
func startBenchChild(what, mode string, flags ...string) (*stack.Child, error) {
	exe, err := ownExecutable()
	if err != nil {
		return nil, err
	}
	c, err := stack.StartChild(exe, append([]string{"bench", mode, "--addr", "127.0.0.1:0"}, flags...))
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", what, err)
	}
	return c, nil
}

// RunChild runs the hidden `bench` child mode args name until ctx ends, logging to stderr; ok
// is false when args name none. Their flags live here, beside the code that passes them.
func RunChild(ctx context.Context, args []string, stderr io.Writer) (ok bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	fs := pflag.NewFlagSet("bench "+args[0], pflag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	var build func() (stack.Server, error)
	switch args[0] {
	case floorServerMode:
		events := fs.Int("events", 200, "events per stream")
		itl := fs.Duration("itl", 50*time.Millisecond, "delay before each event")
		build = func() (stack.Server, error) { return NewFloorServer(*events, *itl) }
	case floorRelayMode:
		upstream := fs.String("upstream", "", "the URL every request is relayed to (required)")
		http1 := fs.Bool("upstream-http1", false, "one HTTP/1.1 connection per stream to the upstream instead of h2c")
		build = func() (stack.Server, error) { return NewFloorRelay(*upstream, *http1) }
	case naiveServerMode:
		ttft := fs.Duration("ttft", 100*time.Millisecond, "sleep from request arrival to the first token")
		itl := fs.Duration("itl", 50*time.Millisecond, "sleep between tokens")
		tokens := fs.Int("tokens", 100, "tokens per stream")
		profile := fs.Bool("pprof", false, "also serve GET /debug/pprof/profile")
		build = func() (stack.Server, error) {
			srv, err := NewNaiveServer(*ttft, *itl, *tokens)
			if err == nil && *profile {
				serveProfile(srv)
			}
			return srv, err
		}
	case probeClientMode:
		build = func() (stack.Server, error) { return NewProbeClient(), nil }
	case pacedServerMode:
		ttft := fs.Duration("ttft", 200*time.Millisecond, "delay from request arrival to the first chunk")
		itl := fs.Duration("itl", 100*time.Millisecond, "delay between chunks")
		textFile := fs.String("text-file", "", "the answer text (required)")
		build = func() (stack.Server, error) {
			if *textFile == "" {
				return nil, errors.New("--text-file is required")
			}
			text, err := os.ReadFile(*textFile)
			if err != nil {
				return nil, fmt.Errorf("--text-file: %w", err)
			}
			_ = hrtimer.SpareProcs() // for the server's life: the process serves nothing else
			return NewPacedServer(string(text), *ttft, *itl)
		}
	default:
		return false, nil
	}
	if err := fs.Parse(args[1:]); err != nil {
		return true, err
	}
	srv, err := build()
	if err != nil {
		return true, fmt.Errorf("bench %s: %w", args[0], err)
	}
	ln, err := stack.Listen(*addr, "http", stderr)
	if err != nil {
		return true, fmt.Errorf("bench %s: --addr: %w", args[0], err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	return true, stack.ServeUntilDone(ctx, stop, srv, ln, 5*time.Second, stderr)
}

// The floor's yardsticks: the least code that can serve, relay and read a paced SSE stream.

// floorFrame is the floor server's event: a sim-chat answer chunk the size the runtime relays.
const floorFrame = codecFrame

// NewFloorServer is the floor's naive SSE server: events events per stream (fewer when the body
// says {"events":N}: the warm-up's), itl apart from the request, then [DONE]; it sleeps to each
// event's scheduled time, not for the interval, which would drift.
func NewFloorServer(events int, itl time.Duration) (*http.Server, error) {
	if events <= 0 || itl < 0 {
		return nil, fmt.Errorf("floor server: want events > 0 and itl ≥ 0, got %d and %s", events, itl)
	}
	frame := []byte(floorFrame)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Events int }
		if json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&req) != nil || req.Events <= 0 || req.Events >= events {
			req.Events = events
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		start := time.Now()
		for i := range req.Events {
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * itl)))
			if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
				return
			}
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	return &http.Server{Handler: h, Protocols: mockprovider.Protocols(), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 100_000}}, nil
}

// floorRelayConns is the relay's h2c connections upstream (agentruntime.DefaultProviderH2CConns).
const floorRelayConns = 4

// NewFloorRelay is the two-hop floor's relay: it copies upstream's response line by line,
// flushing when nothing more is buffered (the runtime's policy), over pooled h2c or, with
// upstreamHTTP1, one HTTP/1.1 connection per stream.
func NewFloorRelay(upstream string, upstreamHTTP1 bool) (*http.Server, error) {
	if !strings.HasPrefix(upstream, "http://") {
		return nil, fmt.Errorf("floor relay: upstream %q: want an http:// URL", upstream)
	}
	t := &http.Transport{MaxIdleConns: 100_000, MaxIdleConnsPerHost: 100_000, IdleConnTimeout: 90 * time.Second}
	if !upstreamHTTP1 {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		t.Protocols, t.MaxConnsPerHost = p, floorRelayConns
	}
	h := floorrelay.Handler(upstream, &http.Client{Transport: t}, 4<<10)
	return &http.Server{Handler: h, Protocols: mockprovider.Protocols()}, nil
}

// NewPacedServer serves text as an opted-in sim-chat stream: headers at once, the first word
// ttft after the request arrived, the others itl apart, then the final envelope and [DONE], so
// TTFC − TTFT against it is the harness's own error.
func NewPacedServer(text string, ttft, itl time.Duration) (*http.Server, error) {
	if ttft < 0 || itl < 0 {
		return nil, errors.New("TTFT and ITL must not be negative")
	}
	frames, tail, err := pacedFrames(text)
	if err != nil {
		return nil, err
	}
	return &http.Server{Handler: pacedHandler(hrtimer.New(), frames, tail, ttft, itl)}, nil
}

// pacedFrames encodes text as a chunk frame per word, and the final envelope and [DONE].
func pacedFrames(text string) (frames [][]byte, tail []byte, err error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil, errors.New("empty answer")
	}
	frame := func(v any) ([]byte, error) {
		b, err := json.Marshal(v)
		return append(append([]byte("data: "), b...), '\n', '\n'), err
	}
	rest := text
	for rest != "" {
		piece := rest
		if i := strings.IndexByte(rest[1:], ' '); i >= 0 {
			piece = rest[:i+1]
		}
		rest = rest[len(piece):]
		b, err := frame(map[string]string{"blockId": "b1", "chunk": piece})
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, b)
	}
	tail, err = frame(map[string]any{"event": "final", "data": map[string]any{"success": true, "output": map[string]string{"content": text}}})
	return frames, append(tail, "data: \"[DONE]\"\n\n"...), err
}

func pacedHandler(clock *hrtimer.Clock, frames [][]byte, tail []byte, ttft, itl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		sse.SetHeaders(w.Header())
		w.Header().Set(simchat.ProtocolHeader, simchat.ProtocolToken)
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		waiter := clock.NewWaiter()
		for i, b := range frames {
			if !waiter.Until(r.Context().Done(), arrived.Add(ttft+time.Duration(i)*itl)) {
				return
			}
			if _, err := w.Write(b); err != nil || rc.Flush() != nil {
				return
			}
		}
		_, _ = w.Write(tail)
	})
}
