// Command hopcheck compares a run made through a hop between the runtime and the provider (an
// AI gateway) with a direct run of the same workload, prints the hop's TTFC overhead and abort
// findings, and exits 0 when the outcome is as expected, 1 when not, 2 on bad input.
//
//	hopcheck [--name portkey] [--cancels-upstream] [--metric ttft] [--known R-RULE]... DIRECT_RUN_DIR VIA_RUN_DIR
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/interop"
	"github.com/streambench/streambench/measure"
)

func main() {
	fs := pflag.NewFlagSet("hopcheck", pflag.ContinueOnError)
	name := fs.String("name", "hop", "the hop's name in the output")
	cancels := fs.Bool("cancels-upstream", false, "the hop ends its upstream request when the runtime leaves (R-abort must then pass)")
	metric := fs.String("metric", string(measure.FirstChunk), "the first-chunk latency to compare: ttfc, or ttft for a generator speaking a provider wire to the hop")
	known := fs.StringArray("known", nil, "a rule beyond R-abort the hop is known to break (repeatable): reported, not failing, and required")
	if err := fs.Parse(os.Args[1:]); err != nil || fs.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: hopcheck [--name NAME] [--cancels-upstream] [--metric ttfc|ttft] [--known RULE]... DIRECT_RUN_DIR VIA_RUN_DIR")
		os.Exit(2)
	}
	exp := interop.HopExpectation{CancelsUpstream: *cancels, Metric: measure.Metric(*metric)}
	if exp.Metric != measure.FirstChunk && exp.Metric != measure.TimeToFirstToken {
		fmt.Fprintf(os.Stderr, "hopcheck: --metric %q: expected ttfc or ttft\n", *metric)
		os.Exit(2)
	}
	var err error
	if exp.Known, err = interop.ParseRules(*known); err != nil {
		fmt.Fprintf(os.Stderr, "hopcheck: --known: %v\n", err)
		os.Exit(2)
	}
	var runs [2]*measure.Run
	for i, dir := range fs.Args() {
		r, err := measure.ReadRun(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "hopcheck: %v\n", err)
			os.Exit(2)
		}
		runs[i] = r
	}
	o := interop.JudgeHop(runs[0], runs[1], exp)
	fmt.Print(o.Report(*name))
	if !o.Pass() {
		os.Exit(1)
	}
}
