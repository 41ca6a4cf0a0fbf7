package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/live"
)

// addMetricsAddrFlag registers --metrics-addr (load and run).
func addMetricsAddrFlag(fs *pflag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve live Prometheus metrics at http://ADDR/metrics while the run lasts, e.g. :9090\n"+
		"(open streams, sessions by outcome, violations by rule, TTFT and chunk-gap histograms; deploy/grafana has a dashboard)")
}

// startLiveMetrics serves a live.Exporter added to cfg's outputs on addr; "" serves nothing. It
// returns the address it listens on and stop, which closes the server (call it after the run).
func startLiveMetrics(addr string, cfg *loadgen.Config) (listening string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	listening, stop, err = live.Serve(addr, cfg, func(format string, args ...any) { fmt.Fprintf(os.Stderr, format, args...) })
	if err != nil {
		return "", nil, usageError("--metrics-addr %s: %v", addr, err)
	}
	fmt.Fprintf(os.Stderr, "live metrics on http://%s%s\n", listening, live.Path)
	return listening, stop, nil
}
