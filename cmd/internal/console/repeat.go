package console

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// PlayRepeated is the end of load and run: cfg played n times, start (nil: none) pointing each at
// its target, then Finish. With n > 1 each run is kept in OUT/RUN-ID/RUN-ID-I and the headline
// figures' spread printed and written there; it fails when any run failed; an interrupt ends it.
func PlayRepeated(n int, cfg loadgen.Config, out, metricsAddr string, quiet bool, start func(*loadgen.Config) (func(), error)) error {
	play := func(c loadgen.Config, out string) (*measure.Run, error) {
		if start != nil {
			stop, err := start(&c)
			if err != nil {
				return nil, err
			}
			defer stop()
		}
		return PlayAndFinish(c, out, metricsAddr, quiet)
	}
	if n <= 1 {
		_, err := play(cfg, out)
		return err
	}
	base := cmp.Or(cfg.RunID, loadgen.NewRunID())
	dir := ""
	if out != "" {
		dir = filepath.Join(out, base)
	}
	var runs []*measure.Summary
	var failed []string
	for i := 1; i <= n; i++ {
		c := cfg
		c.RunID = base + "-" + strconv.Itoa(i)
		c.Info.Extra = workload.WithExtra(c.Info.Extra, map[string]string{"repeat": fmt.Sprintf("%d of %d", i, n)})
		fmt.Fprintf(os.Stderr, "repeat %d of %d: run %s\n", i, n, c.RunID)
		run, err := play(c, dir)
		var f *Failed
		if err != nil && !errors.As(err, &f) {
			return err
		}
		if f != nil {
			failed = append(failed, c.RunID+": "+f.Error())
		}
		runs = append(runs, &run.Summary)
		if run.Summary.Interrupted {
			break
		}
	}
	if err := writeRepeats(dir, measure.NewRepeats(runs)); err != nil {
		return err
	}
	if len(failed) > 0 || len(runs) < n {
		return &Failed{Reasons: append(failed, fmt.Sprintf("%d of %d runs played", len(runs), n))}
	}
	return nil
}

// writeRepeats prints the spread, and writes it into dir ("": nowhere).
func writeRepeats(dir string, r measure.Repeats) error {
	t := report.RepeatsTable(r)
	fmt.Fprintln(printed(dir))
	if err := t.WriteText(printed(dir)); err != nil {
		fmt.Fprintf(os.Stderr, "streambench: printing the spread: %v\n", err)
	}
	if dir == "" {
		return nil
	}
	if err := measure.WriteRepeats(dir, r); err != nil {
		return fmt.Errorf("write the spread: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "repeats.md"))
	if err != nil {
		return fmt.Errorf("write the spread: %w", err)
	}
	t.WriteMarkdown(f, "##")
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the spread: %w", err)
	}
	fmt.Printf("repeats: %s (%s, repeats.md)\n", dir, measure.RepeatsFile)
	return nil
}
