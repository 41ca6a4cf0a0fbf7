package agentruntime

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
)

// TestServeAndShutdown: Serve answers on a real listener; Shutdown lets a short stream finish,
// and when the grace period runs out it ends the remaining stream with the dialect's error
// terminal and [DONE] instead of cutting it mid-frame.
func TestServeAndShutdown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.rt.Serve(ln) }()
	url := "http://" + ln.Addr().String()

	resp, err := http.Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}

	// A long stream (300 tokens at 20-40 ms) that cannot finish within the grace period.
	req, _ := http.NewRequest(http.MethodPost, url+"/api/chat/openai-none", strings.NewReader(`{"input":"`+directive("long-answer", 1, "shutdown")+`"}`))
	req.Header.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := make(chan string, 1)
	go func() { b, _ := io.ReadAll(resp.Body); body <- string(b) }()
	eventually(t, 5*time.Second, "stream open", func() bool { return gauge(t, e.rt.metrics.registry, MetricClientStreamsOpen) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.rt.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the grace period's deadline", err)
	}
	got := <-body
	if !strings.HasSuffix(got, `data: {"event":"error","error":"runtime shutting down"}`+"\n\n"+`data: "[DONE]"`+"\n\n") {
		t.Errorf("stream cut at shutdown does not end with the error terminal and [DONE]:\n...%s", got[max(0, len(got)-300):])
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v, want http.ErrServerClosed", err)
	}
}

// TestComposeHeartbeat: while a tool runs the compose stream is idle, and ": ping" comments
// keep it alive at the configured interval.
func TestComposeHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{Heartbeat: 40 * time.Millisecond, ToolTimeScale: 0.5})
	sr := e.open(composeClient, "openai-all", "abort-during-tool", 1, "heartbeat") // a 1.2-1.5 s tool, scaled to ~0.65 s
	pings := strings.Count(string(sr.body), ": ping\n\n")
	if pings < 3 {
		t.Errorf("%d pings during a ~650 ms tool with a 40 ms heartbeat, want >= 3:\n%s", pings, sr.body)
	}
	if vs := check(t, composeClient, mustDeployment(t, e, "openai-all"), "abort-during-tool", 1, sr); len(vs) > 0 {
		t.Errorf("violations: %+v", vs)
	}
}

// TestHeaderSelection: the X-Streambench-* headers reach the provider, so a client can select
// the scenario without a directive in its text.
func TestHeaderSelection(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	hdr := http.Header{"X-Streambench-Scenario": {"plain-answer"}, "X-Streambench-Seed": {"5"}, "X-Streambench-Session": {"by-header"}}
	resp, body := e.post("/api/chat/anthropic-none", hdr, `{"input":"no directive here"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"event":"final"`) {
		t.Fatalf("%d: %s", resp.StatusCode, body)
	}
	if recs := e.mock.Sessions("by-header"); len(recs) != 1 || recs[0].Scenario != "plain-answer" || recs[0].Seed != 5 {
		t.Errorf("mock records %+v, want one plain-answer seed 5 session", recs)
	}
}

