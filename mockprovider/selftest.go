package mockprovider

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/scenarios"
)

// SelfTestOptions configure SelfTest.
type SelfTestOptions struct {
	Streams         int           // how many streams play at once (default 2,000).
	TokensPerSecond float64       // each stream's token rate (default 20).
	Duration        time.Duration // how long each stream plays (default 10 s).
	Ramp            time.Duration // spreads the stream starts uniformly, as independent clients (default 1 s).
	// Connections 0 (the default) plays every stream on its own HTTP/1.1 connection with a
	// minimal client that only drains the bytes (net/http's client costs more CPU per token
	// than the mock, on the same cores); N > 0 multiplexes the streams over N h2c connections
	// through net/http's client, as a runtime reaches its provider.
	Connections int
	Wire        string // "openai" (default) or "anthropic".
	Seed        uint64 // makes the ramp reproducible.
}

// SelfTestResult is what SelfTest measured.
type SelfTestResult struct {
	Streams             int
	Completed           int
	Failed              int    // counts streams that did not complete (HTTP errors, broken connections).
	FirstFailure        string // describes one failure, for the report.
	Tokens              int64
	Frames              int64
	Elapsed             time.Duration
	PacingError         *hdrhistogram.Histogram // actual − scheduled per frame (µs) once every stream plays.
	PacingErrorWithRamp *hdrhistogram.Histogram // the same over the whole run, the ramp included.
	CPU                 time.Duration           // user+system CPU of the process (server and client).
	CPUPerToken         time.Duration
	// LoadAverage is /proc/loadavg at the end ("" where unavailable): pacing on a shared machine
	// is only as good as the CPU the process got.
	LoadAverage string
}

// String formats the result as the self-test prints it.
func (r SelfTestResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "streams: %d (completed %d, failed %d) in %s\n", r.Streams, r.Completed, r.Failed, r.Elapsed.Round(time.Millisecond))
	if r.FirstFailure != "" {
		fmt.Fprintf(&b, "first failure: %s\n", r.FirstFailure)
	}
	fmt.Fprintf(&b, "tokens: %d in %d frames\n", r.Tokens, r.Frames)
	for _, p := range []struct {
		label string
		h     *hdrhistogram.Histogram
	}{{"all streams playing", r.PacingError}, {"whole run with the ramp", r.PacingErrorWithRamp}} {
		if p.h != nil {
			fmt.Fprintf(&b, "pacing error (actual - scheduled, µs), %s: p50 %d  p99 %d  p99.9 %d  max %d  (n=%d)\n",
				p.label, p.h.ValueAtQuantile(50), p.h.ValueAtQuantile(99), p.h.ValueAtQuantile(99.9), p.h.Max(), p.h.TotalCount())
		}
	}
	fmt.Fprintf(&b, "cpu: %s user+sys, %.2f µs per token (server and in-process client)\n",
		r.CPU.Round(time.Millisecond), float64(r.CPUPerToken.Nanoseconds())/1e3)
	if r.LoadAverage != "" {
		fmt.Fprintf(&b, "load average (1, 5, 15 min) at the end: %s\n", r.LoadAverage)
	}
	return b.String()
}

// SelfTest plays opts.Streams concurrent streams of one answer turn (Duration ×
// TokensPerSecond tokens, one a frame) against an in-process mock over loopback HTTP and
// measures its pacing error and CPU cost per token.
func SelfTest(ctx context.Context, opts SelfTestOptions) (SelfTestResult, error) {
	if err := opts.withDefaults(); err != nil {
		return SelfTestResult{}, err
	}
	interToken := time.Duration(float64(time.Second) / opts.TokensPerSecond)
	lib, err := selfTestLibrary(interToken, max(1, int(opts.Duration/interToken)))
	if err != nil {
		return SelfTestResult{}, err
	}
	srv, err := New(Options{Library: lib, TimeScale: 1})
	if err != nil {
		return SelfTestResult{}, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return SelfTestResult{}, fmt.Errorf("self-test: listen: %w", err)
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdownCtx)
		<-serveErr
	}()
	p, err := newSelfTestPlayer(ctx, opts, ln.Addr().String())
	if err != nil {
		return SelfTestResult{}, err
	}
	defer p.close()
	srv.TakePacingError()

	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		return SelfTestResult{}, fmt.Errorf("self-test: getrusage: %w", err)
	}
	res, ramp := p.play(ctx, opts, interToken, srv)
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		return SelfTestResult{}, fmt.Errorf("self-test: getrusage: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return SelfTestResult{}, fmt.Errorf("self-test interrupted: %w", err)
	}
	res.PacingError = srv.PacingError()
	res.CPU = time.Duration(after.Utime.Nano() - before.Utime.Nano() + after.Stime.Nano() - before.Stime.Nano())
	res.PacingErrorWithRamp = res.PacingError
	if ramp != nil {
		res.PacingErrorWithRamp = hdrhistogram.Import(ramp.Export())
		res.PacingErrorWithRamp.Merge(res.PacingError)
	}
	for _, rec := range srv.Sessions("") {
		res.Tokens += int64(rec.Tokens)
		res.Frames += int64(rec.Frames)
	}
	if res.Tokens > 0 {
		res.CPUPerToken = res.CPU / time.Duration(res.Tokens)
	}
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			res.LoadAverage = strings.Join(f[:3], " ")
		}
	}
	return res, nil
}

