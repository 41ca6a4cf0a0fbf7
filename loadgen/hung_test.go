package loadgen

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// stallMode is how stallingSimChat ends its stream.
type stallMode int

const (
	stallMidAnswer     stallMode = iota // half the answer, then nothing: no terminal ever
	stallAfterTerminal                  // the whole stream, [DONE] included, then the connection stays open
	trickle                             // the answer a character every 100 ms, never the terminal: slow, not silent
)

// requestScript renders the scenario a sim-chat request's directive names; for a request
// without a usable one it answers 400 and returns false.
func requestScript(w http.ResponseWriter, r *http.Request, lib *scenarios.Library) (*scenarios.Script, bool) {
	var body struct {
		Input string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil, false
	}
	d, ok, err := scenarios.ParseDirective(body.Input)
	sc, known := lib.Get(d.Scenario)
	if !ok || err != nil || !known {
		http.Error(w, fmt.Sprintf("no usable directive in %q: %v", body.Input, err), http.StatusBadRequest)
		return nil, false
	}
	return sc.Render(d.Seed), true
}

// stallingSimChat is an opted-in sim-chat server that sends valid frames and then stalls
// until the client goes away, as a runtime retrying its provider for minutes does.
func stallingSimChat(t *testing.T, mode stallMode) http.Handler {
	lib := scenarios.Embedded()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		script, ok := requestScript(w, r, lib)
		if !ok {
			return
		}
		final := script.Expected().FinalText()
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
		case trickle:
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for _, c := range final { // a character per tick: far past every limit tried
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
				send(`{"blockId":"b1","chunk":` + quote(string(c)) + `}`)
			}
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

// outcomes collects session outcomes (add, as a SessionEndFunc).
type outcomes struct {
	mu  sync.Mutex
	got []measure.Outcome
}

func (o *outcomes) add(e SessionEnd) {
	o.mu.Lock()
	o.got = append(o.got, e.Outcome)
	o.mu.Unlock()
}

// TestUnfinishedStreamOutcomes: a stream still open when a limit ends it gets the outcome that
// names the limit (stalled: silent for the idle timeout; over_time: still delivering at the
// stream timeout; cut: open when the run's grace period ended), an error that fails the run
// and no violation restating it; one whose terminal came before the connection was held open
// is completed.
func TestUnfinishedStreamOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                string
		mode                stallMode
		grace, stream, idle time.Duration
		want                measure.Outcome
		wantErr             string // in the verdict's errors reason
	}{
		// silent past the idle timeout, long before the other limits
		{"idle", stallMidAnswer, time.Minute, time.Minute, time.Second, measure.OutcomeStalled, "stalled: no byte from"},
		// still delivering a byte every 100 ms when the stream timeout ends it: slow, not hung
		{"slow", trickle, time.Minute, time.Second, 30 * time.Second, measure.OutcomeOverTime, "over time: still delivering at the 1s stream timeout"},
		// a byte every 100 ms keeps a 1 s idle timeout from firing (on HTTP/1.1 on Linux no read
		// touches the stream: the idle watch asks the connection when its newest bytes arrived)
		{"slow under an idle timeout", trickle, time.Minute, 3 * time.Second, time.Second, measure.OutcomeOverTime, "over time: still delivering at the 3s stream timeout"},
		// the run ends and the grace period runs out while the streams are open
		{"grace", trickle, time.Second, time.Minute, 30 * time.Second, measure.OutcomeCut, "cut: still open when the run's 1s grace period ended"},
		// the terminal and [DONE] came; the runtime only failed to close: judged as delivered
		// when the idle timeout ends it. The idle timeout counts from the client's last read,
		// so it cannot end the stream before the terminal was read unless a goroutine waited
		// 5 s for a core (a 1 s grace, counted from the run's start, did on a busy machine)
		{"terminal then held open", stallAfterTerminal, time.Minute, time.Minute, 5 * time.Second, measure.OutcomeCompleted, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(stallingSimChat(t, tc.mode))
			defer srv.Close()
			var ends outcomes
			run := runLoad(t, Config{
				Target: srv.URL, Mix: stallMix(t, ""), MixName: "stall", Rate: 50, Sessions: 2,
				Grace: tc.grace, StreamTimeout: tc.stream, IdleTimeout: tc.idle, NoLeakCheck: true, RuntimeMetricsURL: "-",
				Outputs: []Output{SessionEndFunc(ends.add)}, SamplesPerRule: 1,
			})
			s := run.Summary
			c := s.Counters
			if !slices.Equal(ends.got, []measure.Outcome{tc.want, tc.want}) || c.Outcome(tc.want) != 2 {
				t.Errorf("outcomes %v (counters %+v), want %s twice", ends.got, c, tc.want)
			}
			if s.TotalViolations() != 0 {
				t.Errorf("violations %v: want none (the outcome is the one finding); samples %+v", s.Violations, run.Samples)
			}
			if !tc.want.IsError() {
				if c.SessionsOK != 2 || !s.Verdict.Pass {
					t.Errorf("counters %+v, verdict %+v: want 2 ok sessions and a pass", c, s.Verdict)
				}
				return
			}
			if c.SessionsFailed != 2 || c.Errors() != 2 {
				t.Errorf("counters %+v: want 2 failed sessions, 2 errors", c)
			}
			if s.Verdict.Pass || !slices.ContainsFunc(s.Verdict.Reasons, func(r string) bool {
				return strings.HasPrefix(r, "errors==0: 2 ") && strings.Contains(r, string(tc.want)+"×2") && strings.Contains(r, tc.wantErr)
			}) {
				t.Errorf("verdict %+v, want a failure of errors==0 naming %s×2 and %q", s.Verdict, tc.want, tc.wantErr)
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

// TestStoppedStreamThatNeverEnds: the client's scripted stop is not an excuse for a stream
// that never ends; the session is stalled (an error), not aborted on purpose.
func TestStoppedStreamThatNeverEnds(t *testing.T) {
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
	run := runLoad(t, Config{
		Target: srv.URL, Mix: m, MixName: "stop", Rate: 50, Sessions: 1,
		Grace: time.Minute, IdleTimeout: time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-", SamplesPerRule: 1,
	})
	c := run.Summary.Counters
	if stops.Load() == 0 {
		t.Fatalf("the client never sent its stop request (counters %+v)", c)
	}
	if c.Outcome(measure.OutcomeStalled) != 1 || c.SessionsFailed != 1 || c.Outcome(measure.OutcomeAborted) != 0 {
		t.Errorf("counters %+v: want the stopped session stalled and failed, not aborted", c)
	}
	// The error sample names the stall, and its scenario and dialect.
	if !slices.ContainsFunc(run.Summary.Judging.FirstErrors, func(e string) bool {
		return strings.Contains(e, "idle timeout (after the stop request)") && strings.HasSuffix(e, "[scenario stop-mid-answer, compose]")
	}) {
		t.Errorf("first errors %q: want the stall named after the stop request, and its scenario", run.Summary.Judging.FirstErrors)
	}
}
