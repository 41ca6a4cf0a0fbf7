package loadgen

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// stallMode is how stallingSimChat ends its stream.
type stallMode int

const (
	stallMidAnswer     stallMode = iota // half the answer, then nothing: no terminal ever
	stallAfterTerminal                  // the whole stream, [DONE] included, then the connection stays open
)

// stallingSimChat is an opted-in sim-chat server that sends valid frames and then stalls
// until the client goes away, as a runtime retrying its provider for minutes does.
func stallingSimChat(t *testing.T, mode stallMode) http.Handler {
	lib := scenarios.Embedded()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d, ok, err := scenarios.ParseDirective(body.Input)
		sc, known := lib.Get(d.Scenario)
		if !ok || err != nil || !known {
			http.Error(w, "bad directive in "+body.Input, http.StatusBadRequest)
			return
		}
		final := sc.Render(d.Seed).Expected().FinalText()
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Sim-Stream-Protocol", "agent-events-v1")
		quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		send := func(payload string) {
			_, _ = w.Write([]byte("data: " + payload + "\n\n"))
			w.(http.Flusher).Flush()
		}
		switch mode {
		case stallMidAnswer:
			send(`{"blockId":"b1","chunk":` + quote(final[:len(final)/2]) + `}`)
		case stallAfterTerminal:
			send(`{"blockId":"b1","chunk":` + quote(final) + `}`)
			send(`{"event":"final","data":{"success":true,"output":{"content":` + quote(final) + `}}}`)
			send(`"[DONE]"`)
		}
		<-r.Context().Done()
	})
}

// stallMix plays plain-answer (ASCII: half the text is a valid prefix) through opted-in sim-chat.
func stallMix(t *testing.T, extra string) *Mix {
	t.Helper()
	m, err := ParseMix("stall mix", []byte(`
name: stall
seed: 3
scenarios: {plain-answer: 1}
profiles:
  - {name: opted-in, dialect: sim-chat, options: {optedIn: true}, weight: 1, targets: [{slug: stall}]}
`+extra))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// outcomes collects OnSessionEnd outcomes.
type outcomes struct {
	mu  sync.Mutex
	got []Outcome
}

func (o *outcomes) add(e SessionEnd) {
	o.mu.Lock()
	o.got = append(o.got, e.Outcome)
	o.mu.Unlock()
}

// TestHungStreamIsFailed: a stream with no terminal when the grace period or the stream
// timeout ends is a failed session, R-terminal naming the limit, counted as hung, and fails
// the run; one whose terminal came before the connection was held open is not hung.
func TestHungStreamIsFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		mode          stallMode
		grace, stream time.Duration
		wantHung      bool
		wantDetail    string // in the R-terminal sample's detail
	}{
		// the run ends, the grace period runs out, the streams are still open without a terminal
		{"grace", stallMidAnswer, time.Second, time.Minute, true, "no terminal within the 1s grace period"},
		// each stream runs into its own timeout long before the grace period ends
		{"stream timeout", stallMidAnswer, time.Minute, time.Second, true, "no terminal within the 1s stream timeout"},
		// the terminal and [DONE] came; the runtime only failed to close: judged as delivered
		{"terminal then held open", stallAfterTerminal, time.Second, time.Minute, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(stallingSimChat(t, tc.mode))
			defer srv.Close()
			var ends outcomes
			run, err := Run(context.Background(), Config{
				Target: srv.URL, Mix: stallMix(t, ""), MixName: "stall", Rate: 50, Sessions: 2,
				Grace: tc.grace, StreamTimeout: tc.stream, NoLeakCheck: true, RuntimeMetricsURL: "-",
				OnSessionEnd: ends.add, SamplesPerRule: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			s := run.Summary
			c := s.Counters
			if !tc.wantHung {
				if c.SessionsHung != 0 || c.SessionsOK != 2 || !s.Verdict.Pass {
					t.Errorf("counters %+v, verdict %+v: want 2 ok sessions, none hung, a pass", c, s.Verdict)
				}
				if !slices.Equal(ends.got, []Outcome{OutcomeOK, OutcomeOK}) {
					t.Errorf("outcomes %v, want ok twice", ends.got)
				}
				return
			}
			if c.SessionsHung != 2 || c.SessionsFailed != 2 || c.SessionsAborted != 0 || c.SessionsCut != 0 || c.TransportErrors != 0 {
				t.Errorf("counters %+v: want 2 hung among 2 failed, none aborted, cut or transport errors", c)
			}
			if !slices.Equal(ends.got, []Outcome{OutcomeHung, OutcomeHung}) || !OutcomeHung.Failed() {
				t.Errorf("outcomes %v, want hung twice (a failure)", ends.got)
			}
			if s.Violations[protocol.RTerminal] != 2 || s.TotalViolations() != 2 {
				t.Errorf("violations %v, want R-terminal on each of the 2 sessions and nothing else", s.Violations)
			}
			if s.Verdict.Pass || !slices.ContainsFunc(s.Verdict.Reasons, func(r string) bool { return strings.Contains(r, "2 sessions hung") }) {
				t.Errorf("verdict %+v, want a failure saying 2 sessions hung", s.Verdict)
			}
			i := slices.IndexFunc(run.Samples, func(v measure.ViolationSample) bool { return v.Rule == protocol.RTerminal })
			if i < 0 || !strings.Contains(run.Samples[i].Detail, tc.wantDetail) {
				t.Fatalf("samples %+v: want an R-terminal sample saying %q", run.Samples, tc.wantDetail)
			}
			// The replay hangs too; it is bounded, and its frames show the stream up to the stall.
			if f := run.Samples[i].Frames; len(f) < 2 || !strings.HasPrefix(f[0], "data: ") || !strings.HasPrefix(f[len(f)-1], "hung: no terminal within the replay's 1s limit") {
				t.Errorf("sample frames %q: want the stream's frame, then the replay's hang", f)
			}
		})
	}
}

