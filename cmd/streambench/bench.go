package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
)

// benchFigure is one measured number with its unit and, when the issues set one, its target.
type benchFigure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Target states the goal in words ("≤ 1 ms"); Met says whether Value reached it. Both are
	// empty for figures that are context rather than goals.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
}

// benchReport is what one measurement found: its figures, how it measured them, and whether the
// run behind them was clean (no errors, violations or leaks). Missed targets are reported, not
// failures: on a shared 2-core machine they measure the machine as much as the code.
type benchReport struct {
	Name    string        `json:"name"`
	Command string        `json:"command"`
	Method  string        `json:"method"`
	Figures []benchFigure `json:"figures"`
	// Failures are correctness problems (errors, violations, leaks, streams that never
	// opened); any of them makes the bench command exit non-zero.
	Failures []string `json:"failures,omitempty"`
	// Notes explain figures that need it (what limited a run, what a figure includes).
	Notes []string `json:"notes,omitempty"`
}

// add appends a figure without a target.
func (r *benchReport) add(name string, value float64, unit string) {
	r.Figures = append(r.Figures, benchFigure{Name: name, Value: value, Unit: unit})
}

// addTarget appends a figure with its target; met is whether the value reached it.
func (r *benchReport) addTarget(name string, value float64, unit, target string, met bool) {
	r.Figures = append(r.Figures, benchFigure{Name: name, Value: value, Unit: unit, Target: target, Met: &met})
}

func (r *benchReport) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

func (r *benchReport) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// print writes the report as a small table with units.
func (r *benchReport) print(w io.Writer) {
	fmt.Fprintf(w, "== %s\n   command: %s\n   method: %s\n", r.Name, r.Command, r.Method)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, f := range r.Figures {
		target := ""
		if f.Target != "" {
			verdict := "met"
			if f.Met != nil && !*f.Met {
				verdict = "MISSED"
			}
			target = fmt.Sprintf("target %s: %s", f.Target, verdict)
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", f.Name, formatFigure(f.Value), f.Unit, target)
	}
	tw.Flush()
	for _, n := range r.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "   result: clean")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "   FAILED: %s\n", f)
	}
	fmt.Fprintln(w)
}

