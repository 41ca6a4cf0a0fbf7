package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/stack"
)

// fidelityWords is the answer length of the fidelity scenario: a short answer.
const fidelityWords = 20

// benchFidelity measures the generator's time-to-first-chunk error at ~N open streams two ways:
// against a paced sim-chat server in a child process (the harness's own error: nothing else
// sits between the first byte and the generator's clock), and through the runtime and the mock
// in child processes (the harness plus what the runtime and the mock add). The mock's session
// records give its own part (first byte − request arrival − TTFT).
func benchFidelity(ctx context.Context, f *benchFlags) (*benchReport, error) {
	streams := orDefault(f.streams, 2000)
	ttft := orDefault(f.ttft, 200*time.Millisecond)
	length := max(orDefault(f.streamLength, 15*time.Second), ttft+time.Duration(fidelityWords)*time.Millisecond)
	duration := orDefault(f.duration, 30*time.Second)
	itl := (length - ttft) / fidelityWords
	rate := float64(streams) / length.Seconds()
	// Sessions of the first second (first dials, empty pools, stacks growing) are checked but not
	// measured: the figure is the harness's error with its streams open, not its cold start.
	warmup := min(time.Second, duration/5)
	rep := &benchReport{
		Name: fmt.Sprintf("fidelity: TTFC − scripted TTFT at %d open streams", streams),
		Command: fmt.Sprintf("streambench bench fidelity --streams %d --ttft %s --stream-length %s --duration %s%s",
			streams, ttft, length, duration, f.transportFlags()),
		Method: fmt.Sprintf("constant TTFT %s, %d-word answer %s apart (sessions ~%s), open loop at %.0f sessions/s for %s (~%d open streams, the first %s a warm-up), "+
			"sim-chat opted in. (1) paced: the generator against a minimal sim-chat server in a child process that sends the first chunk "+
			"exactly TTFT after each request arrives — TTFC − TTFT is the harness's own error. (2) runtime: generator → runtime → mock, "+
			"each its own process (runtime to mock over "+providerProtocol(f)+") — the difference to (1) is what the runtime and the mock add (the mock's records show how fast it started each stream). "+
			"TTFC is measured from the intended start (HdrHistogram, 3 digits: ~%dµs buckets at this TTFT).",
			ttft, fidelityWords, itl, length, rate, duration, streams, warmup, bucketWidthMicros(ttft)),
	}
	text := literalText(fidelityWords)
	yaml := fmt.Sprintf("name: fidelity\ndescription: constant TTFT and a short literal answer, for the harness's TTFC error\n"+
		"timing:\n  ttft: %s\n  itl: %s\n  tokensPerFrame: 1\nturns:\n  - text: %q\n", ttft, itl, text)
	dir, lib, err := writeScenarioDir(map[string]string{"fidelity": yaml})
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	textFile := filepath.Join(dir, "answer.txt")
	if err := os.WriteFile(textFile, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("answer text: %w", err)
	}
	mix, err := chatMix("bench-fidelity", "fidelity", "openai-none")
	if err != nil {
		return nil, err
	}
	base := loadgen.Config{
		Mix: mix, MixName: "bench-fidelity", Library: lib, Rate: rate, Duration: duration, Warmup: warmup,
		MaxInflight: 4 * streams, HTTP2: f.http2, Grace: length + 30*time.Second,
	}

	// (1) The paced server: the harness's own error.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	paced, err := stack.StartChild(exe, []string{"bench", pacedServerCommand, "--ttft", ttft.String(), "--itl", itl.String(), "--text-file", textFile})
	if err != nil {
		return nil, fmt.Errorf("start paced server: %w", err)
	}
	cfg := base
	cfg.Target, cfg.RunID, cfg.NoLeakCheck, cfg.RuntimeMetricsURL = paced.URL(), "bench-fidelity-paced", true, "-"
	pacedRun, pacedPeak, err := runWithPeak(ctx, cfg, f.quiet)
	paced.Stop()
	if err != nil {
		return nil, fmt.Errorf("paced run: %w", err)
	}
	pacedTTFC := mergedMetric(pacedRun, measure.FirstChunk)
	pacedP99 := quantileMs(pacedTTFC, 99, ttft)
	rep.add("paced: peak open streams", float64(pacedPeak), "streams")
	rep.add("paced: TTFC − TTFT p50", quantileMs(pacedTTFC, 50, ttft), "ms")
	rep.addTarget("paced: TTFC − TTFT p99 (harness's own error)", pacedP99, "ms", "≤ 1 ms", pacedP99 <= 1)
	rep.add("paced: TTFC − TTFT max", quantileMs(pacedTTFC, 100, ttft), "ms")
	rep.add("paced: late starts (> 1 ms behind schedule)", float64(pacedRun.Summary.Counters.LateStarts), "sessions")
	// What the error is made of: the generator's own scheduling lag (counted in TTFC, which runs
	// from the intended start), and the time to response headers, which the paced server sends
	// at once (loopback plus both processes' scheduling).
	lag := mergedMetric(pacedRun, measure.StartLag)
	headers := mergedMetric(pacedRun, measure.Headers)
	rep.add("paced: start lag p50", quantileMs(lag, 50, 0), "ms")
	rep.add("paced: start lag p99", quantileMs(lag, 99, 0), "ms")
	rep.add("paced: response headers p50", quantileMs(headers, 50, 0), "ms")
	rep.add("paced: response headers p99", quantileMs(headers, 99, 0), "ms")
	runFailures(rep, pacedRun)

	// (2) Through the runtime and the mock.
	st, err := startBenchStack(dir, f.providerHTTP1)
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	cfg = base
	cfg.Target, cfg.MockURL, cfg.RunID = st.RuntimeURL, st.MockURL, "bench-fidelity-runtime"
	rtRun, rtPeak, err := runWithPeak(ctx, cfg, f.quiet)
	if err != nil {
		return nil, fmt.Errorf("runtime run: %w", err)
	}
	rtTTFC := mergedMetric(rtRun, measure.FirstChunk)
	rtP99 := quantileMs(rtTTFC, 99, ttft)
	rep.add("runtime: peak open streams", float64(rtPeak), "streams")
	rep.add("runtime: TTFC − TTFT p50", quantileMs(rtTTFC, 50, ttft), "ms")
	rep.add("runtime: TTFC − TTFT p99", rtP99, "ms")
	rep.add("runtime: TTFC − TTFT max", quantileMs(rtTTFC, 100, ttft), "ms")
	records, err := mockSessions(ctx, st.MockURL)
	if err != nil {
		return nil, err
	}
	// The mock records when it started each stream (headers and the wire's opening frame), not
	// when it sent the first token, so this is its start latency under load, not its TTFT error.
	mockStart := streamStartLatency(records, "fidelity")
	rep.add("mock: stream start − request arrival p50", quantileMs(mockStart, 50, 0), "ms")
	rep.add("mock: stream start − request arrival p99", quantileMs(mockStart, 99, 0), "ms")
	added := rtP99 - pacedP99
	rep.add("runtime path p99 − paced p99 (what runtime + mock add)", added, "ms")
	rep.addTarget("harness error p99 beyond what the runtime adds", pacedP99, "ms", "≤ 1 ms", pacedP99 <= 1)
	runFailures(rep, rtRun)
	if mockStart.TotalCount() == 0 {
		rep.fail("the mock recorded no fidelity session with a first byte")
	}
	return rep, nil
}

