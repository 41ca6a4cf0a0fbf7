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

// serve serves srv on addr (and profiles on pprofAddr) until ctx ends, saying banner once it listens.
func serve(ctx context.Context, stop context.CancelFunc, srv stack.Server, addr, scheme, pprofAddr string, grace time.Duration, banner func()) error {
	if pprofAddr != "" {
		stopPprof, err := stack.ServePprof(pprofAddr, os.Stderr)
		if err != nil {
			return usageError("--pprof %s: %v", pprofAddr, err)
		}
		defer stopPprof()
	}
	ln, err := stack.Listen(addr, scheme, os.Stderr)
	if err != nil {
		return usageError("--addr: %v", err)
	}
	banner()
	return stack.ServeUntilDone(ctx, stop, srv, ln, grace, os.Stderr)
}
