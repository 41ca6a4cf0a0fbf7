package selfbench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/stack"
)

// RunChild runs the hidden `bench` child mode args name — the floor's naive SSE server
// (FloorServerCommand) and line-copying relay (FloorRelayCommand), pacing's naive reference
// server (NaiveServerCommand), fidelity's probe client (ProbeClientCommand) — until ctx
// ends, logging to stderr. ok is false when args name none. These are processes the
// measurements start themselves, not user commands, so their flags live here beside the code
// that passes them.
func RunChild(ctx context.Context, args []string, stderr io.Writer) (ok bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	fs := pflag.NewFlagSet("bench "+args[0], pflag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	var build func() (stack.Server, error)
	switch args[0] {
	case FloorServerCommand:
		events := fs.Int("events", 200, "events per stream")
		itl := fs.Duration("itl", 50*time.Millisecond, "delay before each event")
		build = func() (stack.Server, error) { return NewFloorServer(*events, *itl) }
	case FloorRelayCommand:
		upstream := fs.String("upstream", "", "the URL every request is relayed to (required)")
		http1 := fs.Bool("upstream-http1", false, "one HTTP/1.1 connection per stream to the upstream instead of h2c")
		build = func() (stack.Server, error) { return NewFloorRelay(*upstream, *http1) }
	case NaiveServerCommand:
		ttft := fs.Duration("ttft", 100*time.Millisecond, "sleep from request arrival to the first token")
		itl := fs.Duration("itl", 50*time.Millisecond, "sleep between tokens")
		tokens := fs.Int("tokens", 100, "tokens per stream")
		profile := fs.Bool("pprof", false, "also serve GET /debug/pprof/profile")
		build = func() (stack.Server, error) {
			srv, err := NewNaiveServer(*ttft, *itl, *tokens)
			if err == nil && *profile {
				srv.ServeProfile()
			}
			return srv, err
		}
	case ProbeClientCommand:
		build = func() (stack.Server, error) { return NewProbeClient(), nil }
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
