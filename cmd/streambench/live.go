package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/loadgen"
)

// addMetricsAddrFlag registers --metrics-addr (load and run).
func addMetricsAddrFlag(fs *pflag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve live Prometheus metrics at http://ADDR/metrics while the run lasts, e.g. :9090\n"+
		"(open streams, sessions by outcome, violations by rule, TTFT and chunk-gap histograms; deploy/grafana has a dashboard)")
}

// startLiveMetrics serves a loadgen.Live fed by cfg's hooks on addr; "" serves nothing. It
// returns the address it listens on and stop, which closes the server (call it after the run).
func startLiveMetrics(addr string, cfg *loadgen.Config) (listening string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	live := loadgen.NewLive()
	live.Attach(cfg)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, usageError("--metrics-addr %s: %v", addr, err)
	}
	srv := &http.Server{Handler: live.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(os.Stderr, "metrics server: %v\n", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "live metrics on http://%s%s\n", ln.Addr(), loadgen.LivePath)
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// chain returns a hook that calls first (when set), then then: executeLoad's own hooks go
// after the ones the caller attached (live metrics).
func chain[T any](first, then func(T)) func(T) {
	if first == nil {
		return then
	}
	return func(v T) { first(v); then(v) }
}
