package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/sweep"
)

// reportMain re-renders the plots, report.html and report.md of saved runs.
func reportMain(args []string, out io.Writer) error {
	fs := newFlagSet("report", "report DIR...\n\nRe-render each run directory's plots (PNG, SVG), report.html and report.md from its saved results\n(a sweep directory: its sweep report, re-judged with its SLOs).")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("missing run directory; usage: streambench report DIR...")
	}
	for _, dir := range fs.Args() {
		if sweep.IsDir(dir) {
			// A sweep directory: re-judge its saved steps with their own SLOs and re-render.
			if err := rejudgeSweep(dir, nil, out); err != nil {
				return err
			}
			continue
		}
		run, err := readRunArg(dir)
		if err != nil {
			return err
		}
		if err := report.RenderRun(dir, run); err != nil {
			return fmt.Errorf("render %s: %w", dir, err)
		}
		verdict := "run failed"
		if run.Summary.Verdict.Pass {
			verdict = "run passed"
		}
		if b := report.IncompleteBanner(&run.Summary); b != "" {
			verdict = b
		}
		fmt.Fprintf(out, "%s: %s, %s and plots (%s)\n", run.Summary.RunID,
			filepath.Join(dir, report.HTMLFile), filepath.Join(dir, report.MarkdownFile), verdict)
	}
	return nil
}

// readRunArg reads a run directory named on the command line; one that cannot be read is bad input.
func readRunArg(dir string) (*measure.Run, error) {
	run, err := measure.ReadRun(dir)
	if err != nil {
		return nil, &exitError{code: exitUsage, err: err}
	}
	return run, nil
}
