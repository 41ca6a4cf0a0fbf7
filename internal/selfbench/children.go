package selfbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/hrtimer"
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

// childArgs is a bench child's command line, on a free loopback port.
func childArgs(mode string, flags ...string) []string {
	return append([]string{"bench", mode, "--addr", "127.0.0.1:0"}, flags...)
}

// RunChild runs the hidden `bench` child mode args name until ctx ends, logging to stderr; ok
// is false when args name none. These are the measurements' processes, not user commands, so
// their flags live here beside the code that passes them.
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
				srv.serveProfile()
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

// httpServer is a bench child's server (stack.Server).
type httpServer struct{ srv *http.Server }

// Serve serves on ln until Shutdown; it returns http.ErrServerClosed after Shutdown.
func (s httpServer) Serve(ln net.Listener) error { return s.srv.Serve(ln) }

// Shutdown stops accepting and waits for open streams to end, or ctx to.
func (s httpServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