// bucketWidthMicros is the width of the 3-significant-digit HdrHistogram bucket holding d.
func bucketWidthMicros(d time.Duration) int64 {
	h := measure.NewHistogram()
	if h.RecordValue(d.Microseconds()) != nil {
		return 0
	}
	return h.Max() - h.Min() + 1
}

// runWithPeak runs cfg with progress output and returns the run and its peak open streams.
func runWithPeak(ctx context.Context, cfg loadgen.Config, quiet bool) (*measure.Run, int64, error) {
	var prog *progressView
	if !quiet {
		prog = newProgressView(os.Stderr)
	}
	var peak int64 // written and read only on the run's collector goroutine, then after Run
	cfg.OnProgress = func(p loadgen.Progress) {
		peak = max(peak, p.Active)
		if prog != nil {
			prog.update(p)
		}
	}
	run, err := loadgen.Run(ctx, cfg)
	if prog != nil {
		prog.close()
	}
	return run, peak, err
}

// benchRate runs an open loop at --rate through the runtime and the mock, and compares the
// achieved rate with the target: at the generator (sessions started, late and dropped starts,
// start lag) and at the mock (request arrivals over their span), which sees what the schedule
// actually delivered to the system under test.
func benchRate(ctx context.Context, f *benchFlags) (*benchReport, error) {
	rate := orDefault(f.rate, 200)
	duration := orDefault(f.duration, 20*time.Second)
	rep := &benchReport{
		Name:    fmt.Sprintf("rate: open loop at %g sessions/s for %s", rate, duration),
		Command: fmt.Sprintf("streambench bench rate --rate %g --duration %s%s", rate, duration, f.transportFlags()),
		Method: "constant arrivals through runtime and mock (child processes), a 0.6 s answer per session; " +
			"achieved at the generator = sessions started / duration; achieved at the mock = (requests − 1) / (last arrival − first arrival)",
	}
	text := literalText(10)
	yaml := fmt.Sprintf("name: rate-answer\ndescription: a short answer for the open-loop rate check\n"+
		"timing:\n  ttft: 100ms\n  itl: 50ms\n  tokensPerFrame: 1\nturns:\n  - text: %q\n", text)
	dir, lib, err := writeScenarioDir(map[string]string{"rate-answer": yaml})
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	mix, err := chatMix("bench-rate", "rate-answer", "openai-none")
	if err != nil {
		return nil, err
	}
	st, err := startBenchStack(dir, f.providerHTTP1)
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	run, _, err := runWithPeak(ctx, loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: mix, MixName: "bench-rate", Library: lib,
		RunID: "bench-rate", Rate: rate, Duration: duration,
	}, f.quiet)
	if err != nil {
		return nil, err
	}
	c := run.Summary.Counters
	atGenerator := float64(c.SessionsStarted) / duration.Seconds()
	records, err := mockSessions(ctx, st.MockURL)
	if err != nil {
		return nil, err
	}
	var arrivals []time.Time
	for _, r := range records {
		if r.Scenario == "rate-answer" && r.Turn == 0 {
			arrivals = append(arrivals, r.Start)
		}
	}
	slices.SortFunc(arrivals, time.Time.Compare)
	within := func(v float64) bool { return v >= rate*0.99 && v <= rate*1.01 }
	rep.addTarget("achieved at the generator", atGenerator, "sessions/s", fmt.Sprintf("%g ± 1%%", rate), within(atGenerator))
	if len(arrivals) > 1 {
		span := arrivals[len(arrivals)-1].Sub(arrivals[0])
		atMock := float64(len(arrivals)-1) / span.Seconds()
		rep.addTarget("achieved at the mock", atMock, "sessions/s", fmt.Sprintf("%g ± 1%%", rate), within(atMock))
		rep.add("deviation at the mock", 100*(atMock-rate)/rate, "%")
		rep.add("requests at the mock", float64(len(arrivals)), "requests")
	} else {
		rep.fail("the mock recorded %d requests of the rate scenario", len(arrivals))
	}
	lag := mergedMetric(run, measure.StartLag)
	rep.add("sessions started", float64(c.SessionsStarted), "sessions")
	rep.add("late starts (> 1 ms behind)", float64(c.LateStarts), "sessions")
	rep.add("dropped starts", float64(c.DroppedStarts), "sessions")
	rep.add("start lag p99", quantileMs(lag, 99, 0), "ms")
	rep.add("start lag max", quantileMs(lag, 100, 0), "ms")
	runFailures(rep, run)
	return rep, nil
}