func (opts *SelfTestOptions) withDefaults() error {
	opts.Streams = cmp.Or(opts.Streams, 2000)
	opts.TokensPerSecond = cmp.Or(opts.TokensPerSecond, 20)
	opts.Duration = cmp.Or(opts.Duration, 10*time.Second)
	opts.Ramp = cmp.Or(opts.Ramp, time.Second)
	opts.Wire = cmp.Or(opts.Wire, "openai")
	switch {
	case opts.Streams < 0, opts.TokensPerSecond < 0, opts.Duration < 0, opts.Ramp < 0, opts.Connections < 0:
		return fmt.Errorf("self-test: streams, tokens per second, duration, ramp and connections must be positive")
	case opts.Wire != "openai" && opts.Wire != "anthropic":
		return fmt.Errorf("self-test: wire %q: expected openai or anthropic", opts.Wire)
	}
	// Over HTTP/1.1 both ends of every connection are in this process.
	var files syscall.Rlimit
	if need := 2*opts.Streams + 64; opts.Connections == 0 && syscall.Getrlimit(syscall.RLIMIT_NOFILE, &files) == nil && uint64(need) > files.Cur {
		return fmt.Errorf("self-test: %d streams on their own HTTP/1.1 connections need about %d file descriptors here (both ends are in this process), but the limit is %d: play fewer streams, or multiplex them over h2c connections (--conns N)",
			opts.Streams, need, files.Cur)
	}
	return nil
}

type selfTestPlayer struct {
	addr, path, body string
	clients          []*http.Client
}

func newSelfTestPlayer(ctx context.Context, opts SelfTestOptions, addr string) (*selfTestPlayer, error) {
	p := &selfTestPlayer{addr: addr, path: PathOpenAI,
		body: `{"model":"self-test","stream":true,"messages":[{"role":"user","content":"[[streambench scenario=self-test seed=1]]"}]}`}
	if opts.Wire == "anthropic" {
		p.path, p.body = PathAnthropic, `{"model":"self-test","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"[[streambench scenario=self-test seed=1]]"}]}`
	}
	for range opts.Connections {
		tr := &http.Transport{Protocols: &http.Protocols{}, HTTP2: &http.HTTP2Config{}}
		tr.Protocols.SetUnencryptedHTTP2(true)
		p.clients = append(p.clients, &http.Client{Transport: tr})
	}
	// One request per client first: Go's transport dials a connection per request while none
	// is up.
	for _, client := range p.clients {
		if err := selfTestWarmUp(ctx, client, "http://"+addr+PathHealth); err != nil {
			p.close()
			return nil, fmt.Errorf("self-test: warm-up: %w", err)
		}
	}
	return p, nil
}

func (p *selfTestPlayer) close() {
	for _, c := range p.clients {
		c.CloseIdleConnections()
	}
}

