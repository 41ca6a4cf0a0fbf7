package loadgen

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var _ http.RoundTripper = (*streamTransport)(nil)

// countingServer counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestStreamTransportReusesAndStreams(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, "data: "+string(body)+strings.Repeat("x", i)+"\n\n")
			w.(http.Flusher).Flush() // chunked, flushed frame by frame
		}
	})
	client := &http.Client{Transport: newStreamTransport(4)}
	for i := range 5 {
		var connected bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			ConnectDone: func(_, _ string, err error) { connected = err == nil },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/s", strings.NewReader("hi"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != "data: hi\n\ndata: hix\n\ndata: hixx\n\n" {
			t.Fatalf("request %d: body %q, err %v", i, got, err)
		}
		if connected != (i == 0) {
			t.Errorf("request %d: new connection %v, want one only for the first", i, connected)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server saw %d connections for 5 sequential requests, want 1", n)
	}
}

func TestStreamTransportUnreadBodyClosesConnection(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // an endless stream
	})
	client := &http.Client{Transport: newStreamTransport(4)}
	for range 2 {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		_, _ = resp.Body.Read(buf)
		resp.Body.Close() // mid-stream: the connection cannot be reused
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2 (an abandoned stream's connection is closed)", n)
	}
}

func TestStreamTransportCancelUnblocksRead(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: newStreamTransport(4)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("read of a cancelled stream ended without error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not unblock the body read")
	}
}

func TestStreamTransportRetriesClosedParkedConnection(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served.Add(1)
		_, _ = w.Write(body)
	})
	tr := newStreamTransport(4)
	client := &http.Client{Transport: tr}
	post := func() string {
		resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("again"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	post()
	srv.CloseClientConnections() // the server drops the parked connection
	time.Sleep(20 * time.Millisecond)
	if got := post(); got != "again" {
		t.Errorf("after the server closed the parked connection: body %q, want the request replayed", got)
	}
	if conns.Load() != 2 || served.Load() != 2 {
		t.Errorf("connections %d served %d, want 2 and 2", conns.Load(), served.Load())
	}
}

func TestStreamTransportRejectsHTTPS(t *testing.T) {
	t.Parallel()
	_, err := (&http.Client{Transport: newStreamTransport(1)}).Get("https://127.0.0.1:1/")
	if err == nil || !strings.Contains(err.Error(), "plain http only") {
		t.Errorf("https: error %v, want one saying plain http only", err)
	}
}
