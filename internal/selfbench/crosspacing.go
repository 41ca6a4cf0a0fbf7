package selfbench

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/stack"
)

// Pacing plays the mock and the naive server, each in a child process, from one minimal client
// (crossPacing), then runs the mock's self-test as `streambench mock --self-test` does.
func Pacing(ctx context.Context, o Options) (*Report, error) {
	streams := cmp.Or(o.Streams, 2000)
	tps := cmp.Or(o.TokensPerSecond, 20)
	duration := cmp.Or(o.Duration, 10*time.Second)
	rep := &Report{
		Name:    fmt.Sprintf("pacing: the mock at %d streams × %g tokens/s", streams, tps),
		Command: fmt.Sprintf("streambench bench pacing --streams %d --tokens-per-second %g --duration %s", streams, tps, duration),
		Method: crossPacingMethod + "; then " +
			"self-test: mockprovider.SelfTest (as `streambench mock --self-test`, each stream --duration long): streams start over 1 s, one HTTP/1.1 connection each, GOMAXPROCS two above the CPUs; " +
			"pacing error = actual − scheduled emission of every frame, recorded by the mock, once every stream plays (from one token interval after the last start; the ramp's frames reported apart); CPU is the whole process (mock and client)",
	}
	if err := crossPacing(ctx, o, rep); err != nil {
		return nil, err
	}
	res, err := mockprovider.SelfTest(ctx, mockprovider.SelfTestOptions{
		Streams: streams, TokensPerSecond: tps, Duration: duration, Ramp: time.Second, Seed: 1,
	})
	if err != nil {
		return nil, err
	}
	h := res.PacingError
	rep.add("self-test: streams completed", float64(res.Completed), "streams")
	rep.add("self-test: tokens", float64(res.Tokens), "tokens")
	rep.add("self-test: pacing error p50", quantileMs(h, 50, 0), "ms")
	rep.withinMs("self-test: pacing error p99", quantileMs(h, 99, 0))
	rep.add("self-test: pacing error p99.9", quantileMs(h, 99.9, 0), "ms")
	rep.add("self-test: pacing error max", quantileMs(h, 100, 0), "ms")
	if r := res.PacingErrorWithRamp; r != nil {
		rep.addP50P99("self-test: with the ramp: pacing error", r)
		rep.add("self-test: with the ramp: pacing error max", quantileMs(r, 100, 0), "ms")
	}
	rep.add("self-test: CPU per token", float64(res.CPUPerToken.Nanoseconds())/1000, "µs")
	if res.Failed > 0 {
		rep.fail("%d of %d streams failed; first: %s", res.Failed, res.Streams, res.FirstFailure)
	}
	return rep, nil
}

// The cross-process pacing run's streams, and each one's read buffer (its longest frame).
const (
	crossTokens     = 100
	crossTTFT       = 100 * time.Millisecond
	crossRamp       = time.Second
	crossReadBuffer = 8192
	crossScenario   = "pacing"
)

var crossPacingMethod = "cross-process: `streambench mock` and the naive reference server (bench naive-server: one goroutine per stream, time.Sleep per token, " +
	"HTTP/1.1, chunks framed as cheaply as the mock's, default GOMAXPROCS) each in a child process, both up for the whole measurement, played in turn by the same minimal client in this process: " +
	fmt.Sprintf("an unmeasured %s warm-up round against each, then rounds %s, each server's rounds pooled; ", crossWarmUp, crossOrderNames()) +
	"--streams streams (2,000) of 100 tokens per round, TTFT 100 ms, then one token per 1/--tokens-per-second (50 ms), starts spread over 1 s, one HTTP/1.1 connection each; " +
	"every read timestamped: TTFT error = first content chunk − (request written + TTFT), gap error = |gap − ITL|, end of stream late by = data: [DONE] − its scheduled time; " +
	"server CPU = its /proc/PID/stat user+system from before the first stream to after the last, per token received; RSS = its VmHWM"

// serverPacing is what the client measured of one server, and what the server process cost.
type serverPacing struct {
	name            string
	streams, failed int
	firstFailure    string
	tokens          int64
	*crossHistograms
	serverCPU, clientCPU time.Duration
	serverPeakRSSKiB     int64
}

