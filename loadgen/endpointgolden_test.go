package loadgen

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// The endpoint golden run: the mock answers each request of 12 output tokens in frames of 3
// tokens, the first token 100 ms after the request and every later one 10 ms after the
// previous; 2 clients play 6 sessions back to back, in virtual time.
const (
	goldenTTFT        = 100 * time.Millisecond
	goldenITL         = 10 * time.Millisecond
	goldenPerFrame    = 3
	goldenOutput      = 12
	goldenClients     = 2
	goldenSessions    = 6
	goldenGoodputTPOT = "tpot<9ms"
)

// TestEndpointMetricsGolden pins every token metric of an endpoint run against the real mock
// (openai-chat, usage reported, no ground truth: each chunk carries 3 tokens) to values derived
// from the script the mock plays, not copied from a run:
//
//	the script: tokens at 100, 110, …, 210 ms; a frame when its third token is produced, so
//	frames at 120, 150, 180 and 210 ms; the stream ends with the last frame.
//	ttft   = the first frame                         = 120 ms
//	tpot   = (last frame − first frame) / (12 − 1)   = 90/11 = 8.18 ms
//	itl    = tpot, once per token after the first    = 11 values of 8.18 ms a session
//	         (without ground truth per-frame counts are unknown; AIPerf's per-request ITL)
//	e2e    = request → end of stream                 = 210 ms
//	stream_tokens_per_s = 12 / 0.210 s               = 57.14 tokens/s
//	wall   = 3 rounds of 2 sessions back to back     = 630 ms
//	requests/s = 6 / 0.630 = 9.52; output tokens/s = 72 / 0.630 = 114.29
//	goodput (ttft<150ms, tpot<9ms): every session = 6 of 6, 9.52/s
//
// and the same run judged by tpot<8ms has no goodput. The golden file then pins the whole
// summary of those metrics (refresh with -update after checking the derivation still holds).
func TestEndpointMetricsGolden(t *testing.T) {
	t.Parallel()
	pa, ok := scenarios.Embedded().Get("plain-answer")
	if !ok {
		t.Fatal("no plain-answer scenario")
	}
	paced := *pa // the mock paces an endpoint request by plain-answer's timing
	paced.Timing = scenarios.Timing{
		TimeToFirstToken: scenarios.Dist{Kind: scenarios.DistConstant, Value: goldenTTFT},
		InterToken:       scenarios.Dist{Kind: scenarios.DistConstant, Value: goldenITL},
		TokensPerFrame:   goldenPerFrame,
	}
	lib := scenarios.Embedded().With(&paced)

	// What the script says, read from the script itself.
	script := scenarios.Endpoint(paced.Timing, goldenOutput).Render(1)
	steps := script.Turns[0].Steps
	tokens := 0
	for _, st := range steps {
		tokens += st.Tokens
	}
	first, last := steps[0].At, steps[len(steps)-1].At
	if tokens != goldenOutput || len(steps) != goldenOutput/goldenPerFrame || first != goldenTTFT+2*goldenITL || last != goldenTTFT+11*goldenITL {
		t.Fatalf("the script: %d tokens in %d frames at %v..%v; want 12 in 4 at 120..210 ms", tokens, len(steps), first, last)
	}
	tpot := (last - first) / time.Duration(tokens-1)
	rounds := goldenSessions / goldenClients
	wall := time.Duration(rounds) * last
	want := map[measure.Metric]struct {
		count int64
		value time.Duration
	}{
		measure.TimeToFirstToken:   {goldenSessions, first},
		measure.TimeToFirstOutput:  {goldenSessions, first},
		measure.TimePerOutputToken: {goldenSessions, tpot},
		measure.InterTokenLatency:  {goldenSessions * int64(tokens-1), tpot},
		measure.StreamDuration:     {goldenSessions, last},
	}
	run := runEndpointGolden(t, lib, "ttft<150ms", goldenGoodputTPOT)
	s := run.Summary
	if s.Counters.SessionsOK != goldenSessions || s.TotalViolations() != 0 {
		t.Fatalf("ok %d of %d, violations %v", s.Counters.SessionsOK, goldenSessions, s.Violations)
	}
	// The histograms keep 3 significant digits: a value reads back within 0.1%.
	near := func(v int64, want time.Duration) bool {
		w := want.Microseconds()
		return v >= w-w/1000-1 && v <= w+w/1000+1
	}
	var got tokenGolden
	for _, m := range s.Metrics {
		w, ok := want[m.Metric]
		if m.Metric == measure.StreamTokensPerSecond {
			ok = true
			rate := float64(tokens) / last.Seconds() * measure.RateScale // milli-tokens/s
			if m.Count != goldenSessions || float64(m.Min) < rate*0.999 || float64(m.Max) > rate*1.001 {
				t.Errorf("%s: %d values in %d..%d milli-tokens/s, want %d of %.0f", m.Metric, m.Count, m.Min, m.Max, goldenSessions, rate)
			}
		} else if ok && (m.Count != w.count || !near(m.Min, w.value) || !near(m.Max, w.value)) {
			t.Errorf("%s: %d values in %d..%d µs, want %d of %d µs", m.Metric, m.Count, m.Min, m.Max, w.count, w.value.Microseconds())
		}
		if ok {
			got.Metrics = append(got.Metrics, m)
			delete(want, m.Metric)
		}
	}
	for m := range want {
		t.Errorf("the run recorded no %s", m)
	}
	tk := s.Tokens
	if tk == nil || tk.Estimated || tk.OutputTokens != goldenSessions*goldenOutput {
		t.Fatalf("tokens %+v, want %d output tokens from the usage reports", tk, goldenSessions*goldenOutput)
	}
	closeTo := func(v, want float64) bool { return v > want*0.999 && v < want*1.001 }
	if !closeTo(tk.RequestsPerSecond, goldenSessions/wall.Seconds()) || !closeTo(tk.OutputTokensPerSecond, goldenSessions*goldenOutput/wall.Seconds()) {
		t.Errorf("requests/s %v, output tokens/s %v; want %v and %v (over %v of wall time)", tk.RequestsPerSecond, tk.OutputTokensPerSecond,
			goldenSessions/wall.Seconds(), goldenSessions*goldenOutput/wall.Seconds(), wall)
	}
	if g := tk.Goodput; g.Sessions != goldenSessions || g.Judged != goldenSessions || !closeTo(g.PerSecond, goldenSessions/wall.Seconds()) {
		t.Errorf("goodput %+v, want %d of %d, %v/s", g, goldenSessions, goldenSessions, goldenSessions/wall.Seconds())
	}
	if g := runEndpointGolden(t, lib, "tpot<8ms").Summary.Tokens.Goodput; g.Sessions != 0 || g.Judged != goldenSessions {
		t.Errorf("goodput under tpot<8ms %+v: want none of %d (tpot is %v)", g, goldenSessions, tpot)
	}
	got.Tokens = tk
	checkGolden(t, "endpoint-golden.json", got)
}