// play starts the streams over the ramp and waits for them; it returns their outcomes and the
// pacing error of the ramp (nil when the streams ended first).
func (p *selfTestPlayer) play(ctx context.Context, opts SelfTestOptions, interToken time.Duration, srv *Server) (SelfTestResult, *hdrhistogram.Histogram) {
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5e1f))
	start := time.Now()
	var (
		wg         sync.WaitGroup
		completed  atomic.Int64
		failed     atomic.Int64
		failOnce   sync.Once
		firstError string
	)
	for i := range opts.Streams {
		offset := time.Duration(rng.Int64N(int64(opts.Ramp) + 1))
		wg.Go(func() {
			if wait := time.Until(start.Add(offset)); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
			var err error
			if len(p.clients) == 0 {
				err = selfTestRawStream(ctx, p.addr, p.path, p.body, i)
			} else {
				err = selfTestStream(ctx, p.clients[i%len(p.clients)], "http://"+p.addr+p.path, p.body, i)
			}
			if err != nil {
				failed.Add(1)
				failOnce.Do(func() { firstError = err.Error() })
				return
			}
			completed.Add(1)
		})
	}
	// The ramp's frames are kept apart from the steady state.
	var ramp *hdrhistogram.Histogram
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-time.After(time.Until(start.Add(opts.Ramp + interToken))):
		ramp = srv.TakePacingError()
	case <-done: // streams shorter than the ramp: there is no steady state to keep apart
	case <-ctx.Done():
	}
	<-done
	return SelfTestResult{Streams: opts.Streams, Completed: int(completed.Load()), Failed: int(failed.Load()),
		FirstFailure: firstError, Elapsed: time.Since(start)}, ramp
}

// selfTestWarmUp opens client's connection with a health check.
func selfTestWarmUp(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

const selfTestSessionPrefix = "self-test-"

func selfTestStream(ctx context.Context, client *http.Client, url, body string, i int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSession, selfTestSessionPrefix+strconv.Itoa(i))
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("stream %d: %w", i, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return fmt.Errorf("stream %d: HTTP %d: %s", i, resp.StatusCode, msg)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("stream %d: reading: %w", i, err)
	}
	return nil
}

// selfTestLibrary is the embedded library with the one scenario the self-test plays.
func selfTestLibrary(interToken time.Duration, tokens int) (*scenarios.Library, error) {
	sc := &scenarios.Scenario{
		Name:        "self-test",
		Description: "one answer turn paced at a constant rate, for the mock's self-test",
		Timing: scenarios.Timing{TimeToFirstToken: scenarios.Constant(interToken), InterToken: scenarios.Constant(interToken),
			TokensPerFrame: 1},
		Turns: []scenarios.Turn{{Text: scenarios.Text{Tokens: tokens}}},
	}
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("self-test: scenario: %w", err)
	}
	return scenarios.Embedded().With(sc), nil
}

// selfTestRawStream plays stream i on its own HTTP/1.1 connection with the least client work:
// it writes the request, then reads until the mock closes the connection, checking only the
// status line and the chunked body's last chunk.
func selfTestRawStream(ctx context.Context, addr, path, body string, i int) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("stream %d: %w", i, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s: %s%d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		path, addr, HeaderSession, selfTestSessionPrefix, i, len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		return fmt.Errorf("stream %d: writing the request: %w", i, err)
	}
	const okStatus, lastChunk = "HTTP/1.1 200 ", "\r\n0\r\n\r\n"
	var (
		buf   [4096]byte
		start []byte               // the response's first bytes, up to the length of okStatus
		end   [len(lastChunk)]byte // its last bytes
		total int
	)
	for {
		n, err := conn.Read(buf[:])
		if missing := len(okStatus) - len(start); missing > 0 {
			start = append(start, buf[:min(n, missing)]...)
			if len(start) == len(okStatus) && string(start) != okStatus {
				rest, _ := io.ReadAll(io.LimitReader(conn, 1024))
				return fmt.Errorf("stream %d: %s%s", i, buf[:n], rest)
			}
		}
		if n >= len(end) {
			copy(end[:], buf[n-len(end):n])
		} else {
			copy(end[:], end[n:])
			copy(end[len(end)-n:], buf[:n])
		}
		total += n
		switch {
		case errors.Is(err, io.EOF) && string(end[:]) == lastChunk && total > len(okStatus)+len(lastChunk):
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("stream %d: the mock closed the connection before the response's last chunk", i)
		case err != nil:
			return fmt.Errorf("stream %d: reading: %w", i, err)
		}
	}
}

// String describes the self-test as given: streams, rate, length, transport and wire.
func (o SelfTestOptions) String() string {
	transport := "one HTTP/1.1 connection per stream"
	if o.Connections > 0 {
		transport = fmt.Sprintf("%d h2c connection(s)", o.Connections)
	}
	return fmt.Sprintf("%d streams × %g tokens/s for %s over %s, %s wire", o.Streams, o.TokensPerSecond, o.Duration, transport, o.Wire)
}
