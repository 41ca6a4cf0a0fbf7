package anthropic

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
var testMeta = StreamMeta{ID: "msg_test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}

// smallTurn is wiretest.SmallTurn with this wire's tool call ids.
func smallTurn() *scenarios.ScriptTurn { return wiretest.SmallTurn("toolu_") }

// writeTurn plays turn through a StreamWriter the way the mock does.
func writeTurn(t testing.TB, turn *scenarios.ScriptTurn, meta StreamMeta) []byte {
	t.Helper()
	var buf bytes.Buffer
	wiretest.WriteTurn(t, NewStreamWriter(&buf, meta, true), turn)
	return buf.Bytes()
}

func TestStreamGolden(t *testing.T) {
	t.Parallel()
	errTurn := smallTurn()
	errTurn.ErrorAfterStep = 2
	errTurn.ErrorMessage = "Overloaded"
	tests := []struct {
		name string
		turn *scenarios.ScriptTurn
	}{
		// Thinking, text and two tool calls.
		{"turn.golden", smallTurn()},
		// An error event after the first text piece ends the stream.
		{"error_midstream.golden", errTurn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := writeTurn(t, tt.turn, testMeta)
			wiretest.CheckGolden(t, *update, tt.name, got)
			// Every data line is one valid JSON object whose type is the event name.
			lines := strings.Split(string(got), "\n")
			for i, line := range lines {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				var v struct{ Type string }
				if err := json.Unmarshal([]byte(data), &v); err != nil {
					t.Errorf("invalid JSON frame: %s", data)
				}
				if i == 0 || lines[i-1] != "event: "+v.Type {
					t.Errorf("data of type %q not preceded by its event line", v.Type)
				}
			}
		})
	}
}

func TestStreamWriterPing(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewStreamWriter(&buf, testMeta, true)
	if err := w.Ping(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "event: ping\ndata: {\"type\":\"ping\"}\n\n" {
		t.Errorf("ping = %q", buf.String())
	}
}
