package loadgen

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/verdict"
)

// pipeTransport serves requests from an http.Handler through an in-memory pipe, streaming:
// each Flush reaches the client when it happens, so frame timing survives, and with no sockets
// a whole run lives in a synctest bubble where time is virtual and every latency exact.
type pipeTransport struct{ h http.Handler }

func (t pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			w.start(http.StatusOK)
			pw.Close()
		}()
		t.h.ServeHTTP(w, req)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	go func() {
		<-req.Context().Done()
		pr.CloseWithError(req.Context().Err()) // the client left: the handler's writes fail
	}()
	return &http.Response{StatusCode: w.status, Header: w.header, Body: pr, Request: req, ProtoMajor: 1, ProtoMinor: 1}, nil
}

// pipeWriter is the handler's side of a pipeTransport response.
type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	once   sync.Once
	status int
	ready  chan struct{}
}

func (w *pipeWriter) Header() http.Header { return w.header }
func (w *pipeWriter) start(status int) {
	w.once.Do(func() { w.status = status; close(w.ready) })
}
func (w *pipeWriter) WriteHeader(status int) { w.start(status) }
func (w *pipeWriter) Write(b []byte) (int, error) {
	w.start(http.StatusOK)
	return w.pw.Write(b)
}
func (w *pipeWriter) Flush() { w.start(http.StatusOK) }

// scriptedSimChat is an opted-in sim-chat runtime that plays each step of the script at its
// scripted time, one frame per step: thinking frames, then answer chunks, then the final.
// With tokensPerFrame > 1 every frame carries several tokens.
func scriptedSimChat(t *testing.T, lib *scenarios.Library) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		script, ok := requestScript(w, r, lib)
		if !ok {
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Sim-Stream-Protocol", "agent-events-v1")
		quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		send := func(payload string) {
			_, _ = io.WriteString(w, "data: "+payload+"\n\n")
			w.(http.Flusher).Flush()
		}
		w.(http.Flusher).Flush()
		var text string
		for _, st := range script.Turns[0].Steps {
			time.Sleep(time.Until(start.Add(st.At)))
			switch st.Kind {
			case scenarios.StepThinking:
				send(`{"blockId":"b1","event":"thinking","data":` + quote(st.Text) + `}`)
			case scenarios.StepText:
				send(`{"blockId":"b1","chunk":` + quote(st.Text) + `}`)
				text += st.Text
			}
		}
		send(`{"event":"final","data":{"success":true,"output":{"content":` + quote(text) + `}}}`)
		send(`"[DONE]"`)
	})
}

// tokenGolden is what the golden file pins: the token metrics' statistics and the aggregate.
type tokenGolden struct {
	Metrics []measure.MetricSummary
	Tokens  *measure.TokenSummary
}

// TestTokenMetricsGolden runs a seeded load in virtual time against a runtime that sends three
// tokens per frame at fixed times (ttft 100 ms, 10 ms per token: thinking frames at 120 and
// 150 ms, answer frames at 180..270 ms), and pins the token metrics: ttft 120 ms, ttfo 180 ms,
// itl 10 ms (15 values: 5 later frames × 3 tokens, each gap 30 ms / 3), tpot 150 ms / 17,
// 18 tokens per session, 66.7 tokens/s per stream, and goodput 6 of 6.
func TestTokenMetricsGolden(t *testing.T) {
	t.Parallel()
	lib, mix := tokensMix(t)
	run := runTokens(t, lib, mix, "ttft<150ms", "tpot<=9ms", "stream_tokens_per_s>=50")
	s := run.Summary
	if s.Counters.SessionsOK != 6 || s.TotalViolations() != 0 {
		t.Fatalf("ok %d of 6, violations %v", s.Counters.SessionsOK, s.Violations)
	}
	var got tokenGolden
	for _, m := range s.Metrics {
		switch m.Metric {
		case measure.TimeToFirstToken, measure.TimeToFirstOutput, measure.InterTokenLatency,
			measure.TimePerOutputToken, measure.StreamTokensPerSecond, measure.FirstChunk:
			got.Metrics = append(got.Metrics, m)
		}
	}
	got.Tokens = s.Tokens
	// The values the scenario implies, checked before the golden file so a refresh cannot
	// pin a wrong number.
	want := map[measure.Metric]struct{ count, p50 int64 }{
		measure.TimeToFirstToken:   {6, 120_000},
		measure.TimeToFirstOutput:  {6, 180_000},
		measure.FirstChunk:         {6, 180_000},
		measure.InterTokenLatency:  {6 * 15, 10_000},
		measure.TimePerOutputToken: {6, 150_000 / 17}, // 8823.5 µs, truncated like time.Duration
	}
	// The histograms keep 3 significant digits: a value reads back within 0.1%.
	near := func(v, want int64) bool { return v >= want-want/1000 && v <= want+want/1000 }
	for _, m := range got.Metrics {
		if w, ok := want[m.Metric]; ok && (m.Count != w.count || !near(m.Min, w.p50) || !near(m.Max, w.p50)) {
			t.Errorf("%s: count %d, min %d max %d µs; want %d values of %d µs", m.Metric, m.Count, m.Min, m.Max, w.count, w.p50)
		}
	}
	if s.Tokens == nil || s.Tokens.OutputTokens != 6*18 || s.Counters.OutputTokens != 6*18 {
		t.Errorf("output tokens %+v, want %d", s.Tokens, 6*18)
	}
	if g := s.Tokens.Goodput; g.Sessions != 6 || g.Judged != 6 || g.Share != 1 {
		t.Errorf("goodput %+v, want 6 of 6", g)
	}
	// The saved run keeps them: summary.json's tokens and every histogram in the hlog.
	back := writeAndRead(t, run)
	if back.Summary.Tokens == nil || back.Summary.Tokens.OutputTokens != s.Tokens.OutputTokens || len(back.Summary.Tokens.Goodput.SLOs) != 3 {
		t.Errorf("summary.json tokens read back as %+v, want %+v", back.Summary.Tokens, s.Tokens)
	}
	for _, m := range got.Metrics {
		if n := back.Histograms.Count(m.Key); n != m.Count {
			t.Errorf("hlog %s: %d values read back, %d recorded", m.Key, n, m.Count)
		}
	}
	checkGolden(t, "golden.json", got)
}

