// Command routecheck judges a run made against a route in front of the mock that cancels its
// provider request when its client leaves (interop/aisdk/route.mjs): it prints the route's
// cancel latency and TTFT and exits 0 when every rule passed (but those given with --known,
// reported and not failing) and a cancel latency was measured, 1 when not, 2 on bad input.
//
//	routecheck [--name ai-sdk-route] [--known R-RULE]... RUN_DIR
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/interop"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
)

func main() {
	fs := pflag.NewFlagSet("routecheck", pflag.ContinueOnError)
	name := fs.String("name", "route", "the route's name in the output")
	knownNames := fs.StringArray("known", nil, "a rule the route is known to break (repeatable): reported, not failing")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: routecheck [--name NAME] [--known RULE]... RUN_DIR")
		os.Exit(2)
	}
	var known []protocol.Rule
	for _, n := range *knownNames {
		r, err := dialects.Default().Rules().Parse(n)
		if err != nil {
			fmt.Fprintf(os.Stderr, "routecheck: --known: %v\n", err)
			os.Exit(2)
		}
		known = append(known, r)
	}
	run, err := measure.ReadRun(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "routecheck: %v\n", err)
		os.Exit(2)
	}
	o := interop.JudgeRoute(run, known...)
	fmt.Print(o.Report(*name))
	if !o.Pass() {
		os.Exit(1)
	}
}
