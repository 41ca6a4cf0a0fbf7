package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Server is what a serving subcommand serves: an HTTP server with a graceful shutdown.
type Server interface {
	Serve(ln net.Listener) error
	Shutdown(ctx context.Context) error
}

// Listen opens addr and announces it on log as "listening on SCHEME://ADDR" for StartChild.
func Listen(addr, scheme string, log io.Writer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	fmt.Fprintf(log, "listening on %s://%s\n", scheme, ln.Addr())
	return ln, nil
}

// ServeUntilDone serves srv on ln until it fails or ctx ends (the first Ctrl-C), then calls
// stop (so a second Ctrl-C kills the process) and lets in-flight streams finish for up to grace.
func ServeUntilDone(ctx context.Context, stop context.CancelFunc, srv Server, ln net.Listener, grace time.Duration, log io.Writer) error {
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	stop()
	fmt.Fprintf(log, "shutting down: letting in-flight streams finish for up to %s (Ctrl-C again to quit now)\n", grace)
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