// formatFigure prints integers as integers and other values with three significant decimals.
func formatFigure(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	switch a := max(v, -v); {
	case a > 0 && a < 0.001:
		return fmt.Sprintf("%.1e", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// benchFlags are every measurement's settings; zero values mean the measurement's default, so
// `bench all` runs each at its own documented size.
type benchFlags struct {
	jsonFile        string
	streams         int
	duration        time.Duration
	ramp            time.Duration
	streamLength    time.Duration
	interToken      time.Duration
	ttft            time.Duration
	rate            float64
	tokensPerSecond float64
	http2           bool
	keepDir         bool
	profileDir      string
	providerHTTP1   bool
	quiet           bool
}

// benchMeasurement is one thing `bench` can measure.
type benchMeasurement struct {
	name, summary string
	run           func(ctx context.Context, f *benchFlags) (*benchReport, error)
}

// benchMeasurements lists the measurements in the order `bench all` runs them: scale first,
// while this process's heap holds nothing from earlier measurements (its memory per stream is
// a difference of RSS), the in-process pacing self-test last.
func benchMeasurements() []benchMeasurement {
	return []benchMeasurement{
		{"scale", "N concurrent streams through mock, runtime and generator in separate processes: errors, violations, leaks, memory per stream, CPU per frame", benchScale},
		{"fidelity", "TTFC − scripted TTFT at 2,000 streams, through the runtime and against a paced server (the harness's own error)", benchFidelity},
		{"rate", "an open-loop run's achieved session rate against its target", benchRate},
		{"codec", "SSE decode of ~60-byte data frames: events/s per core, ns and allocations per event", benchCodec},
		{"pacing", "the mock's pacing error and CPU per token at 2,000 streams × 20 tokens/s (its self-test)", benchPacing},
	}
}

// runBench measures streambench's own costs and fidelity in the product binary.
func runBench(args []string) error {
	if len(args) > 0 && args[0] == pacedServerCommand {
		return runPacedServer(args[1:])
	}
	measurements := benchMeasurements()
	var names []string
	for _, m := range measurements {
		names = append(names, m.name)
	}
	fs := newFlagSet("bench", "bench ["+strings.Join(names, "|")+"|all] [flags]")
	f := &benchFlags{}
	fs.StringVar(&f.jsonFile, "json", "", "also write the figures to this JSON file")
	fs.IntVar(&f.streams, "streams", 0, "concurrent streams (default: pacing 2000, scale 5000, fidelity 2000)")
	fs.DurationVar(&f.duration, "duration", 0, "pacing: each stream's length (default 10s); fidelity: how long sessions start (default 30s); rate: the run's length (default 20s)")
	fs.DurationVar(&f.ramp, "ramp", 0, "scale: open the streams over this period (default 20s)")
	fs.DurationVar(&f.streamLength, "stream-length", 0, "scale: how long each stream lasts (default 30s); fidelity: roughly how long each session lasts (default 15s: 2,000 open streams at 133 new sessions/s)")
	fs.DurationVar(&f.interToken, "itl", 0, "scale: the scripted inter-token latency (default 500ms: 2 tokens/s per stream)")
	fs.DurationVar(&f.ttft, "ttft", 0, "fidelity: the scripted constant time to first token (default 200ms)")
	fs.Float64Var(&f.rate, "rate", 0, "rate: target sessions per second (default 200)")
	fs.Float64Var(&f.tokensPerSecond, "tokens-per-second", 0, "pacing: tokens per second per stream (default 20)")
	fs.BoolVar(&f.http2, "http2", false, "scale, fidelity: the generator uses h2c instead of one HTTP/1.1 connection per stream")
	fs.BoolVar(&f.providerHTTP1, "provider-http1", false, "scale, fidelity, rate: the runtime talks HTTP/1.1 to the mock instead of h2c")
	fs.BoolVar(&f.keepDir, "keep", false, "keep the generated scenario directory (its path is printed)")
	fs.StringVar(&f.profileDir, "profile", "", "scale: write the generator's heap and goroutine profiles to this directory once every stream is open")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress output")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: streambench bench [%s|all] [flags]\n\nMeasurements:\n", strings.Join(names, "|"))
		for _, m := range measurements {
			fmt.Fprintf(os.Stderr, "  %-9s %s\n", m.name, m.summary)
		}
		fmt.Fprintf(os.Stderr, "  %-9s every measurement above, in this order\n\nFlags:\n", "all")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer spareProcs()()
	if fs.NArg() != 1 {
		return usageError("name one measurement: %s or all (got %q)", strings.Join(names, ", "), fs.Args())
	}
	if err := f.validate(fs); err != nil {
		return err
	}
	what := fs.Arg(0)
	var todo []int
	for i, m := range measurements {
		if what == "all" || what == m.name {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return usageError("unknown measurement %q: want %s or all", what, strings.Join(names, ", "))
	}
	raiseOpenFileLimit()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var reports []*benchReport
	var failed []string
	for _, i := range todo {
		m := measurements[i]
		if !f.quiet {
			fmt.Fprintf(os.Stderr, "bench %s: %s\n", m.name, m.summary)
		}
		loadBefore := loadAverage()
		rep, err := m.run(ctx, f)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name, err)
		}
		// Every figure here depends on how much of the 2 cores the measurement got.
		rep.note("load average before %s, after %s (%d CPUs)", loadBefore, loadAverage(), runtime.NumCPU())
		rep.print(os.Stdout)
		reports = append(reports, rep)
		if len(rep.Failures) > 0 {
			failed = append(failed, m.name)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted", m.name)
		}
	}
	if f.jsonFile != "" {
		b, err := json.MarshalIndent(struct {
			Environment map[string]string `json:"environment"`
			Reports     []*benchReport    `json:"reports"`
		}{benchEnvironment(), reports}, "", "  ")
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		if err := os.WriteFile(f.jsonFile, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if len(failed) > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("not clean: %s", strings.Join(failed, ", "))}
	}
	return nil
}

// validate rejects negative sizes; zero means "the measurement's default".
func (f *benchFlags) validate(fs *pflag.FlagSet) error {
	for _, c := range []struct {
		flag string
		bad  bool
	}{
		{"streams", f.streams < 0}, {"duration", f.duration < 0}, {"ramp", f.ramp < 0},
		{"stream-length", f.streamLength < 0}, {"itl", f.interToken < 0}, {"ttft", f.ttft < 0},
		{"rate", f.rate < 0}, {"tokens-per-second", f.tokensPerSecond < 0},
	} {
		if c.bad {
			return usageError("--%s %s: want a positive value (or leave it out for the default)", c.flag, fs.Lookup(c.flag).Value)
		}
	}
	return nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// raiseOpenFileLimit lifts this process's open-files soft limit to its hard limit (children
// inherit it): at 10,000 streams the generator holds 10,000 sockets and the runtime 10,000
// more. Go does this itself at start-up since 1.19; doing it again costs nothing and states
// the dependency.
func raiseOpenFileLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// openFileLimit is this process's open-files soft limit (0 when unknown).
func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}

// loadAverage is the 1-minute load average from /proc/loadavg ("?" when unreadable).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
