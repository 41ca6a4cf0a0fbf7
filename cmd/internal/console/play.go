package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/live"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// Play runs cfg with its progress on stderr (none when quiet), its sessions tallied, and
// Ctrl-C handled (the first drains, the second cancels); an error is a *BadInput.
func Play(cfg loadgen.Config, quiet bool) (*measure.Run, *Tally, error) {
	interrupt := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		fmt.Fprintf(os.Stderr, "\ninterrupted: no new sessions; draining in-flight streams for up to %s (Ctrl-C again to stop now)\n", cfg.Grace)
		close(interrupt)
		<-sigs
		fmt.Fprintln(os.Stderr, "\ninterrupted again: cancelling in-flight streams and writing what was measured")
		cancel()
	}()
	cfg.Interrupt = interrupt
	table := NewTally()
	// After the caller's outputs (live metrics), which the run calls first.
	cfg.Outputs = append(cfg.Outputs, table) // its sessions, and R-abort's late violations
	var prog *Progress
	if !quiet {
		prog = NewProgress(os.Stderr)
		cfg.Outputs = append(cfg.Outputs, loadgen.ProgressFunc(prog.Update))
	}
	cpuBefore := loadgen.ProcessCPU()
	run, err := loadgen.Run(ctx, cfg)
	if prog != nil {
		prog.Close()
	}
	if err != nil {
		return nil, nil, &BadInput{err}
	}
	table.CPU = loadgen.ProcessCPU() - cpuBefore
	return run, table, nil
}

// ServeMetrics serves a live.Exporter, added to cfg's outputs, on addr ("": none) and says
// where on w; call stop after the run. A bad address is a *BadInput.
func ServeMetrics(addr string, cfg *loadgen.Config, w io.Writer) (listening string, stop func(), err error) {
	if addr == "" {
		return "", func() {}, nil
	}
	listening, stop, err = live.Serve(addr, cfg, func(format string, args ...any) { fmt.Fprintf(w, format, args...) })
	if err != nil {
		return "", nil, &BadInput{fmt.Errorf("--metrics-addr %s: %w", addr, err)}
	}
	fmt.Fprintf(w, "live metrics on http://%s%s\n", listening, live.Path)
	return listening, stop, nil
}

// Finish writes run's results into a directory of out (none when ""), renders its report
// there when render is set (never a shard's), prints its summary, and returns a *Failed when
// its verdict is FAIL. A failed print (`run | head`) is said on stderr, changing nothing else.
func Finish(run *measure.Run, table *Tally, out string, render bool) error {
	dir := ""
	if out != "" {
		dir = measure.RunDir(out, &run.Summary)
		if err := measure.WriteRun(dir, run); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		if render && run.Summary.Shard == nil {
			if err := report.Render(dir); err != nil {
				return fmt.Errorf("render report in %s: %w", dir, err)
			}
		}
	}
	err := report.WriteSummary(printed(out), run, table.SessionTally)
	if err == nil && dir != "" {
		_, err = fmt.Printf("results: %s\n", dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "streambench: printing the summary: %v (the results are written whole)\n", err)
	}
	if !run.Summary.Verdict.Pass {
		return &Failed{Reasons: run.Summary.Verdict.Reasons}
	}
	return nil
}

// BadInput is a run that could not happen for what it was given (a Config loadgen refuses).
type BadInput struct{ Err error }

func (b *BadInput) Error() string { return b.Err.Error() }
func (b *BadInput) Unwrap() error { return b.Err }

// Failed is a run whose verdict is FAIL.
type Failed struct{ Reasons []string }

func (f *Failed) Error() string { return "run failed: " + strings.Join(f.Reasons, "; ") }

// Preflight runs loadgen.Preflight with Ctrl-C cancelling it and says its warnings; a Config
// loadgen refuses is a *BadInput.
func Preflight(cfg loadgen.Config, quiet bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	warnings, err := loadgen.Preflight(ctx, cfg)
	if ctx.Err() != nil {
		return errors.New("interrupted during the preflight: no load was sent")
	}
	if !quiet {
		for _, w := range warnings {
			fmt.Fprintf(os.Stderr, "warning: %s\n", w)
		}
	}
	var pe *loadgen.PreflightError
	if err != nil && !errors.As(err, &pe) {
		return &BadInput{err}
	}
	return err
}

// PlayAndFinish plays cfg with snapshots into out and live metrics on metricsAddr ("": none),
// then Finish with the report rendered; the run is nil when none happened.
func PlayAndFinish(cfg loadgen.Config, out, metricsAddr string, quiet bool) (*measure.Run, error) {
	var records *measure.RecordsWriter
	if out != "" {
		records = measure.NewRecordsWriter()
		// Each snapshot goes where the results go, said once, the records opened there.
		cfg.Outputs = append(cfg.Outputs, loadgen.SnapshotFunc(measure.SnapshotWriter(out, func(dir string) {
			records.Open(dir)
			if !quiet {
				fmt.Fprintf(os.Stderr, "results: %s (written as the run goes; %s as requests end)\n", dir, measure.RecordsFile)
			}
		})))
	} else {
		records = measure.NewRecordsStream(os.Stdout) // --out -: stdout carries the records
	}
	cfg.Outputs = append(cfg.Outputs, records)
	_, stopMetrics, err := ServeMetrics(metricsAddr, &cfg, os.Stderr)
	if err != nil {
		records.Close()
		return nil, err
	}
	defer stopMetrics()
	run, table, err := Play(cfg, quiet)
	info := records.Close()
	if info.LeftOut > 0 {
		fmt.Fprintf(os.Stderr, "%s: %d requests written, %d left out: %s\n", measure.RecordsFile, info.Written, info.LeftOut, info.Why)
	}
	if run != nil {
		run.Summary.Records = &info
	}
	if err != nil {
		return nil, err
	}
	return run, Finish(run, table, out, true)
}

// printed is where a run's summary goes: stdout, or stderr when stdout carries the records
// (--out -, out "").
func printed(out string) io.Writer {
	if out == "" {
		return os.Stderr
	}
	return os.Stdout
}

// PrintLeaks prints each gauge compared and what was not, and fails when one leaked.
func PrintLeaks(out io.Writer, leaks []measure.Leak, notChecked []measure.LeakNotChecked) error {
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
		return fmt.Errorf("%d gauges grew past their tolerance", failed)
	case lost > 0:
		return fmt.Errorf("%d of the processes read at the baseline could not be read after the load", lost)
	}
	return nil
}
