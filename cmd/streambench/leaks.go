package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen/leakcheck"
)

// leaksMain is the leak check of a sharded run, in two steps around the shards.
func leaksMain(args []string, out io.Writer) error {
	const usage = "leaks baseline --runtime-metrics URL --mock URL --out FILE\n" +
		"       streambench leaks verify --baseline FILE --runtime-metrics URL --mock URL [--peak-streams N]\n\n" +
		"One leak check for a sharded run: the baseline before any shard starts (shards run with --no-leak-check),\n" +
		"the verify after they all end (or merge --leak-baseline FILE). Verify exits 1 when a gauge leaked."
	if len(args) == 0 || (args[0] != "baseline" && args[0] != "verify") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(os.Stderr, "Usage: streambench %s\n", usage)
			return nil
		}
		return usageError("want a step, baseline or verify; usage: streambench %s", usage)
	}
	step := args[0]
	fs := newFlagSet("leaks "+step, usage)
	l := workload.AddLeaks(fs, step == "verify")
	file := fs.String("out", "", "baseline: write the baseline to this file (required)")
	baseline := fs.String("baseline", "", "verify: the file leaks baseline wrote (required)")
	if err := parseFlagsNoArgs(fs, args[1:]); err != nil {
		return err
	}
	if l.RuntimeMetrics == "" && l.Mock == "" {
		return usageError("give --runtime-metrics, --mock or both: the processes whose gauges the check reads")
	}
	ctx := context.Background()
	if step == "baseline" {
		if *file == "" {
			return usageError("leaks baseline: --out FILE is required")
		}
		b, err := l.Probe().TakeBaseline(ctx)
		if err != nil {
			return usageError("%v", l.Redactor().Error(err))
		}
		if err := leakcheck.WriteBaseline(*file, b); err != nil {
			return err
		}
		for _, nc := range b.NotChecked {
			fmt.Fprintf(out, "not checked: %s: %s\n", nc.Source, l.Redactor().String(nc.Reason))
		}
		fmt.Fprintf(out, "leak baseline: %d sources read, %s\n", len(b.Sources), *file)
		return nil
	}
	if *baseline == "" {
		return usageError("leaks verify: --baseline FILE is required")
	}
	leaks, notChecked, err := l.Verify(ctx, *baseline)
	if err != nil {
		return usageError("%v", err)
	}
	return console.PrintLeaks(out, leaks, notChecked)
}
