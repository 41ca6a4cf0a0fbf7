package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"

	"github.com/streambench/streambench/protocol/internal/wiretest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// testMeta is the fixed response identity of the golden files.
var testMeta = StreamMeta{ID: "chatcmpl-test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}

// smallTurn is wiretest.SmallTurn with this wire's tool call ids.
func smallTurn() *scenarios.ScriptTurn { return wiretest.SmallTurn("call_") }

// writeTurn plays turn through a StreamWriter the way the mock does.
func writeTurn(t testing.TB, turn *scenarios.ScriptTurn, meta StreamMeta, includeUsage bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	wiretest.WriteTurn(t, NewStreamWriter(&buf, meta, includeUsage), turn)
	return buf.Bytes()
}

func TestStreamGolden(t *testing.T) {
	t.Parallel()
	errTurn := smallTurn()
	errTurn.ErrorAfterStep = 2
	errTurn.ErrorMessage = "The server had an error while processing your request."
	tests := []struct {
		name         string
		turn         *scenarios.ScriptTurn
		includeUsage bool
	}{
		// Thinking, text and two tool calls, with the usage chunk.
		{"turn_usage.golden", smallTurn(), true},
		// The same turn without stream_options.include_usage: no usage chunk, no usage:null.
		{"turn_nousage.golden", smallTurn(), false},
		// An error frame after the first text piece ends the stream.
		{"error_midstream.golden", errTurn, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := writeTurn(t, tt.turn, testMeta, tt.includeUsage)
			wiretest.CheckGolden(t, *update, tt.name, got)
			// Every data line but [DONE] must be one valid JSON object.
			for _, line := range strings.Split(string(got), "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if ok && data != "[DONE]" && !json.Valid([]byte(data)) {
					t.Errorf("invalid JSON frame: %s", data)
				}
			}
		})
	}
}

func TestStreamWriterPing(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewStreamWriter(&buf, testMeta, false)
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != ": ping\n\n" {
		t.Errorf("ping = %q", buf.String())
	}
}
