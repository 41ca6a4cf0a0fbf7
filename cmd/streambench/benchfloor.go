package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/streambench/streambench/selfbench"
	"github.com/streambench/streambench/stack"
)

// benchChild returns the hidden `bench` child mode args name (the floor's server and relay),
// or nil when args name none.
func benchChild(args []string) func() error {
	if len(args) == 0 {
		return nil
	}
	switch args[0] {
	case selfbench.FloorServerCommand:
		return func() error { return runFloorServer(args[1:]) }
	case selfbench.FloorRelayCommand:
		return func() error { return runFloorRelay(args[1:]) }
	}
	return nil
}

// runFloorServer is `bench floor-server`, the floor measurement's naive SSE server.
func runFloorServer(args []string) error {
	fs := newFlagSet("bench "+selfbench.FloorServerCommand, "bench "+selfbench.FloorServerCommand+" [--events N] [--itl D] [--addr HOST:PORT]")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	events := fs.Int("events", 200, "events per stream")
	itl := fs.Duration("itl", 50*time.Millisecond, "delay before each event")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	srv, err := selfbench.NewFloorServer(*events, *itl)
	if err != nil {
		return usageError("%v", err)
	}
	return serveBenchChild(srv, *addr)
}

// runFloorRelay is `bench floor-relay`, the two-hop floor's line-copying relay.
func runFloorRelay(args []string) error {
	fs := newFlagSet("bench "+selfbench.FloorRelayCommand, "bench "+selfbench.FloorRelayCommand+" --upstream URL [--upstream-http1] [--addr HOST:PORT]")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	upstream := fs.String("upstream", "", "the URL every request is relayed to (required)")
	http1 := fs.Bool("upstream-http1", false, "one HTTP/1.1 connection per stream to the upstream instead of h2c")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	srv, err := selfbench.NewFloorRelay(*upstream, *http1)
	if err != nil {
		return usageError("--upstream: %v", err)
	}
	return serveBenchChild(srv, *addr)
}

// serveBenchChild serves srv on addr until interrupted.
func serveBenchChild(srv stack.Server, addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := stack.Listen(addr, "http", os.Stderr)
	if err != nil {
		return usageError("--addr: %v", err)
	}
	return stack.ServeUntilDone(ctx, stop, srv, ln, 5*time.Second, os.Stderr)
}
