package selfbench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/rxstamp"
)

// probeRequest is a probe run: Wire is the server's ("openai", "anthropic" or "sim-chat").
type probeRequest struct {
	Target   string        `json:"target"`
	Wire     string        `json:"wire"`
	Rate     float64       `json:"rate"`
	Delay    time.Duration `json:"delay"`
	Duration time.Duration `json:"duration"`
	TTFT     time.Duration `json:"ttft"`
}

// probeResult is what a probe run measured, in microseconds.
type probeResult struct {
	Streams      int    `json:"streams"`
	Failed       int    `json:"failed"`
	FirstFailure string `json:"firstFailure,omitempty"`
	P50          int64  `json:"p50Micros"`
	P99          int64  `json:"p99Micros"`
	Max          int64  `json:"maxMicros"`
	// The probe's own timer floor over the run: how late its sleeps of the scripted TTFT woke.
	Sleeps   int64 `json:"sleeps"`
	SleepP50 int64 `json:"sleepP50Micros"`
	SleepP99 int64 `json:"sleepP99Micros"`
}

const probeSleepers = 20

// NewProbeClient is fidelity's yardstick, the least open-loop client: on POST /run (a
// probeRequest) it plays hand-written streams and answers with their TTFT − scripted TTFT (a
// probeResult), timed like the generator's: the machine's floor.
func NewProbeClient() *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /run", func(w http.ResponseWriter, r *http.Request) {
		var req probeRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			http.Error(w, "probe request: "+err.Error(), http.StatusBadRequest)
			return
		}
		plan, err := newProbePlan(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		res := plan.run(r.Context())
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(res)
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
}

// probePlan is a validated probeRequest: every stream's request, and which frames carry a token.
type probePlan struct {
	req     probeRequest
	addr    string
	request []byte
	token   func(frame []byte) bool
}

// Token frames: an Anthropic content_block_delta carrying text, a sim-chat chunk.
var (
	textDelta  = []byte(`"type":"text_delta"`)
	chunkField = []byte(`"chunk":"`)
)

func newProbePlan(req probeRequest) (*probePlan, error) {
	u, err := url.Parse(req.Target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("probe target %q: want http://HOST:PORT", req.Target)
	}
	if req.Rate <= 0 || req.Rate > 1000 || req.Duration <= 0 || req.Duration > time.Hour || req.Delay < 0 || req.TTFT < 0 {
		return nil, fmt.Errorf("probe: rate %g/s (want 0 < rate ≤ 1000), duration %s (0 < d ≤ 1h), delay %s and TTFT %s (≥ 0)", req.Rate, req.Duration, req.Delay, req.TTFT)
	}
	p := &probePlan{req: req, addr: u.Host}
	directive := `[[streambench scenario=fidelity seed=1]]`
	var path, body string
	switch req.Wire {
	case "openai":
		path, body = mockprovider.PathOpenAI, `{"model":"probe","stream":true,"messages":[{"role":"user","content":"`+directive+`"}]}`
		p.token = isContentChunk
	case "anthropic":
		path, body = mockprovider.PathAnthropic, `{"model":"probe","max_tokens":4096,"stream":true,"messages":[{"role":"user","content":"`+directive+`"}]}`
		p.token = func(frame []byte) bool { return bytes.Contains(frame, textDelta) }
	case "sim-chat":
		path, body = "/", `{"message":"probe"}`
		p.token = func(frame []byte) bool { return bytes.Contains(frame, chunkField) }
	default:
		return nil, fmt.Errorf("probe wire %q: want openai, anthropic or sim-chat", req.Wire)
	}
	p.request = fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		path, p.addr, len(body), body)
	return p, nil
}

func (p *probePlan) run(ctx context.Context) probeResult {
	var (
		mu  sync.Mutex
		res probeResult
		wg  sync.WaitGroup
	)
	h := hdrhistogram.New(1, 60_000_000, 3)
	sleeps := p.sampleSleeps(ctx)
	conns, closeConns := p.dialAhead(ctx)
	defer closeConns()
	clock := hrtimer.New()
	waiter := clock.NewWaiter()
	start := time.Now().Add(p.req.Delay)
	every := time.Duration(float64(time.Second) / p.req.Rate)
	for i := 0; ; i++ {
		intended := start.Add(time.Duration(i) * every)
		if intended.Sub(start) >= p.req.Duration {
			break
		}
		// Spin the last stretch, as the generator's open loop does.
		if wait := time.Until(intended); wait > 0 && !waiter.UntilSpinning(ctx.Done(), intended, min(250*time.Microsecond, wait/20)) {
			break
		}
		var conn net.Conn
		select {
		case conn = <-conns:
		default: // none dialled yet: the stream dials its own
		}
		wg.Go(func() {
			at, err := p.stream(ctx, conn)
			mu.Lock()
			defer mu.Unlock()
			res.Streams++
			if err != nil {
				res.Failed++
				if res.FirstFailure == "" {
					res.FirstFailure = err.Error()
				}
				return
			}
			_ = h.RecordValue(max(at.Sub(intended.Add(p.req.TTFT)).Microseconds(), 0))
		})
	}
	wg.Wait()
	if h.TotalCount() > 0 {
		res.P50, res.P99, res.Max = h.ValueAtQuantile(50), h.ValueAtQuantile(99), h.Max()
	}
	if sh := sleeps(); sh.TotalCount() > 0 {
		res.Sleeps, res.SleepP50, res.SleepP99 = sh.TotalCount(), sh.ValueAtQuantile(50), sh.ValueAtQuantile(99)
	}
	return res
}