// crossOrder is the order the mock (0) and the naive server (1) are played in, reversed for the
// second round so neither meets the machine's drift alone (docs/BENCHMARKS.md, "Why the constants").
var crossOrder = []int{0, 1, 1, 0}

// crossWarmUp is a server's unmeasured first round: meeting 2,000 streams first is not pacing.
const crossWarmUp = crossRamp + crossTTFT + 500*time.Millisecond

// warmCross plays crossWarmUp's round against child and lets it wind down; only ctx's end is an error.
func warmCross(ctx context.Context, child *stack.Child, streams int, itl time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, crossWarmUp)
	defer cancel()
	_, _ = playCross(wctx, "warm-up", child, streams, itl)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(itl + 200*time.Millisecond): // the naive server notices at its next token
		return nil
	}
}

func crossOrderNames() string {
	names := make([]string, len(crossOrder))
	for i, server := range crossOrder {
		names[i] = [...]string{"mock", "naive"}[server]
	}
	return strings.Join(names, ", ")
}

func (p *serverPacing) pool(q *serverPacing) {
	p.streams += q.streams
	p.failed += q.failed
	if p.firstFailure == "" {
		p.firstFailure = q.firstFailure
	}
	p.tokens += q.tokens
	p.merge(q.crossHistograms)
	p.serverCPU += q.serverCPU
	p.clientCPU += q.clientCPU
	p.serverPeakRSSKiB = max(p.serverPeakRSSKiB, q.serverPeakRSSKiB)
}

func (p *serverPacing) cpuPerToken() float64 { return perFrame(p.serverCPU, p.tokens) }

