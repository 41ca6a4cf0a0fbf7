// Command routecheck judges a run made against a route in front of the mock that cancels its
// provider request when its client leaves (interop/aisdk/route.mjs): it prints the route's
// cancel latency and TTFT and exits 0 when every rule passed (but those given with --known,
// reported and not failing) and a cancel latency was measured, 1 when not, 2 on bad input.
//
//	routecheck [--name ai-sdk-route] [--known R-RULE]... [--known-outcome OUTCOME]... [--no-mock] RUN_DIR
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/interop"
	"github.com/streambench/streambench/measure"
)

func main() {
	fs := pflag.NewFlagSet("routecheck", pflag.ContinueOnError)
	name := fs.String("name", "route", "the route's name in the output")
	knownNames := fs.StringArray("known", nil, "a rule the route is known to break (repeatable): reported, not failing")
	knownOutcomes := fs.StringArray("known-outcome", nil, "an error outcome the route's sessions are known to end with, e.g. truncated (repeatable): reported, not failing")
	noMock := fs.Bool("no-mock", false, "the route's model is not the mock: no cancel latency is required")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: routecheck [--name NAME] [--known RULE]... [--known-outcome OUTCOME]... [--no-mock] RUN_DIR")
		os.Exit(2)
	}
	known := interop.Known{NoMock: *noMock}
	var err error
	if known.Rules, err = interop.ParseRules(*knownNames); err != nil {
		fmt.Fprintf(os.Stderr, "routecheck: --known: %v\n", err)
		os.Exit(2)
	}
	for _, n := range *knownOutcomes {
		oc := measure.Outcome(n)
		if !oc.Valid() || !oc.IsError() {
			fmt.Fprintf(os.Stderr, "routecheck: --known-outcome %q: want an error outcome, one of %v\n", n, measure.Outcomes())
			os.Exit(2)
		}
		known.Outcomes = append(known.Outcomes, oc)
	}
	run, err := measure.ReadRun(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "routecheck: %v\n", err)
		os.Exit(2)
	}
	o := interop.JudgeRoute(run, known)
	fmt.Print(o.Report(*name))
	if !o.Pass() {
		os.Exit(1)
	}
}
