package wiretest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// The bodies of the table tests and benchmarks every provider wire runs over its own rows.

// TextTurn is an answer of n short words, one per frame: the common shape at load.
func TextTurn(n int) *scenarios.ScriptTurn {
	words := []string{"stream ", "bench ", "token ", "the ", "quick ", "fox\n", "\"quoted\" ", "é "}
	turn := &scenarios.ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1, InputTokens: 10, OutputTokens: n}
	for i := range n {
		turn.Steps = append(turn.Steps, scenarios.Step{Kind: scenarios.StepText, Text: words[i%len(words)], Tokens: 1})
	}
	return turn
}

// BenchWrite measures w writing one step per op, going round steps; after (if set) runs after each.
func BenchWrite(b *testing.B, w TurnWriter, turn *scenarios.ScriptTurn, steps []scenarios.Step, after func()) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := w.Step(turn, &steps[i%len(steps)]); err != nil {
			b.Fatal(err)
		}
		if after != nil {
			after()
		}
		i++
	}
}

// BenchDecode decodes frames, a whole turn, per op, and reports ns/frame.
func BenchDecode(b *testing.B, frames []byte, newStream func(io.Reader) protocol.ModelStream) {
	nframes := bytes.Count(frames, []byte("\n\n"))
	r := bytes.NewReader(frames)
	var ev protocol.ModelEvent
	b.SetBytes(int64(len(frames)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(frames)
		st := newStream(r)
		for {
			err := st.Next(&ev)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*nframes), "ns/frame")
}

// StreamError is a stream a wire's decoder refuses, and what its error says.
type StreamError struct{ Name, Stream, WantErr string }

// StreamErrors decodes every case with w: the error contains WantErr, and sticks.
func StreamErrors(t *testing.T, w protocol.ProviderWire, cases []StreamError) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			_, err := DecodeAll(t, w.NewStream(strings.NewReader(tt.Stream)))
			if err == nil || err == io.EOF || !strings.Contains(err.Error(), tt.WantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.WantErr)
			}
			st := w.NewStream(strings.NewReader(tt.Stream))
			var ev protocol.ModelEvent
			first := st.Next(&ev)
			for first == nil {
				first = st.Next(&ev)
			}
			if again := st.Next(&ev); again != first {
				t.Fatalf("Next after %v returned %v", first, again)
			}
		})
	}
}

// RequestError is a model request a wire's encoder refuses, and what its error says.
type RequestError struct {
	Name    string
	Req     protocol.ModelRequest
	WantErr string
}

// RequestErrors builds every case's request with w: the error contains WantErr.
func RequestErrors(t *testing.T, w protocol.ProviderWire, cases []RequestError) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			_, err := w.NewRequest(context.Background(), "http://x", &tt.Req)
			if err == nil || !strings.Contains(err.Error(), tt.WantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.WantErr)
			}
		})
	}
}

// ErrorAnswer is a provider's non-200 answer and the error a wire reads from it.
type ErrorAnswer struct {
	Name    string
	Handler http.HandlerFunc
	Want    protocol.ProviderError
	JSON    bool
}

// ErrorAnswers serves every case's answer and reads it with w.ParseError.
func ErrorAnswers(t *testing.T, w protocol.ProviderWire, cases []ErrorAnswer) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.Handler)
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if tt.JSON && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("Content-Type = %q", resp.Header.Get("Content-Type"))
			}
			if got := w.ParseError(resp); *got != tt.Want {
				t.Errorf("got %.200v, want %.200v", *got, tt.Want)
			}
		})
	}
}

// BadSteps: a step for a tool the turn lacks, or of no known kind, is an error naming it.
func BadSteps(t *testing.T, w TurnWriter, turn *scenarios.ScriptTurn) {
	t.Helper()
	err := w.Step(turn, &scenarios.Step{Kind: scenarios.StepToolArgs, Tool: 5, Text: "{}"})
	if err == nil || !strings.Contains(err.Error(), "step for tool 5, but the turn has 2 tool calls") {
		t.Errorf("error = %v", err)
	}
	if err := w.Step(turn, &scenarios.Step{Kind: 99}); err == nil || !strings.Contains(err.Error(), "unknown step kind 99") {
		t.Errorf("error = %v", err)
	}
}
