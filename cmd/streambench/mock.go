package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// runMock serves the scripted mock provider until interrupted, or with --self-test measures it.
func runMock(args []string) error {
	fs := newFlagSet("mock", "mock [--addr HOST:PORT] [--scenarios DIR] [--scenario FILE]... [--time-scale F] [--max-concurrent N --queue N --slowdown F] | --self-test [--streams N --tokens-per-second F --duration D]")
	addr := fs.String("addr", "127.0.0.1:8081", "address to listen on (HTTP/1.1 and cleartext HTTP/2)")
	dir := fs.String("scenarios", "", "load scenarios from this directory instead of the embedded library")
	files := fs.StringSlice("scenario", nil, "also serve the scenarios of these YAML `FILE`s (repeatable or FILE,FILE): the files load --scenario plays")
	timeScale := fs.Float64("time-scale", 1, "multiply every scripted delay (1 = as scripted, 0 = no delays)")
	maxConcurrent := fs.Int("max-concurrent", 0, "capacity model: streams played at once (0 = unlimited)")
	queue := fs.Int("queue", 0, "capacity model: requests that may wait for a slot; beyond that 429")
	queueTimeout := fs.Duration("queue-timeout", 0, "capacity model: longest wait in the queue before 429 (0 = no limit)")
	slowdown := fs.Float64("slowdown", 0, "capacity model: stretch delays by (1 + F × active streams)")
	grace := fs.Duration("grace", 10*time.Second, "on Ctrl-C, how long in-flight streams may finish before they are cut")
	verbose := fs.Bool("verbose", false, "log every refused request")
	selfTest := fs.Bool("self-test", false, "play --streams concurrent streams against an in-process mock and print pacing error and CPU per token")
	streams := fs.Int("streams", 2000, "self-test: concurrent streams")
	tokensPerSecond := fs.Float64("tokens-per-second", 20, "self-test: tokens per second per stream")
	duration := fs.Duration("duration", 10*time.Second, "self-test: how long each stream plays")
	ramp := fs.Duration("ramp", time.Second, "self-test: spread stream starts over this period")
	conns := fs.Int("conns", 0, "self-test: multiplex the streams over N h2c connections (0 = one HTTP/1.1 connection per stream)")
	wire := fs.String("wire", "openai", "self-test: provider wire (openai or anthropic)")
	pprofAddr := addPprofFlag(fs)
	faultName := fs.String("fault", "", "break the wire contract in every stream (and in non-streaming answers where it means something there), to prove a client dialect's rule fails; one of:\n  "+strings.Join(mockprovider.Faults(), "\n  "))
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if *selfTest {
		// Spare Ps for the self-test only, whose client shares the process; the serving mock
		// gains nothing by them (docs/BENCHMARKS.md).
		defer hrtimer.SpareProcs()()
		if *streams <= 0 || *tokensPerSecond <= 0 || *duration <= 0 || *conns < 0 || *ramp < 0 {
			return usageError("--streams, --tokens-per-second and --duration must be positive, --conns and --ramp not negative")
		}
		o := mockprovider.SelfTestOptions{Streams: *streams, TokensPerSecond: *tokensPerSecond, Duration: *duration,
			Ramp: max(*ramp, time.Nanosecond), Connections: *conns, Wire: *wire}
		fmt.Fprintf(os.Stderr, "self-test: %s\n", o)
		res, err := mockprovider.SelfTest(ctx, o)
		if err != nil {
			return err
		}
		fmt.Print(res)
		if res.Failed > 0 {
			return &exitError{code: exitFailure, err: fmt.Errorf("%d of %d streams failed", res.Failed, res.Streams)}
		}
		return nil
	}

	fault, err := mockprovider.ParseFault(*faultName)
	if err != nil {
		return usageError("--fault: %v", err)
	}
	lib, err := scenarios.Open(*dir)
	if err != nil {
		return usageError("--scenarios %s: %v", *dir, err)
	}
	if len(*files) > 0 {
		if lib, _, err = lib.WithFiles(*files); err != nil {
			return usageError("--scenario: %v", err)
		}
	}
	logger := newLogger(*verbose, slog.LevelInfo, slog.LevelDebug)
	srv, err := mockprovider.New(mockprovider.Options{
		Library:   lib,
		TimeScale: *timeScale,
		Capacity: mockprovider.Capacity{MaxConcurrent: *maxConcurrent, QueueSize: *queue,
			QueueTimeout: *queueTimeout, SlowdownPerStream: *slowdown},
		Logger: logger,
		Fault:  fault,
	})
	if err != nil {
		return usageError("%v", err)
	}
	return serve(ctx, stop, srv, *addr, "http", *pprofAddr, *grace, func() {
		fmt.Fprintln(os.Stderr, mockBanner(len(lib.Names())))
	})
}

// mockBanner is what the mock says it serves: its scenarios and every route of its wires.
func mockBanner(scenarios int) string {
	return fmt.Sprintf("%d scenarios; POST %s, POST %s, POST %s, GET %s, GET %s, GET %s", scenarios,
		mockprovider.PathOpenAI, mockprovider.PathAnthropic, mockprovider.PathResponses,
		mockprovider.PathModels, mockprovider.PathSessions, mockprovider.PathMetrics)
}
