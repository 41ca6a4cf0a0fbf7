package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/loadgen/endpoint"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// TestConversationReplay: one client replays a 3-turn conversation against the mock (which
// honours max_tokens); each request carries the history with the answers the mock really
// streamed, each turn is a request measured on its own (three ttft, tpot and e2e values, two
// turn requests besides the session's), and the conversation is one completed session. A
// turn the mock fails ends the conversation with that outcome.
func TestConversationReplay(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.jsonl")
	os.WriteFile(path, []byte(`{"turns":["first question","second question","third question"]}`+"\n"), 0o600)
	for _, tc := range []struct {
		dialect string
		failAt  int // the request the mock answers with HTTP 500 (0: none)
	}{
		{"openai-chat", 0},
		{"anthropic-messages", 0},
		{"openai-responses", 0},
		// the second turn fails: the conversation ends there, with its outcome
		{"openai-chat", 2},
	} {
		convs, err := endpoint.LoadConversations(path)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := endpoint.ParseTokenDist("6")
		cfg := endpointConfig(t, tc.dialect, "m", 3, &endpoint.Workload{Conversations: convs, Output: out, Source: path})
		var run *measure.Run
		var tap *conversationTap
		synctest.Test(t, func(t *testing.T) {
			mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 0.01, Clock: hrtimer.NewPortable()})
			if err != nil {
				t.Fatal(err)
			}
			tap = &conversationTap{h: mock, failAt: tc.failAt}
			cfg.Clock, cfg.Target, cfg.Transport = hrtimer.NewPortable(), "http://in-memory", pipeTransport{tap}
			cfg.RunID, cfg.Clients, cfg.Sessions, cfg.NoLeakCheck, cfg.RuntimeMetricsURL = "conv", 1, 1, true, "-"
			if run, err = Run(context.Background(), withDialects(cfg)); err != nil {
				t.Fatal(err)
			}
		})
		c := run.Summary.Counters
		if tc.failAt == 2 {
			if len(tap.requests) != 2 || c.Outcome(measure.OutcomeHTTPError) != 1 || c.SessionsStarted != 1 || c.TurnRequests != 1 {
				t.Errorf("%s failing turn 2: %d requests, counters %+v; want 2 requests, one http_error session, 1 turn request", tc.dialect, len(tap.requests), c)
			}
			continue
		}
		if len(tap.requests) != 3 || len(tap.answers) != 3 {
			t.Logf("counters %+v violations %v samples %+v requests %q", c, run.Summary.Violations, run.Samples, tap.requests)
			t.Fatalf("%s: %d requests, %d answers; want 3 of each", tc.dialect, len(tap.requests), len(tap.answers))
		}
		turns := []string{"first question", "second question", "third question"}
		for i, msgs := range tap.requests {
			// turn i sends user 0, answer 0, …, user i: the answers the mock streamed.
			var want []string
			for j := 0; j <= i; j++ {
				want = append(want, "user:"+turns[j])
				if j < i {
					want = append(want, "assistant:"+tap.answers[j])
				}
			}
			if strings.Join(msgs, "|") != strings.Join(want, "|") {
				t.Errorf("%s: request %d sent\n %q\nwant\n %q", tc.dialect, i+1, msgs, want)
			}
		}
		for i, a := range tap.answers {
			if n := len(strings.Fields(a)); n != 6 {
				t.Errorf("%s: answer %d %q has %d words, want the 6 max_tokens asked for", tc.dialect, i+1, a, n)
			}
		}
		if c.SessionsStarted != 1 || c.Outcome(measure.OutcomeCompleted) != 1 || c.TurnRequests != 2 || c.OutputTokens != 18 {
			t.Errorf("%s: counters %+v; want 1 completed session of 3 requests, 18 output tokens", tc.dialect, c)
		}
		for _, m := range run.Summary.Metrics {
			switch m.Metric {
			case measure.TimeToFirstToken, measure.TimePerOutputToken, measure.StreamDuration, measure.Headers:
				if m.Count != 3 {
					t.Errorf("%s: %s has %d values, want one per turn (3)", tc.dialect, m.Metric, m.Count)
				}
			}
		}
		if tk := run.Summary.Tokens; tk == nil || tk.RequestsPerSecond <= 0 {
			t.Errorf("%s: tokens %+v", tc.dialect, tk)
		}
	}
}

// conversationTap is a handler in front of the mock that keeps each request's messages (as
// "role:text") and each answer's text, and fails request failAt (from 1) with HTTP 500.
type conversationTap struct {
	h        http.Handler
	failAt   int
	mu       sync.Mutex
	requests [][]string
	answers  []string
}

func (c *conversationTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	type message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	var req struct {
		Messages []message `json:"messages"`
		Input    []message `json:"input"` // openai-responses
	}
	json.Unmarshal(body, &req)
	var msgs []string
	for _, m := range append(req.Messages, req.Input...) {
		var parts []struct{ Text string }
		var text string
		if json.Unmarshal(m.Content, &text) != nil && json.Unmarshal(m.Content, &parts) == nil {
			text = ""
			for _, p := range parts {
				text += p.Text
			}
		}
		msgs = append(msgs, m.Role+":"+text)
	}
	c.mu.Lock()
	c.requests = append(c.requests, msgs)
	n := len(c.requests)
	c.mu.Unlock()
	if n == c.failAt {
		http.Error(w, `{"error":{"message":"scripted failure"}}`, http.StatusInternalServerError)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec := &teeWriter{ResponseWriter: w}
	c.h.ServeHTTP(rec, r)
	c.mu.Lock()
	c.answers = append(c.answers, answerText(rec.buf.Bytes()))
	c.mu.Unlock()
}

// teeWriter keeps a copy of what the handler wrote.
type teeWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (t *teeWriter) Write(b []byte) (int, error) {
	t.buf.Write(b)
	return t.ResponseWriter.Write(b)
}

func (t *teeWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// answerText is the answer text of an OpenAI chat or Anthropic messages stream.
func answerText(stream []byte) string {
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(stream))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var f struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Type  string          `json:"type"`
			Delta json.RawMessage `json:"delta"`
		}
		if json.Unmarshal([]byte(data), &f) != nil {
			continue
		}
		for _, ch := range f.Choices {
			b.WriteString(ch.Delta.Content)
		}
		var block struct{ Type, Text string } // anthropic-messages
		var delta string                      // openai-responses
		switch {
		case f.Type == "response.output_text.delta" && json.Unmarshal(f.Delta, &delta) == nil:
			b.WriteString(delta)
		case json.Unmarshal(f.Delta, &block) == nil && block.Type == "text_delta":
			b.WriteString(block.Text)
		}
	}
	return b.String()
}

// endpointConfig is the Config of an endpoint workload w of dialect against model, as load's
// flags make it (cmd/streambench's workload.build).
func endpointConfig(t *testing.T, dialect, model string, seed uint64, w *endpoint.Workload) Config {
	t.Helper()
	mix, err := EndpointMix(dialect, model, seed)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Mix: mix, MixName: "endpoint", Seed: seed, Options: protocol.Options{"model": model}, Endpoint: w, NoGroundTruth: true}
}