// crossPacing plays the same streams against the mock and the naive server, each in a child
// process, from a minimal client in this process, and adds both servers' figures and ratios.
func crossPacing(ctx context.Context, o Options, rep *Report) error {
	streams := cmp.Or(o.Streams, 2000)
	itl := time.Duration(float64(time.Second) / cmp.Or(o.TokensPerSecond, 20))
	yaml := pacedScenario(crossScenario, "one answer turn paced at a constant rate, for bench pacing's cross-process run", crossTTFT, itl, fmt.Sprintf("{tokens: %d}", crossTokens))
	dir, _, err := writeScenarioDir(map[string]string{crossScenario: yaml})
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	mockStack, err := stack.StartChildren(stack.Options{TimeScale: 1, ScenarioDir: dir, MockOnly: true, Pprof: o.ProfileDir != ""})
	if err != nil {
		return err
	}
	defer mockStack.Stop()
	mock := mockStack.Mock
	naive, err := startBenchChild("naive server", naiveServerMode, "--ttft", crossTTFT.String(), "--itl", itl.String(), "--tokens", strconv.Itoa(crossTokens),
		fmt.Sprintf("--pprof=%t", o.ProfileDir != ""))
	if err != nil {
		return err
	}
	defer naive.Stop()
	servers := []struct {
		name, profile string
		child         *stack.Child
		profileURL    string
		played        *serverPacing
	}{
		{name: "mock", profile: "mock-cpu.pprof", child: mock, profileURL: mock.PprofURL()},
		{name: "naive", profile: "naive-cpu.pprof", child: naive, profileURL: naive.URL()},
	}
	for _, sv := range servers {
		if err := warmCross(ctx, sv.child, streams, itl); err != nil {
			return fmt.Errorf("%s: warm-up: %w", sv.name, err)
		}
	}
	rounds := make([]string, 0, len(crossOrder))
	for _, i := range crossOrder {
		sv := &servers[i]
		var profile func() error
		if o.ProfileDir != "" && sv.played == nil {
			profile = startProfile(ctx, sv.profileURL, filepath.Join(o.ProfileDir, sv.profile), crossRamp+crossTTFT+crossTokens*itl)
		}
		p, err := playCross(ctx, sv.name, sv.child, streams, itl)
		if profile != nil {
			if perr := profile(); perr != nil && err == nil {
				err = fmt.Errorf("%s CPU profile: %w", sv.name, perr)
			}
		}
		if err != nil {
			return err
		}
		ttft, gap := quantileMs(p.ttftError, 99, 0), quantileMs(p.gapError, 99, 0)
		rounds = append(rounds, fmt.Sprintf("%s %.2f / %.2f ms", sv.name, ttft, gap))
		if sv.played == nil {
			sv.played = p
		} else {
			sv.played.pool(p)
		}
	}
	mockStack.Stop()
	naive.Stop()
	m, n := servers[0].played, servers[1].played

	for _, p := range []*serverPacing{m, n} {
		rep.add(p.name+": TTFT error p99", quantileMs(p.ttftError, 99, 0), "ms")
		rep.add(p.name+": gap error p99", quantileMs(p.gapError, 99, 0), "ms")
		if end := quantileMs(p.endLate, 50, 0); p == m {
			rep.addTarget(p.name+": end of stream late by p50", end, "ms", "≤ 10 ms", end <= 10)
		} else {
			rep.add(p.name+": end of stream late by p50", end, "ms")
		}
		rep.add(p.name+": end of stream late by p99", quantileMs(p.endLate, 99, 0), "ms")
		rep.add(p.name+": server CPU per token", p.cpuPerToken(), "µs")
		rep.add(p.name+": server peak RSS", float64(p.serverPeakRSSKiB)/1024, "MiB")
		rep.add(p.name+": client CPU per token", perFrame(p.clientCPU, max(p.tokens, 1)), "µs")
		if p.failed > 0 {
			rep.fail("%s: %d of %d streams failed; first: %s", p.name, p.failed, p.streams, p.firstFailure)
		}
	}
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	cpu := ratio(m.cpuPerToken(), n.cpuPerToken())
	gap := ratio(quantileMs(m.gapError, 99, 0), quantileMs(n.gapError, 99, 0))
	ttft := ratio(quantileMs(m.ttftError, 99, 0), quantileMs(n.ttftError, 99, 0))
	rep.pairYardsticks(m.name+": ", n.name+": ")
	rep.addTarget("mock ÷ naive: server CPU per token", cpu, "×", "≤ 1.0×", cpu <= 1 && cpu > 0)
	rep.against("naive: server CPU per token", n.cpuPerToken(), "µs")
	rep.addTarget("mock ÷ naive: gap error p99", gap, "×", "≤ 1.0×", gap <= 1)
	rep.against("naive: gap error p99", quantileMs(n.gapError, 99, 0), "ms")
	rep.addTarget("mock ÷ naive: TTFT error p99", ttft, "×", "≤ 0.5×", ttft <= 0.5)
	rep.against("naive: TTFT error p99", quantileMs(n.ttftError, 99, 0), "ms")
	rep.note("TTFT / gap error p99 of each round, in the order played: %s", strings.Join(rounds, ", "))
	if o.ProfileDir != "" {
		rep.note("the servers' CPU profiles over the streams (mock-cpu.pprof, naive-cpu.pprof) are in %s; profiling costs each a few %% of CPU", o.ProfileDir)
	}
	return nil
}

// startProfile fetches a CPU profile of base over about length into file; wait waits for it.
func startProfile(ctx context.Context, base, file string, length time.Duration) func() error {
	done := make(chan error, 1)
	go func() { done <- fetchProfile(ctx, base, file, max(1, int(length/time.Second))) }()
	return func() error { return <-done }
}

// crossShards is how many locks the client's histograms are split over, by stream index.
const crossShards = 16

// crossHistograms are the client's histograms of a server, in µs: first content chunk −
// (request sent + TTFT); |gap − ITL| between content chunks; [DONE] − its scheduled time.
type crossHistograms struct {
	mu                           sync.Mutex
	ttftError, gapError, endLate *hdrhistogram.Histogram
	outOfRange                   int64
}

// merge adds q's values to c's and returns how many of q's were lost (out of range).
func (c *crossHistograms) merge(q *crossHistograms) int64 {
	return q.outOfRange + c.ttftError.Merge(q.ttftError) + c.gapError.Merge(q.gapError) + c.endLate.Merge(q.endLate)
}

func newCrossHistograms() *crossHistograms {
	h := func() *hdrhistogram.Histogram { return hdrhistogram.New(1, 60_000_000, 3) }
	return &crossHistograms{ttftError: h(), gapError: h(), endLate: h()}
}

