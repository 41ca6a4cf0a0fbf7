package agentruntime

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/scenarios"
)

// TestSlowClientDropped: a client that stops reading is dropped after the idle timeout and
// counted; its provider stream is cancelled; meanwhile another client's stream on the same
// runtime completes without waiting for it.
func TestSlowClientDropped(t *testing.T) {
	t.Parallel()
	lib, err := scenarios.LoadDir("testdata/scenarios")
	if err != nil {
		t.Fatal(err)
	}
	mock, mts := mocktest.Serve(t, mockprovider.Options{Library: lib, TimeScale: 1})
	const idle = time.Second
	rt, err := New(Options{ProviderURL: mts.URL, ClientIdleTimeout: idle, Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	rts := httptest.NewUnstartedServer(rt.Handler())
	// Small kernel send buffers on the runtime's side, so a client that stops reading stalls
	// the runtime's writes after kilobytes, not megabytes (also under -race).
	rts.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetWriteBuffer(8 << 10)
		}
		return ctx
	}
	rts.Start()
	t.Cleanup(func() { rts.Close(); _ = rt.Close() })
	m := rt.metrics.registry

	// The stalled client: a tiny receive buffer and no reads at all.
	u, _ := url.Parse(rts.URL)
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := fmt.Sprintf(`{"input":%q}`, scenarios.Directive{Scenario: "huge-answer", Seed: 1, Session: "stalled"}.String())
	fmt.Fprintf(conn, "POST /api/chat/openai-none HTTP/1.1\r\nHost: %s\r\nX-Sim-Stream-Protocol: agent-events-v1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Host, len(body), body)
	started := time.Now()

	// A healthy client is served to its end while the stalled one is still held open: the
	// stalled writer blocks only its own stream.
	eventually(t, 5*time.Second, "stalled stream open", func() bool { return gauge(t, m, MetricClientStreamsOpen) == 1 })
	healthy := &env{t: t, rt: rt, url: rts.URL, client: rts.Client()}
	sr := healthy.open(simChatOptIn, "openai-none", "small-answer", 2, "healthy")
	if !strings.Contains(string(sr.body), `"[DONE]"`) {
		t.Errorf("healthy stream incomplete: %s", sr.body)
	}
	if gauge(t, m, MetricSlowClientsDropped) != 0 || gauge(t, m, MetricClientStreamsOpen) != 1 {
		t.Errorf("the stalled stream was already gone when the healthy one finished; the test proves nothing")
	}

	eventually(t, 10*time.Second, "stalled client dropped", func() bool { return gauge(t, m, MetricSlowClientsDropped) == 1 })
	if took := time.Since(started); took < idle {
		t.Errorf("dropped after %s, before the %s idle timeout", took, idle)
	}
	eventually(t, 5*time.Second, "stream closed", func() bool {
		return gauge(t, m, MetricClientStreamsOpen) == 0 && gauge(t, m, MetricProviderStreams) == 0
	})
	if got := gauge(t, m, MetricClientAborts); got != 0 {
		t.Errorf("a drop counted as %v client aborts, want 0", got)
	}
	eventually(t, 5*time.Second, "the provider stream cancelled when the client was dropped", func() bool {
		recs := mock.Sessions("stalled")
		return len(recs) == 1 && !recs[0].ClientGone.IsZero()
	})
}
