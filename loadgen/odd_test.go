package loadgen

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// oddSimChat is a sim-chat server that is valid but exercises every corner of SSE framing a
// client may trip on: CR-only, CRLF and LF line endings (rotating per frame), comments, "data:"
// without a space, a frame split across writes with a flush between, and an event split
// right inside a CRLF.
func oddSimChat(t *testing.T) http.Handler {
	lib := scenarios.Embedded()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		script, ok := requestScript(w, r, lib)
		if !ok {
			return
		}
		exp := script.Expected()
		optedIn := strings.Contains(strings.ToLower(r.Header.Get("X-Sim-Stream-Protocol")), "agent-events-v1")
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		h.Set("X-Accel-Buffering", "no")
		if optedIn {
			h.Set("X-Sim-Stream-Protocol", "agent-events-v1")
		}
		flusher := w.(http.Flusher)
		ends := []string{"\r", "\r\n", "\n"}
		n := 0
		send := func(payload string) {
			end := ends[n%len(ends)]
			n++
			prefix := "data: "
			if n%2 == 0 {
				prefix = "data:" // no space: the value is the same
			}
			frame := prefix + payload + end + end
			if n%3 == 0 {
				frame = ": keep-alive comment" + end + frame
			}
			// Split every frame across two writes with a flush between them; when the frame
			// ends in CRLF, the split lands between its final CR and LF.
			cut := len(frame) / 2
			if strings.HasSuffix(frame, "\r\n") {
				cut = len(frame) - 1
			}
			_, _ = w.Write([]byte(frame[:cut]))
			flusher.Flush()
			if n%8 == 0 {
				time.Sleep(100 * time.Microsecond) // let the client see the half frame
			}
			_, _ = w.Write([]byte(frame[cut:]))
			flusher.Flush()
		}
		quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		final := exp.FinalText()
		if optedIn {
			// Live chunks, a few characters at a time.
			for i := 0; i < len(final); {
				j := min(i+29, len(final))
				for j < len(final) && !utf8Start(final[j]) {
					j++
				}
				send(`{"blockId":"b1","chunk":` + quote(final[i:j]) + `}`)
				i = j
			}
		} else {
			send(`{"blockId":"b1","chunk":` + quote(final) + `}`)
		}
		send(`{"event":"final","data":{"success":true,"output":{"content":` + quote(final) + `}}}`)
		send(`"[DONE]"`)
	})
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func oddMix(t *testing.T) *Mix {
	t.Helper()
	m, err := NewMix("odd", 7, map[string]float64{"plain-answer": 1, "unicode-answer": 1, "long-answer": 1}, []Profile{
		{Name: "opted-in", Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1, Targets: []Target{{Slug: "odd"}}},
		{Name: "legacy", Dialect: "sim-chat", Weight: 1, Targets: []Target{{Slug: "odd"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOddButValidSSEServerHasNoViolations: valid SSE in every odd framing (oddSimChat) breaks
// no rule and passes, the generator's own leak check included. Not parallel: its leak check
// reads the generator's own goroutines and descriptors, which are this process's.
func TestOddButValidSSEServerHasNoViolations(t *testing.T) {
	srv := httptest.NewServer(oddSimChat(t))
	defer srv.Close()
	run := runLoad(t, Config{
		Target: srv.URL, Mix: oddMix(t), MixName: "odd", Clients: 4, Sessions: 24,
		RuntimeMetricsURL: "-", LeakGrace: 2 * time.Second,
	})
	s := run.Summary
	t.Logf("load %v, leaks %+v", s.Ended.Sub(s.Started), s.Leaks)
	if s.Counters.SessionsStarted != 24 || s.Counters.SessionsOK != 24 {
		t.Errorf("sessions started %d ok %d, want 24 and 24 (counters %+v)", s.Counters.SessionsStarted, s.Counters.SessionsOK, s.Counters)
	}
	if n := s.TotalViolations(); n != 0 {
		t.Errorf("%d violations on a valid stream: %v; samples %+v", n, s.Violations, run.Samples)
	}
	if !s.Verdict.Pass {
		t.Errorf("verdict failed: %v", s.Verdict.Reasons)
	}
	// Both client kinds measured time to first chunk on every session.
	var ttfc int64
	for _, m := range s.Metrics {
		if m.Metric == "ttfc" {
			ttfc += m.Count
		}
	}
	if ttfc != 24 {
		t.Errorf("ttfc recorded %d times, want 24: %+v", ttfc, s.Metrics)
	}
	if s.Counters.Frames == 0 || s.Counters.Bytes == 0 {
		t.Errorf("frames %d bytes %d, want both > 0", s.Counters.Frames, s.Counters.Bytes)
	}
}

// A server that breaks framing must be caught: the same server with the end marker missing.
func TestBrokenServerIsReported(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write([]byte("data: {\"blockId\":\"b1\",\"chunk\":\"nope\"}\n\n"))
	}))
	defer srv.Close()
	run := runLoad(t, Config{
		Target: srv.URL, Mix: oddMix(t), MixName: "odd", Clients: 2, Sessions: 4,
		RuntimeMetricsURL: "-", NoLeakCheck: true,
	})
	s := run.Summary
	if s.Counters.Outcome(measure.OutcomeTruncated) != 4 || s.Violations[protocol.RTerminal] != 0 {
		t.Errorf("outcomes %v, violations %v: want every stream truncated (no terminal), not R-terminal restating it", s.Counters.Outcomes, s.Violations)
	}
	if s.Verdict.Pass {
		t.Errorf("verdict passed a broken server")
	}
	if len(run.Samples) == 0 || len(run.Samples[0].Frames) == 0 {
		t.Errorf("no violation sample with frames: %+v", run.Samples)
	}
}