func (c *crossHistograms) record(h *hdrhistogram.Histogram, micros int64) {
	c.mu.Lock()
	if h.RecordValue(max(micros, 0)) != nil {
		c.outOfRange++
	}
	c.mu.Unlock()
}

// playCross plays streams streams against child, starts spread uniformly at random over
// crossRamp, and measures the server's CPU from before the first to after the last.
func playCross(ctx context.Context, name string, child *stack.Child, streams int, itl time.Duration) (*serverPacing, error) {
	addr := strings.TrimPrefix(child.URL(), "http://")
	request := crossRequest(addr)
	shards := make([]*crossHistograms, crossShards)
	for i := range shards {
		shards[i] = newCrossHistograms()
	}
	cpuBefore, err := procCPU(child.PID())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	clientBefore := roleCPU(0)
	var (
		wg         sync.WaitGroup
		failed     atomic.Int64
		tokens     atomic.Int64
		failOnce   sync.Once
		firstError string
	)
	// Buffers allocated before the clock starts: grown during the ramp, the heap's collections
	// delayed the timestamps of whichever server played first more than the next one's.
	bufs := make([][]byte, streams)
	for i := range bufs {
		bufs[i] = make([]byte, 0, crossReadBuffer)
	}
	runtime.GC()
	rng := rand.New(rand.NewPCG(1, 0x9ace))
	start := time.Now()
	for i := range streams {
		offset := time.Duration(rng.Int64N(int64(crossRamp) + 1))
		buf := bufs[i]
		bufs[i] = nil
		wg.Go(func() {
			select {
			case <-time.After(time.Until(start.Add(offset))):
			case <-ctx.Done():
				return
			}
			n, err := crossStream(ctx, addr, request, itl, buf, shards[i%crossShards])
			tokens.Add(int64(n))
			if err != nil {
				failed.Add(1)
				failOnce.Do(func() { firstError = fmt.Sprintf("stream %d: %v", i, err) })
			}
		})
	}
	wg.Wait()
	p := &serverPacing{name: name, streams: streams, clientCPU: roleCPU(0) - clientBefore}
	cpuAfter, err := procCPU(child.PID())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: interrupted: %w", name, err)
	}
	p.serverCPU = cpuAfter - cpuBefore
	if p.serverPeakRSSKiB, err = procStatusKiB(child.PID(), "VmHWM"); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p.failed, p.firstFailure, p.tokens = int(failed.Load()), firstError, tokens.Load()
	p.crossHistograms = shards[0]
	lost := shards[0].outOfRange
	for _, s := range shards[1:] {
		lost += p.merge(s)
	}
	if lost > 0 {
		return nil, fmt.Errorf("%s: %d values beyond the histograms' 60 s range", name, lost)
	}
	return p, nil
}

// crossRequest is every stream's streamed chat completion of the pacing scenario (the naive server ignores it).
func crossRequest(addr string) []byte {
	body := `{"model":"pacing","stream":true,"messages":[{"role":"user","content":"[[streambench scenario=` + crossScenario + ` seed=1]]"}]}`
	return []byte(fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		mockprovider.PathOpenAI, addr, len(body), body))
}

