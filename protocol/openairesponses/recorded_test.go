package openairesponses_test

import (
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/openairesponses"
	"github.com/streambench/streambench/sse"
)

// judgeRecorded feeds r's first turn to a checker against its script and returns the rules
// broken (each detail logged) and whether the stream reached its terminal.
func judgeRecorded(t *testing.T, r protocol.Recording) ([]protocol.Rule, bool) {
	t.Helper()
	s, err := r.Session("streambench-mock")
	if err != nil {
		t.Fatal(err)
	}
	c := openairesponses.NewChecker(s, false)
	d := sse.NewDecoderLimits(strings.NewReader(r.Stream()), openairesponses.New().DecodeLimits())
	ended := false
	for {
		var e sse.Event
		err := d.Next(&e)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", r.Path, err)
		}
		if c.Observe(&e).Kind == protocol.FrameTerminal {
			ended = true
		}
	}
	var streamErr error
	if !ended {
		streamErr = protocol.ErrTruncated
	}
	set := map[protocol.Rule]bool{}
	for _, v := range c.Finish(streamErr) {
		set[v.Rule] = true
		t.Logf("%s: %s: %s", filepath.Base(r.Path), v.Rule, v.Detail)
	}
	return slices.Sorted(maps.Keys(set)), ended
}

// TestRecordedOllama: streams a real Responses server sent, Ollama v0.17.4's own
// implementation of POST /v1/responses (middleware.ResponsesMiddleware and its
// ResponsesStreamConverter) in front of the scripted model of interop/ollama-responses, the
// first turn of eight scenarios at seed 1 (captured by `OUT=DIR bash
// interop/ollama-responses/run.sh`; testdata/ollama, gzipped). The checker must find exactly
// Ollama's known findings (docs/INTEROP.md, "Ollama's Responses API"), each tied to what the
// turn holds, and nothing on the rest:
//   - thinking: streamed as reasoning_summary_text deltas with no summary part opened
//     (R-responses-item), and never as reasoning text, so the script's reasoning does not arrive
//     (R-responses-content);
//   - text before a tool call: the message item is never closed and the function_call item
//     takes its output_index (R-responses-item, R-responses-text);
//   - a provider error mid-stream: dropped, the stream ends with no terminal (truncated, an
//     outcome rather than a rule).
//
// A checker that stopped seeing one of them, or saw more, fails this test.
func TestRecordedOllama(t *testing.T) {
	t.Parallel()
	paths := dialecttest.Recordings(t, filepath.Join("testdata", "ollama", "*.sse.gz"), 0)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rec := dialecttest.ReadRecording(t, path)
			got, ended := judgeRecorded(t, rec)
			exp := dialecttest.Script(t, rec.Scenario, rec.Seed).Expected()
			want := map[protocol.Rule]bool{}
			if turn := exp.Turns[0]; turn.Thinking != "" {
				want[openairesponses.RItem], want[openairesponses.RContent] = true, true
			}
			if turn := exp.Turns[0]; turn.Text != "" && len(turn.ToolCalls) > 0 {
				want[openairesponses.RItem], want[openairesponses.RText] = true, true
			}
			if w := slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
				t.Errorf("rules %v, want %v", got, w)
			}
			if fails := exp.FailedTurn == 0; ended == fails {
				t.Errorf("ended with a terminal: %v; the script fails in this turn: %v (Ollama drops the error)", ended, fails)
			}
		})
	}
}
