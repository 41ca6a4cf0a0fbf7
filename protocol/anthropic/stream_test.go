package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
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

// decodeAll drains this wire's stream decoded from r (see wiretest.DecodeAll).
func decodeAll(t testing.TB, r io.Reader) (wiretest.Accumulated, error) {
	t.Helper()
	return wiretest.DecodeAll(t, Wire{}.NewStream(r))
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

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n"
	const textStart = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	wiretest.StreamErrors(t, Wire{}, []wiretest.StreamError{
		// Malformed JSON names the event and the JSON error.
		{Name: "malformed json", Stream: start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\n", WantErr: `anthropic stream: event 2 "content_block_delta" ("{\"type\":\"content_block_delta\",\"index\":0,"): at byte 40: unexpected end of JSON input`},
		// A field of the wrong type is reported.
		{Name: "wrong type", Stream: start + textStart + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":7}}\n\n", WantErr: "event 3 \"content_block_delta\""},
		// A delta for a block that never started.
		{Name: "unknown block", Stream: start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n", WantErr: "anthropic stream: event 2 content_block_delta: block 3 was never started"},
		// A delta after the block stopped.
		{Name: "stopped block", Stream: start + textStart + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\"}}\n\n", WantErr: "block 0 was already stopped"},
		// A delta of the wrong kind for its block.
		{Name: "kind mismatch", Stream: start + textStart + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n", WantErr: "input_json_delta on block 0, which is not a tool_use block"},
		// The same index started twice.
		{Name: "double start", Stream: start + textStart + textStart, WantErr: "block 0 started twice"},
		// A missing index.
		{Name: "no index", Stream: start + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}\n\n", WantErr: "content_block_start: index: required"},
		// A hostile index is refused rather than allocated.
		{Name: "huge index", Stream: start + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":99999999,\"content_block\":{\"type\":\"text\"}}\n\n", WantErr: "index 99999999 out of range"},
		// The body ends before message_stop.
		{Name: "truncated", Stream: start + textStart, WantErr: "anthropic stream: ended after 2 events without message_stop: unexpected EOF"},
		// message_stop without a stop reason.
		{Name: "stop without reason", Stream: start + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n", WantErr: "message_stop before any message_delta with a stop_reason"},
	})
}

func TestStreamWriterBadStep(t *testing.T) {
	t.Parallel()
	turn := smallTurn()
	w := NewStreamWriter(io.Discard, testMeta, true)
	wiretest.BadSteps(t, w, turn)
	for i := 4; i < 6; i++ {
		if err := w.Step(turn, &turn.Steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Step(turn, &turn.Steps[5])
	if err == nil || !strings.Contains(err.Error(), "tool 0: arguments piece after all 14 bytes of its arguments were sent") {
		t.Errorf("error = %v", err)
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
