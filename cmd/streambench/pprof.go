package main

import (
	"os"

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
