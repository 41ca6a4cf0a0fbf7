package mockprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
)

// waitFor polls cond every millisecond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// metricValue scrapes srv's /metrics and returns the value of the series line that starts
// with series (name plus labels exactly as exposed), or -1 when absent.
func metricValue(t *testing.T, baseURL, series string) float64 {
	t.Helper()
	resp, err := http.Get(baseURL + PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return v
		}
	}
	return -1
}

func TestClientCancelIsRecordedWithin50ms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		h2c  bool
	}{
		// HTTP/1.1: the client closes its connection
		{"openai http1", PathOpenAI, false},
		// h2c: the client resets its stream; the connection stays up
		{"openai h2c", PathOpenAI, true},
		// the other wire, to be sure both stream loops watch the context
		{"anthropic h2c", PathAnthropic, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, ts := newTestMock(t, Options{TimeScale: 1})
			client := ts.Client()
			if tt.h2c {
				client = h2cClient(t)
			}
			session := "cancel-" + strings.ReplaceAll(tt.name, " ", "-")
			body := openaiBody(directive("long-answer", 9, session), true)
			if tt.path == PathAnthropic {
				body = anthropicBody(directive("long-answer", 9, session), true)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+tt.path, strings.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// Read until a few answer tokens arrived, so the cancel lands mid-stream.
			r := bufio.NewReader(resp.Body)
			for seen := 0; seen < 5; {
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("reading stream: %v", err)
				}
				if strings.Contains(line, `"delta":{"content":"`) || strings.Contains(line, "text_delta") {
					seen++
				}
			}
			cancelAt := time.Now()
			cancel()
			resp.Body.Close()
			waitFor(t, 2*time.Second, "the record to close", func() bool {
				return onlySession(t, srv, session).Outcome != mockrecords.OutcomeStreaming
			})
			rec := onlySession(t, srv, session)
			if rec.Outcome != mockrecords.OutcomeClientCancelled {
				t.Fatalf("outcome %q, want client-cancelled", rec.Outcome)
			}
			if lag := rec.ClientGone.Sub(cancelAt); lag < 0 || lag > 50*time.Millisecond {
				t.Errorf("ClientGone %s after the cancel, want within 50ms", lag)
			}
			if rec.Tokens < 5 || rec.Tokens >= 2000 {
				t.Errorf("tokens sent: %d, want between 5 and 2000", rec.Tokens)
			}
			waitFor(t, time.Second, "active streams to return to 0", func() bool { return srv.ActiveStreams() == 0 })
			wire := "openai"
			if tt.path == PathAnthropic {
				wire = "anthropic"
			}
			if v := metricValue(t, ts.URL, `streambench_mock_client_cancelled_total{wire="`+wire+`"}`); v != 1 {
				t.Errorf("client_cancelled_total = %v, want 1", v)
			}
			if v := metricValue(t, ts.URL, "streambench_mock_active_streams"); v != 0 {
				t.Errorf("active_streams gauge = %v, want 0", v)
			}
		})
	}
}

