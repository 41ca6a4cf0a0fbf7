package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen/leakcheck"
	"github.com/streambench/streambench/measure"
)

// runLeaks is the leak check of a sharded run, in two steps around the shards.
func runLeaks(args []string) error { return leaksMain(args, os.Stdout) }

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
		b, err := l.Check().Baseline(ctx)
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
	return printLeaks(out, leaks, notChecked)
}

// printLeaks prints each gauge compared and what was not, and fails when one leaked.
func printLeaks(out io.Writer, leaks []measure.Leak, notChecked []measure.LeakNotChecked) error {
	failed := 0
	for _, lk := range leaks {
		word := "ok"
		if !lk.OK {
			word, failed = "LEAK", failed+1
		}
		fmt.Fprintf(out, "%-4s %s %s: %g → %g (delta %g, tolerance %g)\n", word, lk.Source, lk.Name, lk.Before, lk.After, lk.Delta, lk.Tolerance)
	}
	lost := 0
	for _, nc := range notChecked {
		word := "not checked:"
		if nc.Lost {
			word, lost = "LOST", lost+1
		}
		fmt.Fprintf(out, "%s %s %s: %s\n", word, nc.Source, nc.Name, nc.Reason)
	}
	switch {
	case failed > 0:
		return &exitError{code: exitFailure, err: fmt.Errorf("%d gauges grew past their tolerance", failed)}
	case lost > 0:
		return &exitError{code: exitFailure, err: fmt.Errorf("%d of the processes read at the baseline could not be read after the load", lost)}
	}
	return nil
}