// TestMetricsEndpoint: /metrics serves every metric the load generator's leak check reads.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	e.open(simChatOptIn, "openai-all", "preamble-tool", 1, "metrics")
	resp, err := e.client.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{MetricClientStreamsOpen + `{dialect="compose"} 0`, MetricProviderStreams + " 0", MetricToolsRunning + " 0",
		MetricToolsCancelled + " 0", MetricResetsSent + " 1", MetricProviderErrors + " 0", MetricSlowClientsDropped + " 0", MetricGoroutines + " ",
		MetricClientStreamsStarted + `{dialect="sim-chat"} 1`} {
		if !strings.Contains(string(b), name) {
			t.Errorf("/metrics lacks %q", name)
		}
	}
	// No profile on the clients' port: /debug/pprof/cmdline would serve --provider-header
	// values (runtime --pprof ADDR serves profiles on a listener of their own).
	for _, path := range []string{"/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
		resp, err = e.client.Get(e.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
}

func mustDeployment(t testing.TB, e *env, slug string) *Deployment {
	t.Helper()
	d, ok := e.rt.deps.Lookup(slug)
	if !ok {
		t.Fatalf("no deployment %s", slug)
	}
	return d
}

// TestH2CClients: clients may speak cleartext HTTP/2 to the runtime (the load generator's
// --http2); streams are the same as over HTTP/1.1 and a client's stream reset cancels the run.
func TestH2CClients(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	h2 := &http.Client{Transport: &http.Transport{Protocols: p}}
	t.Cleanup(h2.CloseIdleConnections)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.rt.Serve(ln) }()
	url := "http://" + ln.Addr().String()

	want := normalize(e.open(simChatOptIn, "openai-all", "preamble-tool", 4, "h1").body)
	req, _ := http.NewRequest(http.MethodPost, url+"/api/chat/openai-all", strings.NewReader(`{"input":"`+directive("preamble-tool", 4, "h2")+`"}`))
	req.Header.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
	resp, err := h2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", resp.Proto)
	}
	if got := normalize(b); got != want {
		t.Errorf("h2c stream differs from HTTP/1.1:\n%s\n---\n%s", got, want)
	}

	// An h2c client that cancels its request resets the stream; the provider sees the cancel.
	slow := newEnv(t, 1, Options{})
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = slow.rt.Serve(ln2) }()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodPost, "http://"+ln2.Addr().String()+"/api/chat/anthropic-none", strings.NewReader(`{"input":"`+directive("abort-mid-answer", 1, "h2-abort")+`"}`))
	req.Header.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
	resp, err = h2.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, bufio.NewReader(resp.Body), `"chunk"`)
	cancel()
	resp.Body.Close()
	eventually(t, 5*time.Second, "provider stream cancelled after the h2 stream reset", func() bool {
		recs := slow.mock.Sessions("h2-abort")
		return len(recs) == 1 && !recs[0].ClientGone.IsZero() && gauge(t, slow.rt.metrics.registry, MetricClientStreamsOpen) == 0
	})
}

// TestProviderConnectionsShared: with h2c (the default) many concurrent client streams share
// one provider connection instead of a socket each; with ProviderHTTP1 each concurrent stream
// needs its own.
func TestProviderConnectionsShared(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		http1   bool
		maxWant int64 // most provider connections for 50 concurrent streams
	}{
		// h2c multiplexes the streams on a few connections (DefaultProviderH2CConns).
		{"h2c", false, DefaultProviderH2CConns},
		// HTTP/1.1 cannot: one connection per concurrent stream (pooled afterwards).
		{"http1", true, 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			var conns atomic.Int64
			mts := httptest.NewUnstartedServer(mock)
			mts.Config.Protocols = mockprovider.Protocols()
			mts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			mts.Start()
			t.Cleanup(mts.Close)
			rt, err := New(Options{ProviderURL: mts.URL, ProviderHTTP1: tc.http1, Heartbeat: -1})
			if err != nil {
				t.Fatal(err)
			}
			rts := httptest.NewServer(rt.Handler())
			t.Cleanup(func() { rts.Close(); _ = rt.Close() })
			e := &env{t: t, rt: rt, url: rts.URL, client: rts.Client()}
			var wg sync.WaitGroup
			for i := range 50 {
				wg.Go(func() {
					resp, body := e.post("/api/chat/openai-none", nil, `{"input":"`+directive("plain-answer", uint64(i), fmt.Sprint("c", i))+`"}`)
					if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"event":"final"`) {
						t.Errorf("stream %d: %d", i, resp.StatusCode)
					}
				})
			}
			wg.Wait()
			if got := conns.Load(); got > tc.maxWant || (tc.http1 && got < 2) {
				t.Errorf("%d provider connections for 50 concurrent streams, want at most %d", got, tc.maxWant)
			}
		})
	}
}
