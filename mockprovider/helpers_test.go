package mockprovider

import (
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/scenarios"
)

// newTestMock starts a mock on its own httptest server (HTTP/1.1 and h2c) and closes it when
// the test ends. opts.Library defaults to the embedded library.
func newTestMock(t testing.TB, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	if opts.Library == nil {
		opts.Library = scenarios.Embedded()
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.Protocols = Protocols()
	ts.Start()
	t.Cleanup(ts.Close)
	return srv, ts
}

// h2cClient returns a client that speaks only cleartext HTTP/2 (prior knowledge).
func h2cClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{Protocols: &http.Protocols{}}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// openaiBody is a minimal chat completions request whose user message is text.
func openaiBody(text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":          "mock-model",
		"stream":         stream,
		"stream_options": map[string]any{"include_usage": true},
		"messages":       []map[string]any{{"role": "user", "content": text}},
	})
	return string(b)
}

// anthropicBody is a minimal messages request whose user message is text.
func anthropicBody(text string, stream bool) string {
	b, _ := json.Marshal(map[string]any{
		"model":      "mock-model",
		"max_tokens": 1024,
		"stream":     stream,
		"messages":   []map[string]any{{"role": "user", "content": text}},
	})
	return string(b)
}

// post sends a JSON body to url with headers and returns the response (the caller closes it).
func post(t testing.TB, client *http.Client, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	h := map[string]string{"Content-Type": "application/json"}
	maps.Copy(h, headers)
	return send(t, client, http.MethodPost, url, body, h)
}

// drain reads resp's whole body and closes it.
func drain(resp *http.Response) []byte {
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return b
}

// send sends body to url with headers and returns the response (the caller closes it).
func send(t testing.TB, client *http.Client, method, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

// connCountingMock starts a mock on srv.HTTPServer() and counts the connections it accepts.
func connCountingMock(t testing.TB, opts Options) (*Server, *httptest.Server, *atomic.Int64) {
	t.Helper()
	opts.Library = scenarios.Embedded()
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	conns := new(atomic.Int64)
	ts := httptest.NewUnstartedServer(srv)
	ts.Config = srv.HTTPServer()
	ts.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	return srv, ts, conns
}

// directive renders a scenario directive.
func directive(scenario string, seed uint64, session string) string {
	return scenarios.Directive{Scenario: scenario, Seed: seed, Session: session}.String()
}

// onlySession returns the single record of session, failing the test otherwise.
func onlySession(t testing.TB, srv *Server, session string) mockrecords.Record {
	t.Helper()
	recs := srv.Sessions(session)
	if len(recs) != 1 {
		t.Fatalf("Sessions(%q): got %d records, want 1: %+v", session, len(recs), recs)
	}
	return recs[0]
}