func TestCapacityQueueFullAnswers429(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 1, Capacity: Capacity{MaxConcurrent: 1, QueueSize: 1}})
	client := h2cClient(t)
	// Each client has its own context: B is cancelled while A still holds the slot, so it is
	// cancelled in the queue whatever the machine's load (with one context, A's slot could
	// free and admit B before B's cancel reached the server).
	ctxs := map[string]context.Context{}
	cancels := map[string]context.CancelFunc{}
	for _, s := range []string{"a", "b"} {
		ctxs[s], cancels[s] = context.WithCancel(context.Background())
		defer cancels[s]()
	}
	// A takes the only slot and plays long-answer (>16 s); B waits in the queue.
	var wg sync.WaitGroup
	for _, s := range []string{"a", "b"} {
		req, _ := http.NewRequestWithContext(ctxs[s], http.MethodPost, ts.URL+PathOpenAI, strings.NewReader(openaiBody(directive("long-answer", 1, s), true)))
		wg.Go(func() {
			if resp, err := client.Do(req); err == nil {
				drain(resp)
			}
		})
		if s == "a" {
			waitFor(t, 2*time.Second, "A to play", func() bool { return srv.ActiveStreams() == 1 })
		}
	}
	waitFor(t, 2*time.Second, "B to queue", func() bool { return srv.admission.waiting.Load() == 1 })
	if v := metricValue(t, ts.URL, "streambench_mock_queue_depth"); v != 1 {
		t.Errorf("queue_depth gauge = %v, want 1", v)
	}
	for _, wire := range []struct{ path, body string }{
		{PathOpenAI, openaiBody(directive("plain-answer", 1, "c"), true)},
		{PathAnthropic, anthropicBody(directive("plain-answer", 1, "c"), true)},
	} {
		resp := post(t, client, ts.URL+wire.path, wire.body, nil)
		msg := errorMessage(t, resp)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Errorf("%s: status %d retry-after %q, want 429 with Retry-After", wire.path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		if !strings.Contains(msg, "queue is full") {
			t.Errorf("%s: message %q does not say the queue is full", wire.path, msg)
		}
	}
	cancels["b"]()
	waitFor(t, 5*time.Second, "B to leave the queue", func() bool { return srv.admission.waiting.Load() == 0 })
	if n := srv.ActiveStreams(); n != 1 {
		t.Errorf("%d active streams after B left the queue, want A's alone", n)
	}
	cancels["a"]()
	wg.Wait()
	waitFor(t, 5*time.Second, "slots to free", func() bool { return srv.ActiveStreams() == 0 && srv.admission.waiting.Load() == 0 })
	if rec := onlySession(t, srv, "b"); rec.Outcome != mockrecords.OutcomeClientCancelled || rec.ClientGone.IsZero() {
		t.Errorf("B, cancelled while queued: %+v, want client-cancelled with ClientGone", rec)
	}
}

func TestCapacityQueuedTimeAddsToFirstToken(t *testing.T) {
	t.Parallel()
	lib := testLibrary(t, `name: quick
timing: {ttft: 100ms, itl: 10ms}
turns:
  - text: "one two three"
`)
	srv, ts := newTestMock(t, Options{Library: lib, TimeScale: 1, Capacity: Capacity{MaxConcurrent: 1, QueueSize: 4}})
	client := h2cClient(t)
	firstText := make(map[string]time.Duration)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, s := range []string{"a", "b"} {
		wg.Go(func() {
			resp := post(t, client, ts.URL+PathOpenAI, openaiBody(directive("quick", 1, s), true), nil)
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if strings.Contains(line, `"content":"one"`) {
					mu.Lock()
					firstText[s] = time.Since(start)
					mu.Unlock()
				}
			}
		})
		if s == "a" {
			waitFor(t, 2*time.Second, "A to play", func() bool { return srv.ActiveStreams() == 1 })
		}
	}
	wg.Wait()
	a, b := onlySession(t, srv, "a"), onlySession(t, srv, "b")
	if a.Outcome != mockrecords.OutcomeCompleted || b.Outcome != mockrecords.OutcomeCompleted {
		t.Fatalf("outcomes %q %q, want completed", a.Outcome, b.Outcome)
	}
	// A plays for ~120 ms; B waits for it, then gets its own 100 ms TTFT.
	if b.Queued < 80*time.Millisecond {
		t.Errorf("B queued %s, want about A's 120 ms", b.Queued)
	}
	if b.FirstByte.Sub(b.Start) < b.Queued {
		t.Errorf("B's first byte %s after arrival, less than its queued time %s", b.FirstByte.Sub(b.Start), b.Queued)
	}
	if firstText["b"] < b.Queued+100*time.Millisecond {
		t.Errorf("B's first token at +%s, before its queued time %s + its 100 ms TTFT", firstText["b"], b.Queued)
	}
	if v := metricValue(t, ts.URL, "streambench_mock_queued_seconds_count"); v != 1 {
		t.Errorf("queued_seconds_count = %v, want 1", v)
	}
}

