package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// server is what mock and runtime serve: an HTTP server with a graceful shutdown.
type server interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
}

// serveUntilInterrupted serves srv on ln until it fails or ctx ends (the first Ctrl-C), then
// calls stop so that a second Ctrl-C kills the process, and lets in-flight streams finish for
// up to grace before the server cuts them.
func serveUntilInterrupted(ctx context.Context, stop context.CancelFunc, srv server, ln net.Listener, grace time.Duration) error {
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintf(os.Stderr, "shutting down: letting in-flight streams finish for up to %s (Ctrl-C again to quit now)\n", grace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// listen opens addr and announces it on standard error as "listening on SCHEME://ADDR"
// (scheme http or https), the line stack.StartChild waits for.
func listen(addr, scheme string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageError("--addr %s: %v", addr, err)
	}
	fmt.Fprintf(os.Stderr, "listening on %s://%s\n", scheme, ln.Addr())
	return ln, nil
}
