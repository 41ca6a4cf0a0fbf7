package main

import (
	"io"
	"os"

	"github.com/streambench/streambench/report"
)

// runCompare prints two runs side by side with the change of every metric.
func runCompare(args []string) error { return compareMain(args, os.Stdout) }

func compareMain(args []string, out io.Writer) error {
	fs := newFlagSet("compare", "compare DIR_A DIR_B [--markdown]\n\n"+
		"Print run A (the reference) against run B: first a warning when their workloads differ (clients, rate,\n"+
		"stages, duration, sessions, mix, dialects, ...), then the 10 largest changes (p50, p90 and p99 of\n"+
		"histograms with at least 30 values in both runs, and errors, violations, leaks, tokens/s and goodput),\n"+
		"then every metric with its change in percent.")
	markdown := fs.Bool("markdown", false, "print a GitHub-flavoured Markdown table (for CI job summaries)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("want two run directories, got %d; usage: streambench compare DIR_A DIR_B", fs.NArg())
	}
	a, err := readRunArg(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := readRunArg(fs.Arg(1))
	if err != nil {
		return err
	}
	c := report.Compare(a, b)
	if *markdown {
		c.WriteMarkdown(out)
		return nil
	}
	return c.WriteText(out)
}
