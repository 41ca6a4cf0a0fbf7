package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
)

// mergeMain makes one run directory of a sharded run's shard directories.
func mergeMain(args []string, out io.Writer) error {
	fs := newFlagSet("merge", "merge SHARD-DIR... --out DIR [--leak-baseline FILE --runtime-metrics URL --mock URL]\n\n"+
		"One run directory from the shard directories of a sharded run (load --shard I/N --out OUT writes OUT/RUN-ID/shard-I):\n"+
		"histograms merged without loss, counters summed, timelines summed per wall-clock second, the verdict judged anew.\n"+
		"Refuses (exit 104) shards of different runs, seeds, mixes or versions, shards judged by different settings (--allow,\n"+
		"the mix's thresholds, goodput SLOs, timeouts, request options), an incomplete shard (one killed before it\n"+
		"finished: its summary.json says \"incomplete\": true), and a missing or repeated shard. With --leak-baseline,\n"+
		"verifies the whole run's leak check against it. Exits 1 when the merged run fails.")
	dst := fs.String("out", "", "write the merged run into this directory (required): a new one, not a shard's nor one holding a run")
	baseline := fs.String("leak-baseline", "", "the file streambench leaks baseline wrote before the shards: verify against it")
	noRender := fs.Bool("no-render", false, "write the results only, not report.html, report.md and plots")
	l := workload.AddLeaks(fs, true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dst == "" {
		return usageError("--out DIR is required")
	}
	if fs.NArg() == 0 {
		return usageError("missing shard directories; usage: streambench merge SHARD-DIR... --out DIR")
	}
	if *baseline == "" && (l.RuntimeMetrics != "" || l.Mock != "") {
		return usageError("--runtime-metrics and --mock are for the leak check: give --leak-baseline FILE too")
	}
	// Refuse before the leak check waits for gauges to settle.
	if err := measure.CheckMergeOut(*dst, fs.Args()); err != nil {
		return usageError("%v", err)
	}
	shards, err := measure.ReadShards(fs.Args())
	if err != nil {
		return usageError("%v", err)
	}
	var leaks *measure.MergeLeaks
	if *baseline != "" {
		if l.PeakStreams == 0 {
			l.PeakStreams = measure.PeakStreams(shards)
		}
		found, notChecked, err := l.Verify(context.Background(), *baseline)
		if err != nil {
			return usageError("%v", err)
		}
		leaks = &measure.MergeLeaks{Leaks: found, NotChecked: notChecked}
	}
	run, err := measure.Merge(shards, leaks)
	if err != nil {
		return usageError("%v", err)
	}
	if err := verdict.Stamp(run); err != nil {
		return usageError("judge the merged run: %v", err)
	}
	if err := measure.WriteRun(*dst, run); err != nil {
		return fmt.Errorf("write merged run: %w", err)
	}
	if err := report.WriteSummary(out, run, report.SavedTally(run)); err != nil {
		return err
	}
	if !*noRender {
		if err := report.RenderRun(*dst, run); err != nil {
			return fmt.Errorf("render %s: %w", *dst, err)
		}
	}
	fmt.Fprintf(out, "merged %d shards of %s: %s\n", len(shards), run.Summary.RunID, *dst)
	if !run.Summary.Verdict.Pass {
		return &exitError{code: exitFailure, err: fmt.Errorf("run failed: %s", strings.Join(run.Summary.Verdict.Reasons, "; "))}
	}
	return nil
}
