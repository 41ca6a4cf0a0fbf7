package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
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
	allowIncomplete := fs.Bool("allow-incomplete", false, "compare a run that did not finish (killed, or still running: its summary.json says \"incomplete\": true),\n"+
		"marked INCOMPLETE; without it such a run is refused as gate refuses it (exit 104)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usageError("want two run directories, got %d; usage: streambench compare DIR_A DIR_B", fs.NArg())
	}
	var runs [2]*measure.Run
	for i := range runs {
		run, err := readRunArg(fs.Arg(i))
		if err != nil {
			return err
		}
		if run.Summary.Incomplete && !*allowIncomplete {
			s := &run.Summary
			return &exitError{code: exitUsage, err: fmt.Errorf("run %s (%s): %w (its %s says \"incomplete\": true): a snapshot taken %s into the run, at %s UTC, when it was killed or still running; compare finished runs, or pass --allow-incomplete",
				s.RunID, fs.Arg(i), verdict.ErrIncomplete, measure.SummaryFile, s.Ended.Sub(s.Started).Round(time.Second), s.Ended.UTC().Format(time.TimeOnly))}
		}
		runs[i] = run
	}
	a, b := runs[0], runs[1]
	c := report.Compare(a, b)
	if *markdown {
		c.WriteMarkdown(out)
		return nil
	}
	return c.WriteText(out)
}