// crossStream plays one stream on its own connection with as little client work as there can
// be, timing each frame by the read that completed it, and returns the content chunks read.
func crossStream(ctx context.Context, addr string, request []byte, itl time.Duration, buf []byte, h *crossHistograms) (int, error) {
	conn, done, err := dialTCP(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer done()
	sent := time.Now()
	if _, err := conn.Write(request); err != nil {
		return 0, fmt.Errorf("writing the request: %w", err)
	}
	var (
		tokens int
		last   time.Time
	)
	err = readFrames(conn, buf, nil, func(frame []byte, now time.Time) (bool, error) {
		switch {
		case isContentChunk(frame):
			if tokens == 0 {
				h.record(h.ttftError, now.Sub(sent.Add(crossTTFT)).Microseconds())
			} else {
				h.record(h.gapError, (now.Sub(last) - itl).Abs().Microseconds())
			}
			tokens++
			last = now
		case bytes.Contains(frame, []byte("data: [DONE]")):
			if tokens != crossTokens {
				return true, fmt.Errorf("[DONE] after %d content chunks, want %d", tokens, crossTokens)
			}
			h.record(h.endLate, now.Sub(sent.Add(crossTTFT+time.Duration(tokens-1)*itl)).Microseconds())
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return tokens, fmt.Errorf("after %d content chunks: %w", tokens, err)
	}
	return tokens, nil
}

// readFrames reads a 200 response off conn into buf (empty, its capacity the longest frame) and
// calls frame with each SSE frame a read completed (chunked framing never holds a blank line)
// and the time that read returned (adjusted by arrived when set), until frame is done or fails.
func readFrames(conn net.Conn, buf []byte, arrived func(time.Time) time.Time, frame func(f []byte, at time.Time) (done bool, err error)) error {
	const okStatus = "HTTP/1.1 200 "
	checked := false
	for {
		if len(buf) == cap(buf) {
			return fmt.Errorf("a frame longer than %d bytes", cap(buf))
		}
		n, err := conn.Read(buf[len(buf):cap(buf)])
		now := time.Now()
		if arrived != nil {
			now = arrived(now)
		}
		buf = buf[:len(buf)+n]
		if !checked && len(buf) >= len(okStatus) {
			if !bytes.HasPrefix(buf, []byte(okStatus)) {
				return fmt.Errorf("response %q", buf[:min(len(buf), 200)])
			}
			checked = true
		}
		rest := buf
		for end := bytes.Index(rest, []byte("\n\n")); end >= 0; end = bytes.Index(rest, []byte("\n\n")) {
			if done, ferr := frame(rest[:end], now); done || ferr != nil {
				return ferr
			}
			rest = rest[end+2:]
		}
		buf = buf[:copy(buf, rest)]
		if err != nil {
			return err
		}
	}
}

var contentDelta = []byte(`"delta":{"content":"`)

// isContentChunk reports whether frame's delta carries content (the role chunk's is empty).
func isContentChunk(frame []byte) bool {
	i := bytes.Index(frame, contentDelta)
	return i >= 0 && i+len(contentDelta) < len(frame) && frame[i+len(contentDelta)] != '"'
}

// NewNaiveServer is the mock's yardstick: the OpenAI streaming server a Go engineer writes in
// minutes (a goroutine per stream, time.Sleep before each token, Write and Flush per chunk),
// framed as cheaply as the mock: tokens content chunks, ttft then itl apart.
func NewNaiveServer(ttft, itl time.Duration, tokens int) (*http.Server, error) {
	if ttft < 0 || itl < 0 || tokens <= 0 {
		return nil, fmt.Errorf("naive server: TTFT %s and ITL %s must not be negative, tokens %d must be positive", ttft, itl, tokens)
	}
	var deltas []string // tokens about as long as the mock's
	for _, word := range strings.Fields("streaming tokens arrive one frame at a time") {
		deltas = append(deltas, `{"content":" `+word+`"}`)
	}
	var requests atomic.Uint64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		head := fmt.Appendf(nil, `data: {"id":"chatcmpl-naive%d","object":"chat.completion.chunk","created":%d,"model":"naive","choices":[{"index":0,"delta":`,
			requests.Add(1), time.Now().Unix())
		buf := make([]byte, 0, 256)
		send := func(delta, finish string) bool {
			buf = append(append(append(append(append(buf[:0], head...), delta...), `,"logprobs":null,"finish_reason":`...), finish...), "}]}\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return false
			}
			flusher.Flush()
			return r.Context().Err() == nil
		}
		if !send(`{"role":"assistant","content":""}`, "null") {
			return
		}
		time.Sleep(ttft)
		for i := range tokens {
			if i > 0 {
				time.Sleep(itl)
			}
			if !send(deltas[i%len(deltas)], "null") {
				return
			}
		}
		if !send("{}", `"stop"`) {
			return
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	return &http.Server{Handler: handler}, nil
}

// serveProfile has the server answer GET /debug/pprof/profile as the mock does; call it before Serve.
func serveProfile(srv *http.Server) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.Handle("/", srv.Handler)
	srv.Handler = mux
}