// stallingCompose is a compose server that streams the answer, accepts the stop request and
// then never ends the stream: no stopped terminal, no [DONE].
func stallingCompose(t *testing.T, stops *atomic.Int64) http.Handler {
	lib := scenarios.Embedded()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /agent/{agent}/stream", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Message string `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d, ok, err := scenarios.ParseDirective(body.Message)
		sc, known := lib.Get(d.Scenario)
		if !ok || err != nil || !known {
			http.Error(w, "bad directive in "+body.Message, http.StatusBadRequest)
			return
		}
		final := sc.Render(d.Seed).Expected().FinalText()
		compose.SetResponseHeaders(w.Header(), "run-"+d.Session)
		cw := compose.NewWriter(w)
		for i := 0; i < len(final); i += 4 {
			if err := cw.Text(final[i:min(i+4, len(final))]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	})
	mux.HandleFunc("POST /agent/{agent}/runs/{run}/stop", func(w http.ResponseWriter, r *http.Request) {
		stops.Add(1)
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	return mux
}

// TestStoppedStreamThatNeverEndsIsHung: the client's scripted stop is not an excuse for a
// stream that never ends; the session is hung, not aborted on purpose.
func TestStoppedStreamThatNeverEndsIsHung(t *testing.T) {
	t.Parallel()
	var stops atomic.Int64
	srv := httptest.NewServer(stallingCompose(t, &stops))
	defer srv.Close()
	m, err := NewMix("stop", 5, map[string]float64{"stop-mid-answer": 1}, []Profile{
		{Name: "compose", Dialect: "compose", Weight: 1, Targets: []Target{{Slug: "stall"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	run, err := Run(context.Background(), Config{
		Target: srv.URL, Mix: m, MixName: "stop", Rate: 50, Sessions: 1,
		Grace: time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-", SamplesPerRule: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	c := run.Summary.Counters
	if stops.Load() == 0 {
		t.Fatalf("the client never sent its stop request (counters %+v)", c)
	}
	if c.SessionsHung != 1 || c.SessionsFailed != 1 || c.SessionsAborted != 0 {
		t.Errorf("counters %+v: want the stopped session hung and failed, not aborted", c)
	}
	i := slices.IndexFunc(run.Samples, func(v measure.ViolationSample) bool { return v.Rule == protocol.RTerminal })
	if i < 0 || !strings.Contains(run.Samples[i].Detail, "no terminal within the 1s grace period (after the stop request)") {
		t.Errorf("samples %+v: want R-terminal naming the grace period after the stop request", run.Samples)
	}
}