// pacedServerCommand is the hidden `bench` mode the fidelity measurement starts as a child
// process: a minimal opted-in sim-chat server whose first chunk leaves exactly TTFT after the
// request arrived.
const pacedServerCommand = "paced-server"

// runPacedServer serves one literal answer as an opted-in sim-chat stream to every request:
// response headers at once, the first word TTFT after arrival, the others ITL apart, then the
// final envelope and [DONE]. It prints "listening on http://ADDR" and serves until interrupted.
func runPacedServer(args []string) error {
	fs := newFlagSet("bench "+pacedServerCommand, "bench "+pacedServerCommand+" --text-file FILE [--ttft D] [--itl D] [--addr HOST:PORT]")
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	ttft := fs.Duration("ttft", 200*time.Millisecond, "delay from request arrival to the first chunk")
	itl := fs.Duration("itl", 100*time.Millisecond, "delay between chunks")
	textFile := fs.String("text-file", "", "the answer text (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *textFile == "" || *ttft < 0 || *itl < 0 {
		return usageError("--text-file is required; --ttft and --itl must not be negative")
	}
	text, err := os.ReadFile(*textFile)
	if err != nil {
		return usageError("--text-file: %v", err)
	}
	frames, tail, err := pacedFrames(string(text))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError("--addr %s: %v", *addr, err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	defer spareProcs()()
	srv := &http.Server{Handler: pacedHandler(hrtimer.New(), frames, tail, *ttft, *itl)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}

// pacedFrames encodes text as one chunk frame per word (the space leading the next word), and
// the final envelope with [DONE] as the tail.
func pacedFrames(text string) (frames [][]byte, tail []byte, err error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil, usageError("--text-file: empty answer")
	}
	frame := func(v any) ([]byte, error) {
		b, err := json.Marshal(v)
		return append(append([]byte("data: "), b...), '\n', '\n'), err
	}
	rest := text
	for rest != "" {
		piece := rest
		if i := strings.IndexByte(rest[1:], ' '); i >= 0 {
			piece = rest[:i+1]
		}
		rest = rest[len(piece):]
		b, err := frame(map[string]string{"blockId": "b1", "chunk": piece})
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, b)
	}
	tail, err = frame(map[string]any{"event": "final", "data": map[string]any{"success": true, "output": map[string]string{"content": text}}})
	return frames, append(tail, "data: \"[DONE]\"\n\n"...), err
}

func pacedHandler(clock *hrtimer.Clock, frames [][]byte, tail []byte, ttft, itl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		h.Set("X-Accel-Buffering", "no")
		h.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		waiter := clock.NewWaiter()
		for i, b := range frames {
			if !waiter.Until(r.Context().Done(), arrived.Add(ttft+time.Duration(i)*itl)) {
				return
			}
			if _, err := w.Write(b); err != nil || rc.Flush() != nil {
				return
			}
		}
		_, _ = w.Write(tail)
	})
}

// streamStartLatency is the mock's first flush − request arrival over one scenario's records,
// in microseconds: how long the mock took to start answering (its FirstByte is the response
// headers with the wire's opening frame, sent before the scripted TTFT).
func streamStartLatency(records []mockprovider.SessionRecord, scenario string) *hdrhistogram.Histogram {
	h := measure.NewHistogram()
	for _, r := range records {
		if r.Scenario != scenario || r.FirstByte.IsZero() {
			continue
		}
		_ = h.RecordValue(max(0, r.FirstByte.Sub(r.Start).Microseconds()))
	}
	return h
}
