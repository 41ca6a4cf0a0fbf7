package main

import (
	"context"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/stack"
)

// addPprofFlag registers --pprof (mock and runtime).
func addPprofFlag(fs *pflag.FlagSet) *string {
	return fs.String("pprof", "", "serve Go profiles at http://ADDR/debug/pprof/ on a listener of their own (default: none);\n"+
		"an ADDR without a host (:6060) listens on loopback only; /debug/pprof/cmdline is never served")
}

// startPprof serves profiles on addr ("" serves none) until the returned function is called.
func startPprof(addr string) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	stop, err = stack.ServePprof(addr, os.Stderr)
	if err != nil {
		return nil, usageError("--pprof %s: %v", addr, err)
	}
	return stop, nil
}

// serve serves srv on addr (and profiles on pprofAddr) until ctx ends, saying banner once it listens.
func serve(ctx context.Context, stop context.CancelFunc, srv stack.Server, addr, scheme, pprofAddr string, grace time.Duration, banner func()) error {
	stopPprof, err := startPprof(pprofAddr)
	if err != nil {
		return err
	}
	defer stopPprof()
	ln, err := stack.Listen(addr, scheme, os.Stderr)
	if err != nil {
		return usageError("--addr: %v", err)
	}
	banner()
	return stack.ServeUntilDone(ctx, stop, srv, ln, grace, os.Stderr)
}
