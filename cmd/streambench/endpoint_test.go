package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// endpointMock is the mock behind a recorder of what it was sent: each request's path,
// Authorization and body.
type endpointMock struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []sentRequest
}

type sentRequest struct {
	path, auth string
	body       []byte
}

func newEndpointMock(t *testing.T, fault mockprovider.Fault) *endpointMock {
	t.Helper()
	mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 1, Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	m := &endpointMock{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.reqs = append(m.reqs, sentRequest{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

// TestLoadEndpointWorkload is issue 24's acceptance: `load` against an OpenAI-compatible base
// URL ending in /v1, with a model, an API key and synthetic lengths, sends what an application
// sends (no directive, no tools, no reasoning fields; max_tokens; the key as a bearer token)
// to /v1/chat/completions, passes, and reports TTFT, ITL, TPOT, E2E and throughput; the key is
// in no output line and no results file.
func TestLoadEndpointWorkload(t *testing.T) {
	t.Parallel()
	const key = "sk-test-9f8e7d6c5b4a3210"
	m := newEndpointMock(t, "")
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "load", "--target", m.URL+"/v1", "--dialect", "openai-chat", "--model", "m",
		"--api-key", key, "--input-tokens", "256", "--output-tokens", "64", "--clients", "8", "--duration", "5s",
		"--runtime-metrics", "-", "--run-id", "ep", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	m.mu.Lock()
	reqs := m.reqs
	m.mu.Unlock()
	streams := 0
	for _, r := range reqs {
		if r.path != "/v1/chat/completions" {
			t.Errorf("request to %s, want /v1/chat/completions", r.path)
			continue
		}
		streams++
		if r.auth != "Bearer "+key {
			t.Errorf("Authorization %q, want the key as a bearer token", r.auth)
		}
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("request body: %v: %s", err, r.body)
		}
		for _, absent := range []string{"tools", "reasoning_effort", "reasoning"} {
			if _, ok := body[absent]; ok {
				t.Errorf("the request has %q: %s", absent, r.body)
			}
		}
		if body["model"] != "m" || body["max_tokens"] != float64(64) || bytes.Contains(r.body, []byte("[[streambench")) {
			t.Errorf("want model m, max_tokens 64 and no directive: %s", r.body)
		}
		var tc scenarios.TokenCounter
		msgs, _ := body["messages"].([]any)
		if len(msgs) != 1 {
			t.Fatalf("messages: %s", r.body)
		}
		if n := tc.Text(msgs[0].(map[string]any)["content"].(string)); n != 256 {
			t.Errorf("the prompt has %d tokens, want 256", n)
		}
	}
	if streams < 16 {
		t.Errorf("%d streams, want at least 16 (8 clients for 5 s of ~2.3 s sessions)", streams)
	}
	for _, want := range []string{"verdict: PASS", "ttft p50", "itl p50", "tpot p50", "e2e (duration) p50", " p90 ", " p95 ", " p99 ", "tokens/s", "requests/s"} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q:\n%s", want, output)
		}
	}
	summary, err := os.ReadFile(filepath.Join(out, "ep", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, metric := range []string{`"ttft"`, `"itl"`, `"tpot"`, `"duration"`, `"stream_tokens_per_s"`, `"p90_us"`, `"p95_us"`, `"p99_us"`, `"requests_per_s"`} {
		if !bytes.Contains(summary, []byte(metric)) {
			t.Errorf("summary.json has no %s", metric)
		}
	}
	assertSecretNowhere(t, key, output, out)
}

// TestLoadNoUsageServerEstimatesTokens: a server that sends no usage chunk (TGI, some
// gateways) passes with --no-ground-truth, with a warning, its tokens marked estimated in the
// output and summary.json; the model is the only one GET /v1/models lists.
func TestLoadNoUsageServerEstimatesTokens(t *testing.T) {
	t.Parallel()
	m := newEndpointMock(t, mockprovider.FaultOpenAINoUsage)
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "load", "--target", m.URL, "--dialect", "openai-chat", "--no-ground-truth",
		"--output-tokens", "16", "--input-tokens", "uniform:8-32", "--clients", "2", "--sessions", "6",
		"--runtime-metrics", "-", "--run-id", "nu", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	for _, want := range []string{"verdict: PASS", "model: " + mockprovider.Model, "no usage report", "tokens: 96 output", "(estimated"} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q:\n%s", want, output)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "nu", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tokens struct {
			OutputTokens      int64 `json:"output_tokens"`
			Estimated         bool  `json:"estimated"`
			EstimatedSessions int64 `json:"estimated_sessions"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if !s.Tokens.Estimated || s.Tokens.EstimatedSessions != 6 || s.Tokens.OutputTokens != 96 {
		t.Errorf("summary.json tokens %+v: want 96 output tokens, estimated, from 6 sessions", s.Tokens)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.reqs {
		if r.path == "/v1/chat/completions" && !bytes.Contains(r.body, []byte(`"model":"`+mockprovider.Model+`"`)) {
			t.Errorf("the request does not ask for the listed model: %s", r.body)
		}
	}
}