// runEndpointGolden plays the golden endpoint workload against the mock serving lib, in
// virtual time, with the given goodput SLOs.
func runEndpointGolden(t *testing.T, lib *scenarios.Library, sloExprs ...string) *measure.Run {
	t.Helper()
	slos := parseSessionSLOs(t, sloExprs)
	input, _ := endpoint.ParseTokenDist("8")
	output, _ := endpoint.ParseTokenDist("12")
	mix, err := EndpointMix("openai-chat", "m", 1)
	if err != nil {
		t.Fatal(err)
	}
	var run *measure.Run
	synctest.Test(t, func(t *testing.T) {
		mock, err := mockprovider.New(mockprovider.Options{Library: lib, TimeScale: 1, Clock: hrtimer.NewPortable()})
		if err != nil {
			t.Fatal(err)
		}
		run = runLoad(t, Config{
			Clock: hrtimer.NewPortable(), Target: "http://in-memory", Transport: pipeTransport{mock},
			Mix: mix, MixName: "endpoint", RunID: "endpoint-golden", Clients: goldenClients, Sessions: goldenSessions,
			Endpoint: &endpoint.Workload{Input: input, Output: output}, NoGroundTruth: true, GoodputSLOs: slos,
			NoLeakCheck: true, RuntimeMetricsURL: "-",
		})
	})
	return run
}
