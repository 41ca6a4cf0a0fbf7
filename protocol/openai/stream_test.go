package openai

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
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

// decodeAll drains this wire's stream decoded from r (see wiretest.DecodeAll).
func decodeAll(t testing.TB, r io.Reader) (wiretest.Accumulated, error) {
	t.Helper()
	return wiretest.DecodeAll(t, Wire{}.NewStream(r))
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

func TestStreamRoundTrip(t *testing.T) {
	t.Parallel()
	noTools := smallTurn()
	noTools.Steps = noTools.Steps[:4]
	noTools.ToolCalls = nil
	interleaved := smallTurn()
	s := interleaved.Steps
	s[5], s[6] = s[6], s[5] // tool 0 piece, tool 1 piece, tool 0 piece, tool 1 piece
	empty := &scenarios.ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1, OutputTokens: 0}
	wiretest.RoundTrips(t, Wire{}, func(t testing.TB, turn *scenarios.ScriptTurn) []byte { return writeTurn(t, turn, testMeta, true) }, testMeta.InputTokens, []wiretest.RoundTrip{
		// Thinking, text and two sequential tool calls end in tool_calls.
		{Name: "tools", Turn: smallTurn(), WantStop: protocol.StopToolUse},
		// A plain answer ends in stop.
		{Name: "answer", Turn: noTools, WantStop: protocol.StopEndTurn},
		// Pieces of two parallel calls interleave.
		{Name: "interleaved tools", Turn: interleaved, WantStop: protocol.StopToolUse},
		// A turn with no steps still ends cleanly.
		{Name: "empty", Turn: empty, WantStop: protocol.StopEndTurn},
	})
}

func TestStreamMidStreamError(t *testing.T) {
	t.Parallel()
	turn := smallTurn()
	turn.ErrorAfterStep = 3
	turn.ErrorMessage = "boom"
	wiretest.MidStreamError(t, Wire{}, writeTurn(t, turn, testMeta, true), turn, "server_error")
}

// TestStreamTolerance feeds hand-written streams that are odd but valid.
func TestStreamTolerance(t *testing.T) {
	t.Parallel()
	const head = `"id":"x","object":"chat.completion.chunk","created":1,"model":"m"`
	wiretest.Tolerates(t, Wire{}, []wiretest.Tolerated{
		{
			// Unknown fields, extra whitespace, CRLF line ends, comments and an event name.
			Name: "unknown fields and whitespace",
			Stream: ": hello\r\n\r\nevent: message\r\ndata:  { " + head + ` , "x_new": {"a":[1,2]}, "choices" : [ { "index" : 0 , "delta" : { "content" : "Hi" , "audio": null } , "finish_reason" : null } ] }` + "\r\n\r\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: wiretest.Accumulated{Text: "Hi", Stop: protocol.StopEndTurn, TurnEnds: 1},
		},
		{
			// Empty deltas, null content and chunks with no choices are skipped.
			Name: "empty deltas",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}` + "\n\n" +
				"data: {" + head + `,"choices":[]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\n" +
				"data: {" + head + `,"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: wiretest.Accumulated{Text: "a", Stop: protocol.StopMaxToken, Usage: protocol.Usage{InputTokens: 3, OutputTokens: 4}, TurnEnds: 1},
		},
		{
			// A server that closes after the finish_reason and usage without [DONE].
			Name: "no done marker",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: {" + head + `,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}` + "\n\n",
			Want: wiretest.Accumulated{Text: "a", Stop: protocol.StopEndTurn, Usage: protocol.Usage{InputTokens: 1, OutputTokens: 2}, TurnEnds: 1},
		},
		{
			// A provider that repeats the id and name on every tool delta starts the call once.
			Name: "repeated tool id",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":":1}"}}]}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: wiretest.Accumulated{Calls: []scenarios.ScriptToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}, Stop: protocol.StopToolUse, TurnEnds: 1},
		},
		{
			// vLLM and OpenRouter name the reasoning field "reasoning"; reasoning_content
			// (DeepSeek) wins when a chunk carries both. The openai-chat checker reads the
			// same chunks with the same parser (ParseChunk), so the two cannot drift.
			Name: "reasoning field variants",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"reasoning":"think "}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"reasoning_content":"more","reasoning":"more"}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: wiretest.Accumulated{Thinking: "think more", Text: "a", Stop: protocol.StopEndTurn, TurnEnds: 1},
		},
	})
}

func TestStreamErrors(t *testing.T) {
	t.Parallel()
	const head = `"id":"x","object":"chat.completion.chunk","created":1,"model":"m"`
	wiretest.StreamErrors(t, Wire{}, []wiretest.StreamError{
		// Malformed JSON names the frame and the JSON error.
		{Name: "malformed json", Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n" + `data: {"choices":[{"delta":` + "\n\n", WantErr: `openai stream: frame 2 ("{\"choices\":[{\"delta\":"): at byte 21: unexpected end of JSON input`},
		// A field of the wrong type is reported, not ignored.
		{Name: "wrong type", Stream: `data: {"choices":[{"index":0,"delta":{"content":5}}]}` + "\n\n", WantErr: `frame 1 ("{\"choices\":[{\"index\":0,\"delta\":{\"content\":5}}]}"): at byte 42: delta.content: expected a string, got a number`},
		// The body ends before [DONE].
		{Name: "truncated", Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"}}]}` + "\n\n", WantErr: "openai stream: ended after 1 frames without a finish_reason or data: [DONE]: unexpected EOF"},
		// [DONE] without any finish_reason.
		{Name: "done without finish", Stream: "data: [DONE]\n\n", WantErr: "openai stream: frame 1: data: [DONE] before any finish_reason"},
		// Arguments for a call that never sent its id.
		{Name: "args before id", Stream: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}` + "\n\n", WantErr: "openai stream: frame 1: tool_calls index 0: arguments before the call's id and name"},
		// A hostile tool index is refused rather than allocated.
		{Name: "huge tool index", Stream: `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":99999999,"id":"c"}]}}]}` + "\n\n", WantErr: "tool_calls index 99999999 out of range"},
	})
}

func TestStreamWriterBadStep(t *testing.T) {
	t.Parallel()
	turn := smallTurn()
	w := NewStreamWriter(io.Discard, testMeta, false)
	wiretest.BadSteps(t, w, turn)
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

func FuzzNewStream(f *testing.F) {
	f.Add(writeTurn(f, smallTurn(), testMeta, true))
	errTurn := smallTurn()
	errTurn.ErrorAfterStep = 1
	f.Add(writeTurn(f, errTurn, testMeta, false))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { wiretest.FuzzStream(t, Wire{}, data, true) })
}

// TestStreamTransportError checks that a read error mid-stream (a reset connection, a
// cancelled request) comes back wrapped, never as a clean end.
func TestStreamTransportError(t *testing.T) {
	t.Parallel()
	frames := writeTurn(t, smallTurn(), testMeta, true)
	wiretest.TransportError(t, Wire{}, frames)
}
