package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/loadgen"
)

// addMetricsAddrFlag registers --metrics-addr (load and run).
func addMetricsAddrFlag(fs *pflag.FlagSet) *string {
	return fs.String("metrics-addr", "", "serve live Prometheus metrics at http://ADDR/metrics while the run lasts, e.g. :9090\n"+
		"(open streams, sessions by outcome, violations by rule, TTFT and chunk-gap histograms; deploy/grafana has a dashboard)")
}

// startLiveMetrics serves the run's live metrics on addr (console.ServeMetrics); "" serves
// nothing. A bad address is a usage error naming --metrics-addr.
func startLiveMetrics(addr string, cfg *loadgen.Config) (listening string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	if listening, stop, err = console.ServeMetrics(addr, cfg, os.Stderr); err != nil {
		return "", nil, usageError("--metrics-addr %s: %v", addr, err)
	}
	return listening, stop, nil
}
