package agentruntime

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol/simchat"
)

// openLive starts a sim-chat stream (opted in, tools deployment) and returns a reader over its
// body and a func that closes the connection, as a browser tab closing does.
func (e *env) openLive(slug, input string) (*bufio.Reader, func()) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/chat/"+slug, strings.NewReader(`{"input":"`+input+`"}`))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
	// A dedicated transport: closing its connection must not disturb other tests' streams.
	tr := &http.Transport{DisableKeepAlives: true}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("status %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body), func() { resp.Body.Close(); tr.CloseIdleConnections() }
}

// readUntil reads frames until one contains marker, returning how many frames it read.
func readUntil(t testing.TB, r *bufio.Reader, marker string) int {
	t.Helper()
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("stream ended before %q: %v", marker, err)
		}
		if bytes.Contains(line, []byte(marker)) {
			return n
		}
	}
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(req)
}

// TestAbortDuringTool: the client leaves while a tool runs. No provider stream is open then, so
// what must happen is: the tool settles cancelled at once (metric), no next model turn is
// requested, and the runtime's goroutines, open streams and provider streams go back to baseline.
func TestAbortDuringTool(t *testing.T) {
	t.Parallel()
	// Tools run 5× their scripted 1.2-1.5 s, so the client certainly leaves while one runs.
	// The provider client counts the requests the runtime sends, as it sends them.
	var sent atomic.Int64
	provider := &http.Client{Transport: countingTransport{next: newProviderTransport(true, DefaultProviderH2CConns), n: &sent}}
	e := newEnv(t, 0, Options{ToolTimeScale: 5, ProviderClient: provider})
	m := e.rt.metrics.registry
	// Warm up: the first provider request dials the pooled h2c connection, whose goroutines
	// belong in the baseline.
	e.open(clientKind{dialect: simchat.Name}, "openai-none", "plain-answer", 1, "warmup")
	base := labelledGoroutines(t, e.rt)
	sentBefore := sent.Load()

	r, closeConn := e.openLive("openai-tools", directive("abort-during-tool", 1, "abort-tool"))
	readUntil(t, r, `"phase":"start"`)
	eventually(t, 5*time.Second, "tool running", func() bool { return gauge(t, m, MetricToolsRunning) == 1 })
	closed := time.Now()
	closeConn()

	eventually(t, 5*time.Second, "tool cancelled", func() bool { return gauge(t, m, MetricToolsCancelled) == 1 })
	if d := time.Since(closed); d > 500*time.Millisecond {
		t.Errorf("tool took %s to settle cancelled", d)
	}
	eventually(t, 5*time.Second, "streams and tools back to zero", func() bool {
		return gauge(t, m, MetricToolsRunning) == 0 && gauge(t, m, MetricProviderStreams) == 0 &&
			gauge(t, m, MetricClientStreamsOpen) == 0
	})
	eventually(t, 5*time.Second, "runtime goroutines back to baseline", func() bool { return labelledGoroutines(t, e.rt) <= base })
	if got := gauge(t, m, MetricClientAborts); got != 1 {
		t.Errorf("client aborts = %v, want 1", got)
	}
	// The run's goroutines are gone, so its loop has ended and the count of requests it sent
	// is final: a loop that wrongly went on to turn 1 sent a second one.
	if n := sent.Load() - sentBefore; n != 1 {
		t.Errorf("the runtime sent %d provider requests for the aborted session, want 1 (turn 0)", n)
	}
	recs := e.mock.Sessions("abort-tool")
	for _, rec := range recs {
		if rec.Turn > 0 {
			t.Errorf("the runtime requested turn %d after the client left", rec.Turn)
		}
	}
	if len(recs) != 1 {
		t.Errorf("mock saw %d requests, want 1 (turn 0)", len(recs))
	}
}

// TestAbortMidAnswer: the client leaves while the answer streams; the provider must see its
// stream cancelled within 50 ms, and nothing may be left running. The lag is a wall-clock
// measurement, so on a loaded machine one abort may be descheduled: of three aborts the best
// must be within 50 ms, and every one must reach the provider.
func TestAbortMidAnswer(t *testing.T) {
	t.Parallel()
	for _, wire := range []string{"openai", "anthropic"} {
		t.Run(wire, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, 1, Options{})
			m := e.rt.metrics.registry
			best := time.Hour
			for attempt := range 3 {
				session := fmt.Sprintf("abort-mid-%s-%d", wire, attempt)
				r, closeConn := e.openLive(wire+"-none", directive("abort-mid-answer", 1, session))
				for range 10 {
					readUntil(t, r, `"chunk"`)
				}
				closed := time.Now()
				closeConn()
				var rec mockrecords.Record
				eventually(t, 5*time.Second, "mock records the client gone", func() bool {
					recs := e.mock.Sessions(session)
					if len(recs) == 1 && !recs[0].ClientGone.IsZero() {
						rec = recs[0]
						return true
					}
					return false
				})
				if rec.Outcome != mockrecords.OutcomeClientCancelled {
					t.Errorf("mock outcome %s, want %s", rec.Outcome, mockrecords.OutcomeClientCancelled)
				}
				lag := rec.ClientGone.Sub(closed)
				t.Logf("attempt %d: provider saw the cancel %s after the client left", attempt, lag)
				best = min(best, lag)
				eventually(t, 5*time.Second, "provider streams back to zero", func() bool {
					return gauge(t, m, MetricProviderStreams) == 0 && gauge(t, m, MetricClientStreamsOpen) == 0
				})
				if best <= 50*time.Millisecond {
					break
				}
			}
			if best > 50*time.Millisecond {
				t.Errorf("provider saw the cancel %s after the client left at best (want <= 50ms)", best)
			}
		})
	}
}
