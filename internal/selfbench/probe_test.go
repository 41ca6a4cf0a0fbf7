package selfbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/mockprovider"
)

// probeRun starts a probe client in process and plays req against it.
func probeRun(t *testing.T, req probeRequest) (probeResult, int, string) {
	t.Helper()
	res, status, body, err := probePost(req)
	if err != nil {
		t.Fatal(err)
	}
	return res, status, body
}

// probePost is probeRun without the test: safe on any goroutine.
func probePost(req probeRequest) (probeResult, int, string, error) {
	probe := httptest.NewServer(NewProbeClient().Handler)
	defer probe.Close()
	body, err := json.Marshal(req)
	if err != nil {
		return probeResult{}, 0, "", err
	}
	resp, err := http.Post(probe.URL+"/run", "application/json", bytes.NewReader(body))
	if err != nil {
		return probeResult{}, 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var res probeResult
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &res); err != nil {
			return res, resp.StatusCode, string(b), fmt.Errorf("result %q: %w", b, err)
		}
	}
	return res, resp.StatusCode, string(b), nil
}

// TestProbeMeasuresTheServersLateness: the probe times each first token against the schedule
// and subtracts the TTFT it is told. Against a paced server whose first chunk comes 50 ms after
// each request (never earlier: each start is at or after its intended time), a probe told TTFT
// 0 counts the whole 50 ms as late, one told 25 ms at least the 25 ms it was not told of, and
// one told 10 s more than the server takes measures nothing late unless the machine held a first
// token back for 10 s. None of this depends on how busy the machine is; how small the probe's
// error is on this machine is no test's business: `streambench bench fidelity` reports it as
// the floor.
func TestProbeMeasuresTheServersLateness(t *testing.T) {
	t.Parallel()
	const ttft = 50 * time.Millisecond
	paced, err := NewPacedServer("one two three", ttft, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(paced.Handler)
	defer srv.Close()
	const rate, streams = 50, 20
	told := []time.Duration{0, ttft / 2, ttft + 10*time.Second}
	results := make([]probeResult, len(told))
	began := time.Now()
	var wg sync.WaitGroup
	for i, tt := range told {
		wg.Go(func() {
			req := probeRequest{Target: srv.URL, Wire: "sim-chat", Rate: rate, Duration: streams * time.Second / rate, TTFT: tt}
			res, status, body, err := probePost(req)
			if err != nil || status != http.StatusOK || res.Streams != streams || res.Failed != 0 || res.P99 > res.Max {
				t.Errorf("told TTFT %s: %v, status %d %s, result %+v: want %d streams, none failed", tt, err, status, body, res, streams)
			}
			results[i] = res
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	if r := results[0]; r.P50 < ttft.Microseconds() {
		t.Errorf("told TTFT 0: p50 %d µs, want ≥ %d (the server's whole TTFT counts as late)", r.P50, ttft.Microseconds())
	}
	if r := results[1]; r.P50 < (ttft - told[1]).Microseconds() {
		t.Errorf("told TTFT %s: p50 %d µs, want ≥ %d (the TTFT it was not told of counts as late)", told[1], r.P50, (ttft - told[1]).Microseconds())
	}
	if r := results[2]; r.P50 != 0 {
		t.Errorf("told TTFT %s: p50 %d µs, want 0 (it subtracts the TTFT it is told)", told[2], r.P50)
	}
	// The timer floor: each of probeSleepers sleepers sleeps the scripted TTFT over and over
	// (10 ms when told 0), so it wakes at most once a sleep.
	for i, res := range results {
		d := told[i]
		if d == 0 {
			d = 10 * time.Millisecond
		}
		most := int64(probeSleepers) * (int64(elapsed/d) + 1)
		if res.Sleeps > most || res.SleepP99 < res.SleepP50 {
			t.Errorf("told TTFT %s: timer floor of %d sleeps, late by p50 %d µs, p99 %d µs: want at most %d sleeps of %s in %s",
				told[i], res.Sleeps, res.SleepP50, res.SleepP99, most, d, elapsed)
		}
	}
	if results[0].Sleeps == 0 {
		t.Errorf("told TTFT 0: no sleep of 10 ms in %s: want the timer floor sampled", elapsed)
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
	rep.add("x: TTFT p99", 1, "ms")
	addFloor(rep, "x", "x: TTFT ", res, 1)
	if y := figure(t, rep, "x: TTFT p99").Yardstick; y.Name != "x: floor p99 (probe client)" || y.Value == nil || y.Unit != "ms" {
		t.Errorf("the generator's p99 has yardstick %+v, want the probe's floor p99", y)
	}
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
	probe := httptest.NewServer(NewProbeClient().Handler)
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
