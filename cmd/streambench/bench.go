package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/streambench/streambench/cmd/internal/console"
	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/internal/selfbench"
	"github.com/streambench/streambench/loadgen"
)

// runBench measures streambench's own costs and fidelity in the product binary.
func runBench(args []string) error {
	if len(args) > 0 && args[0] == benchRenderCommand {
		return benchRender(args[1:], os.Stdout)
	}
	if len(args) > 0 { // a hidden child process of a measurement (selfbench.RunChild)
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		ran, err := selfbench.RunChild(ctx, args, os.Stderr)
		stop()
		if ran {
			return err
		}
	}
	measurements, names := selfbench.Measurements(), selfbench.Names()
	fs := newFlagSet("bench", "bench ["+strings.Join(names, "|")+"|all] [flags]")
	var o selfbench.Options
	jsonFile := fs.String("json", "", "also write the figures to this JSON file (bench render FILE turns it into Markdown)")
	fs.IntVar(&o.Streams, "streams", 0, "concurrent streams (default: pacing 2000, scale 5000, fidelity 2000, abuse abort-storm 2000, abuse stalled-readers 1000 normal clients; floor and path 1000 and 2000, one run each)")
	fs.DurationVar(&o.Duration, "duration", 0, "pacing: each self-test stream's length (default 10s; the cross-process run plays 100 tokens per stream); fidelity: how long sessions start (default 30s); rate: the run's length (default 20s); abuse stalled-readers: each of its two runs' length (default 15s); abuse bad-input: how long requests are sent (default 30s); floor, path: each stream's length (default 10s)")
	fs.DurationVar(&o.Ramp, "ramp", 0, "scale: open the streams over this period (default 20s)")
	fs.DurationVar(&o.StreamLength, "stream-length", 0, "scale: how long each stream lasts (default 30s); fidelity: roughly how long each session lasts (default 15s: 2,000 open streams at 133 new sessions/s)")
	fs.DurationVar(&o.InterToken, "itl", 0, "scale: the scripted inter-token latency (default 500ms: 2 tokens/s per stream)")
	fs.DurationVar(&o.TTFT, "ttft", 0, "fidelity: the scripted constant time to first token (default 200ms)")
	fs.Float64Var(&o.Rate, "rate", 0, "rate: target sessions per second (default 200); abuse bad-input: requests per second (default 500)")
	fs.Float64Var(&o.TokensPerSecond, "tokens-per-second", 0, "pacing, floor, path: tokens (events) per second per stream (default 20)")
	fs.IntVar(&o.Sessions, "sessions", 0, "abuse abort-storm: sessions in all, each aborted at a random point (default 10000)")
	fs.IntVar(&o.Stalled, "stalled", 0, "abuse stalled-readers: clients that stop reading mid-stream (default 1000; --streams normal ones, default 1000)")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", 0, "abuse stalled-readers: the runtime's client idle timeout, after which it drops a stalled client (default 30s)")
	fs.StringSliceVar(&o.Parts, "part", nil, "abuse: run only these parts ("+strings.Join(selfbench.AbusePartNames(), ", ")+"; default all)")
	fs.StringSliceVar(&o.Wires, "wire", nil, "fidelity: measure TTFT − scripted TTFT with the generator speaking these provider wires ("+strings.Join(selfbench.FidelityWires(), ", ")+"; comma-separated) straight to the mock, instead of the sim-chat paths")
	fs.BoolVar(&o.HTTP2, "http2", false, "scale, fidelity: the generator uses h2c instead of one HTTP/1.1 connection per stream")
	fs.BoolVar(&o.ProviderHTTP1, "provider-http1", false, "scale, fidelity, rate, path: the runtime talks HTTP/1.1 to the mock instead of h2c (floor, path: the floor relay to its server too)")
	fs.BoolVar(&o.DefaultMix, "default-mix", false, "scale: play the default mix (every profile, dialect and scenario; scale-stream added at 60% of each profile's sessions) among the long streams, users playing sessions back to back for --stream-length after the ramp; reports how many sessions of each newer scenario family ran")
	fs.IntVar(&o.Shards, "shards", 0, "scale: split the load over N generator processes (streambench load --shard I/N), each against a runtime of its own, one mock; the shards' results merged (default 1: the generator in this process)")
	fs.BoolVar(&o.KeepDir, "keep", false, "keep the generated scenario directory (its path is printed)")
	fs.StringVar(&o.ProfileDir, "profile", "", "scale: write the generator's heap and goroutine profiles to this directory once every stream is open; pacing: the mock's and the naive server's CPU profiles; path: CPU profiles of mock, runtime and generator over 5 s")
	quiet := fs.Bool("quiet", false, "no progress output")
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: streambench bench [%s|all] [flags]\n\nMeasurements:\n", strings.Join(names, "|"))
		for _, m := range measurements {
			fmt.Fprintf(os.Stderr, "  %-9s %s\n", m.Name, m.Summary)
		}
		fmt.Fprintf(os.Stderr, "  %-9s every measurement above, in this order\n\n", "all")
		fmt.Fprintf(os.Stderr, "Rendering (measures nothing):\n  streambench bench %s FILE [FILE...] [--out docs/BENCHMARKS.md]\n            each --json figures file as Markdown (machine, date, commit; per bench: figure, value, target, met, yardstick)\n\nFlags:\n", benchRenderCommand)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer hrtimer.SpareProcs()()
	if fs.NArg() != 1 {
		return usageError("name one measurement: %s or all (got %q)", strings.Join(names, ", "), fs.Args())
	}
	// Negative sizes are refused; zero means the measurement's default.
	for _, name := range []string{"streams", "duration", "ramp", "stream-length", "itl", "ttft", "rate", "tokens-per-second", "sessions", "stalled", "idle-timeout", "shards"} {
		if v := fs.Lookup(name).Value.String(); strings.HasPrefix(v, "-") {
			return usageError("--%s %s: want a positive value (or leave it out for the default)", name, v)
		}
	}
	todo, err := selfbench.Select(fs.Arg(0), o)
	if err != nil {
		return usageError("%v", err)
	}
	if !*quiet {
		o.Progress = func() (func(loadgen.Progress), func()) {
			v := console.NewProgress(os.Stderr)
			return v.Update, v.Close
		}
	}
	selfbench.RaiseOpenFileLimit()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reports, failed, err := selfbench.RunAll(ctx, todo, o, os.Stdout, func(m selfbench.Measurement) {
		if !*quiet {
			fmt.Fprintf(os.Stderr, "bench %s: %s\n", m.Name, m.Summary)
		}
	})
	if err != nil {
		return err
	}
	if *jsonFile != "" {
		if err := selfbench.WriteFile(*jsonFile, reports); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if len(failed) > 0 {
		return &exitError{code: exitFailure, err: fmt.Errorf("not clean: %s", strings.Join(failed, ", "))}
	}
	return nil
}