// sampleSleeps starts sleepers of the scripted TTFT (10 ms if 0) on Go timers, as a server pacing
// a first token, recording how late they woke, until the returned function stops them.
func (p *probePlan) sampleSleeps(ctx context.Context) func() *hdrhistogram.Histogram {
	ctx, cancel := context.WithCancel(ctx)
	h := hdrhistogram.New(1, 60_000_000, 3)
	var mu sync.Mutex
	var wg sync.WaitGroup
	d := p.req.TTFT
	if d <= 0 {
		d = 10 * time.Millisecond
	}
	begin := time.Now().Add(p.req.Delay)
	for i := range probeSleepers {
		wg.Go(func() {
			due := begin.Add(d * time.Duration(i) / probeSleepers)
			t := time.NewTimer(time.Until(due))
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				late := time.Since(due)
				mu.Lock()
				_ = h.RecordValue(max(late.Microseconds(), 0))
				mu.Unlock()
				due = time.Now().Add(d)
				t.Reset(d)
			}
		})
	}
	return func() *hdrhistogram.Histogram {
		cancel()
		wg.Wait()
		return h
	}
}

// dialAhead keeps a few connections dialled ahead, as the generator's pool does.
func (p *probePlan) dialAhead(ctx context.Context) (<-chan net.Conn, func()) {
	ctx, cancel := context.WithCancel(ctx)
	conns := make(chan net.Conn, 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		var d net.Dialer
		for {
			c, err := d.DialContext(ctx, "tcp", p.addr)
			if err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(10 * time.Millisecond):
					continue
				}
			}
			select {
			case conns <- c:
			case <-ctx.Done():
				c.Close()
				return
			}
		}
	}()
	return conns, func() {
		cancel()
		<-done
		close(conns)
		for c := range conns {
			c.Close()
		}
	}
}

// stream plays one stream on conn (nil or closed: a new one) and returns when its first token arrived.
func (p *probePlan) stream(ctx context.Context, conn net.Conn) (time.Time, error) {
	var d net.Dialer
	dial := func() (err error) {
		conn, err = d.DialContext(ctx, "tcp", p.addr)
		return err
	}
	if conn == nil {
		if err := dial(); err != nil {
			return time.Time{}, err
		}
	}
	_, err := conn.Write(p.request)
	if err != nil {
		// The server closed the idle connection dialled ahead: once more on a fresh one.
		conn.Close()
		if err := dial(); err != nil {
			return time.Time{}, err
		}
		_, err = conn.Write(p.request)
	}
	defer func() { conn.Close() }()
	if err != nil {
		return time.Time{}, fmt.Errorf("writing the request: %w", err)
	}
	conn, _ = rxstamp.Wrap(conn) // timed like the generator's reads
	stamped, _ := conn.(*rxstamp.Conn)
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(p.req.TTFT + 30*time.Second))
	var arrived func(time.Time) time.Time
	if stamped != nil {
		arrived = stamped.Arrived
	}
	var at time.Time
	err = readFrames(conn, make([]byte, 0, 8192), arrived, func(frame []byte, now time.Time) (bool, error) {
		at = now
		return p.token(frame), nil
	})
	if errors.Is(err, io.EOF) {
		err = errors.New("the stream ended before a token")
	}
	return at, err
}

// runWithProbe runs cfg with the probe client, a child process, playing req beside it.
func runWithProbe(ctx context.Context, cfg loadgen.Config, o Options, req probeRequest) (*measure.Run, int64, probeResult, error) {
	child, err := startBenchChild("probe client", probeClientMode)
	if err != nil {
		return nil, 0, probeResult{}, err
	}
	defer child.Stop()
	body, _ := json.Marshal(req) // numbers and strings: cannot fail
	var floor probeResult
	done := make(chan error, 1)
	go func() {
		var err error
		floor, err = postProbe(ctx, child.URL()+"/run", body)
		done <- err
	}()
	run, peak, err := runWithPeak(ctx, cfg, o)
	probeErr := <-done
	return run, peak, floor, cmp.Or(err, probeErr)
}

func postProbe(ctx context.Context, url string, body []byte) (probeResult, error) {
	var res probeResult
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return res, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return res, fmt.Errorf("probe client: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return res, fmt.Errorf("probe client: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return res, fmt.Errorf("probe client: %s: %s", resp.Status, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return res, fmt.Errorf("probe client's result: %w", err)
	}
	return res, nil
}