// checkGolden compares got, as indented JSON, with testdata/tokens/name (-update writes it).
func checkGolden(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "tokens", name), append(b, '\n'))
}

// TestGoodputCountsSessionsMeetingEverySLO: the same run judged by SLOs that hold, one that
// does not (every session's tpot is 8.8 ms), and one on a metric the sessions never reach.
func TestGoodputCountsSessionsMeetingEverySLO(t *testing.T) {
	t.Parallel()
	lib, mix := tokensMix(t)
	for _, tc := range []struct {
		name string
		slos []string
		good int64
	}{
		// No SLO: goodput is the successful sessions.
		{"none", nil, 6},
		// Every SLO holds on every session.
		{"all met", []string{"ttft<=120100us", "ttfo<200ms", "tpot<9ms"}, 6},
		// tpot is 8.8 ms: one unmet SLO and no session is good.
		{"one missed", []string{"ttft<150ms", "tpot<8ms"}, 0},
		// 66.7 tokens/s per stream is under 100.
		{"rate missed", []string{"stream_tokens_per_s>100"}, 0},
		// The mix's own goodputSLOs apply with the flags': its tpot<8ms fails every session.
		{"mix SLO", []string{"ttft<150ms"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := mix
			want := len(tc.slos)
			if tc.name == "mix SLO" {
				withSLO := *mix
				withSLO.GoodputSLOs = []string{"tpot<8ms"}
				m, want = &withSLO, want+1
			}
			g := runTokens(t, lib, m, tc.slos...).Summary.Tokens.Goodput
			if g.Sessions != tc.good || g.Judged != 6 || len(g.SLOs) != want {
				t.Errorf("goodput %+v, want %d of 6 sessions under %v", g, tc.good, tc.slos)
			}
			if g.PerSecond <= 0 && tc.good > 0 {
				t.Errorf("goodput per second %v, want > 0", g.PerSecond)
			}
		})
	}
}

// tokensMix is the golden test's library and mix: batched-thinking through opted-in sim-chat
// clients that see thinking.
func tokensMix(t *testing.T) (*scenarios.Library, *Mix) {
	t.Helper()
	lib, err := scenarios.LoadDir("testdata/tokens")
	if err != nil {
		t.Fatal(err)
	}
	mix, err := NewMix("tokens", 3, map[string]float64{"batched-thinking": 1}, []Profile{
		{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1,
			Targets: []Target{{Slug: "tok", Options: protocol.Options{"includeThinking": true}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return lib, mix
}

// runTokens runs 6 sessions of tokensMix in virtual time with the given goodput SLOs.
func runTokens(t *testing.T, lib *scenarios.Library, mix *Mix, sloExprs ...string) *measure.Run {
	t.Helper()
	slos := parseSessionSLOs(t, sloExprs)
	var run *measure.Run
	var err error
	synctest.Test(t, func(t *testing.T) {
		run, err = Run(context.Background(), withDialects(Config{
			Clock: hrtimer.NewPortable(), Library: lib,
			Target: "http://in-memory", Transport: pipeTransport{scriptedSimChat(t, lib)},
			Mix: mix, RunID: "tokens", Clients: 2, Sessions: 6, GoodputSLOs: slos,
			NoLeakCheck: true, RuntimeMetricsURL: "-",
		}))
	})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// parseSessionSLOs parses goodput SLOs, failing the test on a bad one.
func parseSessionSLOs(t *testing.T, exprs []string) []verdict.SessionSLO {
	t.Helper()
	var slos []verdict.SessionSLO
	for _, e := range exprs {
		s, err := verdict.ParseSessionSLO(e)
		if err != nil {
			t.Fatal(err)
		}
		slos = append(slos, s)
	}
	return slos
}

// writeAndRead writes run into a temporary directory and reads it back.
func writeAndRead(t *testing.T, run *measure.Run) *measure.Run {
	t.Helper()
	dir := t.TempDir()
	if err := measure.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	back, err := measure.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
