package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
)

// compareMain prints two runs side by side with the change of every metric.
func compareMain(args []string, out io.Writer) error {
	fs := newFlagSet("compare", "compare DIR_A DIR_B [--markdown] [--plot FILE]\n\n"+
		"Print run A (the reference) against run B: first a warning when their workloads differ (clients, rate,\n"+
		"stages, duration, sessions, mix, dialects, ...), then the 10 largest changes (p50, p90 and p99 of\n"+
		"histograms with at least 30 values in both runs, and errors, violations, leaks, tokens/s and goodput),\n"+
		"then every metric with its change in percent. A directory of load or run --repeat (its repeats.json) is set beside\n"+
		"the other as each headline figure's median and range, and whether the two ranges overlap.")
	markdown := fs.Bool("markdown", false, "print a GitHub-flavoured Markdown table (for CI job summaries)")
	allowIncomplete := fs.Bool("allow-incomplete", false, "compare a run that did not finish (killed, or still running: its summary.json says \"incomplete\": true),\n"+
		"marked INCOMPLETE; without it such a run is refused as gate refuses it (exit 104)")
	plotFile := fs.String("plot", "", "also draw A beside B into FILE (.png or .svg): two runs' ttft, ttfc, chunk gap and e2e percentile spectra;\n"+
		"with repeats, each headline figure's runs as a share of A's median")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if ext := strings.ToLower(filepath.Ext(*plotFile)); *plotFile != "" && ext != ".png" && ext != ".svg" {
		return usageError("--plot %s: want a .png or .svg file", *plotFile)
	}
	if fs.NArg() != 2 {
		return usageError("want two run directories, got %d; usage: streambench compare DIR_A DIR_B", fs.NArg())
	}
	if sets, ok, err := compareRepeats(fs.Arg(0), fs.Arg(1)); ok || err != nil {
		c := report.CompareRepeats(sets[0], sets[1])
		if err == nil && *plotFile != "" {
			err = report.CompareRepeatsFigure(sets[0], sets[1]).WriteFile(*plotFile)
		}
		if err == nil && *markdown {
			c.WriteMarkdown(out, "##")
		} else if err == nil {
			err = c.WriteText(out)
		}
		return err
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
	if *plotFile != "" {
		f, err := report.CompareFigure(a, b)
		if err == nil {
			err = f.WriteFile(*plotFile)
		}
		if err != nil {
			return err
		}
	}
	if *markdown {
		c.WriteMarkdown(out)
		return nil
	}
	return c.WriteText(out)
}

// compareRepeats reads two directories as sets of runs when either holds repeated runs (ok
// false when neither does); a single run is a set of one.
func compareRepeats(a, b string) ([2]measure.Repeats, bool, error) {
	dirs := []string{a, b}
	var sets [2]measure.Repeats
	repeated := false
	for i, dir := range dirs {
		r, err := measure.ReadRepeats(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return sets, false, &exitError{code: exitUsage, err: err}
		}
		sets[i], repeated = r, repeated || err == nil
	}
	if !repeated {
		return sets, false, nil
	}
	for i, dir := range dirs {
		if sets[i].Runs == nil {
			run, err := readRunArg(dir)
			if err != nil {
				return sets, false, err
			}
			sets[i] = measure.NewRepeats([]*measure.Summary{&run.Summary})
		}
	}
	return sets, true, nil
}
