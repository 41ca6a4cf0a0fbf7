package selfbench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockprovider"
)

// probeRun starts a probe client in process and plays req against it.
func probeRun(t *testing.T, req probeRequest) (probeResult, int, string) {
	t.Helper()
	probe := httptest.NewServer(NewProbeClient().srv.Handler)
	defer probe.Close()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(probe.URL+"/run", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var res probeResult
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("result %q: %v", b, err)
		}
	}
	return res, resp.StatusCode, string(b)
}

// TestProbeMeasuresTheServersLateness: against a paced server whose first chunk comes 20 ms
// after each request, a probe told the TTFT is 20 ms measures an error well under that, and
// one told 0 measures at least the 20 ms: it times the first token against the schedule.
func TestProbeMeasuresTheServersLateness(t *testing.T) {
	t.Parallel()
	paced, err := NewPacedServer("one two three", 20*time.Millisecond, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(paced.srv.Handler)
	defer srv.Close()
	req := probeRequest{Target: srv.URL, Wire: "sim-chat", Rate: 50, Duration: 400 * time.Millisecond, TTFT: 20 * time.Millisecond}
	res, status, body := probeRun(t, req)
	if status != http.StatusOK || res.Streams != 20 || res.Failed != 0 {
		t.Fatalf("status %d %s, result %+v: want 20 streams, none failed", status, body, res)
	}
	if res.P50 >= 15_000 || res.P99 > res.Max {
		t.Errorf("told the scripted TTFT: p50 %d µs, p99 %d µs, max %d µs: want an error well under the 20 ms TTFT", res.P50, res.P99, res.Max)
	}
	// The timer floor: 20 sleepers of 20 ms over 0.4 s wake ~400 times, a few ms late at most.
	if res.Sleeps < 100 || res.SleepP50 >= 15_000 || res.SleepP99 < res.SleepP50 {
		t.Errorf("timer floor: %d sleeps, late by p50 %d µs, p99 %d µs: want ≥ 100 sleeps, well under 15 ms", res.Sleeps, res.SleepP50, res.SleepP99)
	}
	req.TTFT = 0
	res, _, _ = probeRun(t, req)
	if res.P50 < 20_000 {
		t.Errorf("told TTFT 0: p50 %d µs, want ≥ 20,000 (the server's whole TTFT counts as late)", res.P50)
	}
}

// TestProbeSpeaksBothMockWires: the probe's hand-written requests select the fidelity
// scenario on each mock wire, and it finds the first token frame of each.
func TestProbeSpeaksBothMockWires(t *testing.T) {
	t.Parallel()
	p, err := newFidelityParams(Options{TTFT: 10 * time.Millisecond, StreamLength: 60 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(p.dir)
	mock, err := mockprovider.New(mockprovider.Options{Library: p.lib, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mock)
	defer srv.Close()
	for _, wire := range FidelityWires() {
		res, status, body := probeRun(t, probeRequest{Target: srv.URL, Wire: wire, Rate: 40, Duration: 200 * time.Millisecond, TTFT: p.ttft})
		if status != http.StatusOK || res.Streams != 8 || res.Failed != 0 || res.Max == 0 {
			t.Errorf("wire %s: status %d %s, result %+v: want 8 streams timed, none failed", wire, status, body, res)
		}
	}
}

// TestProbeReportsFailedStreams: a server that refuses every stream fails every probe, and
// the result says how.
func TestProbeReportsFailedStreams(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	res, status, body := probeRun(t, probeRequest{Target: srv.URL, Wire: "openai", Rate: 50, Duration: 100 * time.Millisecond})
	if status != http.StatusOK || res.Streams != 5 || res.Failed != 5 || !strings.Contains(res.FirstFailure, "503") {
		t.Errorf("status %d %s, result %+v: want 5 streams, all failed with the 503 named", status, body, res)
	}
	rep := &Report{}
	addFloor(rep, "x", res, 1)
	if len(rep.Failures) != 2 {
		t.Errorf("report failures %q: want the failed streams and the empty floor both named", rep.Failures)
	}
}

// TestProbeRefusesBadRequests: each bad probe request is a 400 naming what was wrong.
func TestProbeRefusesBadRequests(t *testing.T) {
	t.Parallel()
	good := probeRequest{Target: "http://127.0.0.1:1", Wire: "openai", Rate: 10, Duration: time.Second}
	for name, tc := range map[string]struct {
		mutate func(*probeRequest)
		want   string
	}{
		"wire":     {func(r *probeRequest) { r.Wire = "grpc" }, `wire "grpc"`},
		"target":   {func(r *probeRequest) { r.Target = "ftp://x" }, `target "ftp://x"`},
		"rate":     {func(r *probeRequest) { r.Rate = 0 }, "rate 0/s"},
		"duration": {func(r *probeRequest) { r.Duration = 0 }, "duration 0s"},
	} {
		req := good
		tc.mutate(&req)
		_, status, body := probeRun(t, req)
		if status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("%s: status %d %q: want 400 naming %q", name, status, body, tc.want)
		}
	}
	probe := httptest.NewServer(NewProbeClient().srv.Handler)
	defer probe.Close()
	resp, err := http.Post(probe.URL+"/run", "application/json", strings.NewReader(`{"target":"http://x","speed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `unknown field "speed"`) {
		t.Errorf("unknown field: status %d %q: want 400 naming it", resp.StatusCode, b)
	}
}