func TestCapacityQueueTimeout(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 1, Capacity: Capacity{MaxConcurrent: 1, QueueSize: 1, QueueTimeout: 30 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+PathOpenAI, strings.NewReader(openaiBody(directive("long-answer", 1, "a"), true)))
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	waitFor(t, 2*time.Second, "A to play", func() bool { return srv.ActiveStreams() == 1 })
	resp2 := post(t, ts.Client(), ts.URL+PathAnthropic, anthropicBody(directive("plain-answer", 1, "b"), true), nil)
	if msg := errorMessage(t, resp2); resp2.StatusCode != http.StatusTooManyRequests || !strings.Contains(msg, "timed out waiting in the queue") {
		t.Errorf("status %d message %q, want 429 saying the queue wait timed out", resp2.StatusCode, msg)
	}
	if rec := onlySession(t, srv, "b"); rec.Queued < 30*time.Millisecond || rec.Outcome != mockrecords.OutcomeHTTPError {
		t.Errorf("record %+v: want queued >= 30ms and http-error", rec)
	}
}

func TestH2CMultiplexesStreamsOnOneConnection(t *testing.T) {
	t.Parallel()
	_, ts, conns := connCountingMock(t, Options{TimeScale: 0})
	client := h2cClient(t)
	// One request first: Go's transport dials a connection per request while none is up yet.
	warm := post(t, client, ts.URL+PathOpenAI, openaiBody(directive("plain-answer", 1, "warm"), false), nil)
	drain(warm)
	const streams = 50
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for i := range streams {
		wg.Go(func() {
			resp := post(t, client, ts.URL+PathOpenAI, openaiBody(directive("plain-answer", uint64(i), fmt.Sprint("h2-", i)), true), nil)
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			switch {
			case err != nil:
				errs <- err
			case resp.ProtoMajor != 2:
				errs <- fmt.Errorf("stream %d served over %s, want HTTP/2", i, resp.Proto)
			case !strings.HasSuffix(string(data), "data: [DONE]\n\n"):
				errs <- fmt.Errorf("stream %d did not end with [DONE]", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d streams used %d connections, want 1", streams, n)
	}
	// HTTP/1.1 still works on the same port.
	resp := post(t, ts.Client(), ts.URL+PathOpenAI, openaiBody(directive("plain-answer", 1, "h1"), false), nil)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 1 {
		t.Errorf("HTTP/1.1 request: %s %d", resp.Proto, resp.StatusCode)
	}
}

// errorMessage reads a wire error body (either shape) and returns its message.
func errorMessage(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("error body %q lacks error.type or error.message", body)
	}
	return e.Error.Message
}

func TestH2CStreamLimitSpreadsStreamsOverConnections(t *testing.T) {
	t.Parallel()
	srv, ts, conns := connCountingMock(t, Options{TimeScale: 0.05, MaxConcurrentStreamsPerConn: 10})
	client := h2cClient(t)
	warm, err := client.Get(ts.URL + PathHealth)
	if err != nil {
		t.Fatal(err)
	}
	warm.Body.Close()
	// 25 overlapping streams (plain-answer lasts ~150 ms at this time scale) with at most 10
	// per connection need at least 3 connections.
	var wg sync.WaitGroup
	for i := range 25 {
		wg.Go(func() {
			resp := post(t, client, ts.URL+PathOpenAI, openaiBody(directive("plain-answer", uint64(i), fmt.Sprint("lim-", i)), true), nil)
			drain(resp)
		})
	}
	wg.Wait()
	if n := conns.Load(); n < 3 {
		t.Errorf("25 concurrent streams at 10 per connection used %d connections, want >= 3", n)
	}
	for _, rec := range srv.Sessions("") {
		if rec.Outcome != mockrecords.OutcomeCompleted {
			t.Errorf("session %s: %s", rec.Session, rec.Outcome)
		}
	}
}
