package console

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/live"
	"github.com/streambench/streambench/measure"
)

// Play runs cfg with its progress on stderr (none when quiet), its sessions tallied, and
// Ctrl-C handled: the first interrupt stops new sessions and drains, the second cancels
// in-flight streams; the results are returned either way. An error is loadgen.Run's: the run
// could not happen.
func Play(cfg loadgen.Config, quiet bool) (*measure.Run, *Tally, error) {
	interrupt := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintf(os.Stderr, "\ninterrupted: no new sessions; draining in-flight streams for up to %s (Ctrl-C again to stop now)\n", cfg.Grace)
				close(interrupt)
				continue
			}
			fmt.Fprintln(os.Stderr, "\ninterrupted again: cancelling in-flight streams and writing what was measured")
			cancel()
			return
		}
	}()
	cfg.Interrupt = interrupt
	table := NewTally()
	// After the outputs the caller set (live metrics), so the run calls those first.
	cfg.Outputs = append(cfg.Outputs, loadgen.SessionEndFunc(table.Add))
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
		return nil, nil, err
	}
	table.CPU = loadgen.ProcessCPU() - cpuBefore
	return run, table, nil
}

// ServeMetrics serves a live.Exporter, added to cfg's outputs after those already set, on
// addr, and says where on w. It returns the address it listens on and stop, which closes the
// server (call it after the run).
func ServeMetrics(addr string, cfg *loadgen.Config, w io.Writer) (listening string, stop func(), err error) {
	listening, stop, err = live.Serve(addr, cfg, func(format string, args ...any) { fmt.Fprintf(w, format, args...) })
	if err != nil {
		return "", nil, err
	}
	fmt.Fprintf(w, "live metrics on http://%s%s\n", listening, live.Path)
	return listening, stop, nil
}
