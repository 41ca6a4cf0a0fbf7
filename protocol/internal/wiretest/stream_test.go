package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropic"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

// roundTrip is a scripted turn a wire writes and reads back, and the stop it must end with.
type roundTrip struct {
	Name     string
	Turn     *scenarios.ScriptTurn
	WantStop protocol.StopReason
}

// roundTrips writes every case's turn, and the turns every wire plays (SmallTurn's, tool call
// ids starting with toolIDPrefix), with frames and decodes it whole and one byte at a time with
// w: the turn's text, thinking and calls come back, the stop and usage (input tokens
// inputTokens) with one turn end.
func roundTrips(t *testing.T, w protocol.ProviderWire, toolIDPrefix string, frames func(testing.TB, *scenarios.ScriptTurn) []byte, inputTokens int, more []roundTrip) {
	noTools := SmallTurn(toolIDPrefix)
	noTools.Steps = noTools.Steps[:4]
	noTools.ToolCalls = nil
	interleaved := SmallTurn(toolIDPrefix)
	s := interleaved.Steps
	s[5], s[6] = s[6], s[5] // tool 0 piece, tool 1 piece, tool 0 piece, tool 1 piece
	cases := append([]roundTrip{
		// Thinking, text and two sequential tool calls end in the wire's tool-use stop.
		{Name: "tools", Turn: SmallTurn(toolIDPrefix), WantStop: protocol.StopToolUse},
		// A plain answer ends in the end-of-turn stop.
		{Name: "answer", Turn: noTools, WantStop: protocol.StopEndTurn},
		// Pieces of two parallel calls interleave: both calls stay open.
		{Name: "interleaved tools", Turn: interleaved, WantStop: protocol.StopToolUse},
		// A turn with no steps still ends cleanly.
		{Name: "empty", Turn: &scenarios.ScriptTurn{ErrorAfterStep: -1, StallAfterStep: -1}, WantStop: protocol.StopEndTurn},
	}, more...)
	for _, tt := range cases {
		for _, reads := range []string{"whole", "one byte"} {
			t.Run(tt.Name+"/"+reads, func(t *testing.T) {
				t.Parallel()
				var r io.Reader = bytes.NewReader(frames(t, tt.Turn))
				if reads == "one byte" {
					r = iotest.OneByteReader(r)
				}
				got, err := DecodeAll(t, w.NewStream(r))
				if err != io.EOF {
					t.Fatalf("stream ended with %v, want io.EOF", err)
				}
				want := WantFromTurn(tt.Turn, len(tt.Turn.Steps))
				want.Stop, want.TurnEnds = tt.WantStop, 1
				want.Usage = protocol.Usage{InputTokens: inputTokens, OutputTokens: tt.Turn.OutputTokens}
				AssertAccumulated(t, got, want)
			})
		}
	}
}

// midStreamError reads frames of turn, which fails after its step errAfter, with w: the
// stream ends in a 200 ProviderError of errType and the turn's message, after what came before.
func midStreamError(t *testing.T, w protocol.ProviderWire, frames []byte, turn *scenarios.ScriptTurn, errType string) {
	t.Helper()
	got, err := DecodeAll(t, w.NewStream(bytes.NewReader(frames)))
	var perr *protocol.ProviderError
	if !errors.As(err, &perr) {
		t.Fatalf("stream ended with %v, want *protocol.ProviderError", err)
	}
	want := protocol.ProviderError{Status: http.StatusOK, Type: errType, Message: turn.ErrorMessage}
	if *perr != want {
		t.Errorf("error = %+v, want %+v", *perr, want)
	}
	AssertAccumulated(t, got, WantFromTurn(turn, turn.ErrorAfterStep))
}

// tolerated is a hand-written stream that is odd but valid, and what it decodes to.
type tolerated struct {
	Name, Stream string
	Want         Accumulated
}

// tolerates decodes every case's stream with w: it ends cleanly with the wanted content.
func tolerates(t *testing.T, w protocol.ProviderWire, cases []tolerated) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			got, err := DecodeAll(t, w.NewStream(strings.NewReader(tt.Stream)))
			if err != io.EOF {
				t.Fatalf("stream ended with %v, want io.EOF", err)
			}
			AssertAccumulated(t, got, tt.Want)
		})
	}
}

// checkStream decodes data with w: at most one event a byte, and the error that ends the
// stream is returned again (the same value, or with sameText the same text).
func checkStream(t *testing.T, w protocol.ProviderWire, data []byte, sameText bool) {
	st := w.NewStream(bytes.NewReader(data))
	var ev protocol.ModelEvent
	for i := 0; ; i++ {
		err := st.Next(&ev)
		if err != nil {
			if err2 := st.Next(&ev); err2 != err && (!sameText || err2.Error() != err.Error()) {
				t.Fatalf("error changed from %v to %v", err, err2)
			}
			return
		}
		if i > len(data) {
			t.Fatalf("%d events from %d bytes", i, len(data))
		}
	}
}

// transportError cuts frames in half with a read error (a reset connection, a cancelled
// request): w's stream returns it wrapped, never a clean end.
func transportError(t *testing.T, w protocol.ProviderWire, frames []byte) {
	t.Helper()
	boom := errors.New("connection reset by peer")
	r := io.MultiReader(bytes.NewReader(frames[:len(frames)/2]), iotest.ErrReader(boom))
	if _, err := DecodeAll(t, w.NewStream(r)); !errors.Is(err, boom) {
		t.Fatalf("stream ended with %v, want it to wrap %v", err, boom)
	}
}

// anthropicMeta and openaiMeta identify the responses of the moved wire tests.
var (
	anthropicMeta = anthropic.StreamMeta{ID: "msg_test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}
	openaiMeta    = openai.StreamMeta{ID: "chatcmpl-test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}
)

// anthropicTurn plays turn through anthropic's StreamWriter the way the mock does.
func anthropicTurn(t testing.TB, turn *scenarios.ScriptTurn, meta anthropic.StreamMeta) []byte {
	t.Helper()
	var buf bytes.Buffer
	WriteTurn(t, anthropic.NewStreamWriter(&buf, meta, true), turn)
	return buf.Bytes()
}

// openaiTurn plays turn through openai's StreamWriter; includeUsage is stream_options.include_usage.
func openaiTurn(t testing.TB, turn *scenarios.ScriptTurn, meta openai.StreamMeta, includeUsage bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	WriteTurn(t, openai.NewStreamWriter(&buf, meta, includeUsage), turn)
	return buf.Bytes()
}

func TestAnthropicStreamRoundTrip(t *testing.T) {
	t.Parallel()
	alternating := SmallTurn("toolu_")
	alternating.Steps = append([]scenarios.Step{alternating.Steps[2], alternating.Steps[0]}, alternating.Steps[1:]...)
	roundTrips(t, anthropic.Wire{}, "toolu_", func(t testing.TB, turn *scenarios.ScriptTurn) []byte { return anthropicTurn(t, turn, anthropicMeta) }, anthropicMeta.InputTokens, []roundTrip{
		// Text, then thinking, then text again opens a new block each time.
		{Name: "alternating kinds", Turn: alternating, WantStop: protocol.StopToolUse},
	})
}

func TestAnthropicStreamMidStreamError(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("toolu_")
	turn.ErrorAfterStep = 4
	turn.ErrorMessage = "Overloaded"
	midStreamError(t, anthropic.Wire{}, anthropicTurn(t, turn, anthropicMeta), turn, "overloaded_error")
}

// TestStreamTolerance feeds hand-written streams that are odd but valid.
func TestAnthropicStreamTolerance(t *testing.T) {
	t.Parallel()
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	const end = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	tolerates(t, anthropic.Wire{}, []tolerated{
		{
			// Interleaved blocks: two tool_use blocks open side by side, a text block between.
			Name: "interleaved indices",
			Stream: start +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t0\",\"name\":\"a\",\"input\":{}}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"b\",\"input\":{}}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"y\\\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"x\\\":1}\"}}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\":2}\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n" + end,
			Want: Accumulated{Text: "hi", Calls: []scenarios.ScriptToolCall{{ID: "t0", Name: "a", Arguments: `{"x":1}`}, {ID: "t1", Name: "b", Arguments: `{"y":2}`}},
				Stop: protocol.StopToolUse, Usage: protocol.Usage{InputTokens: 5, OutputTokens: 9}, TurnEnds: 1},
		},
		{
			// Pings, unknown events, unknown fields, whitespace, comments, CRLF and empty deltas.
			Name: "noise",
			Stream: ": comment\r\n\r\n" + start + "event: ping\ndata: {\"type\": \"ping\"}\n\n" +
				"event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n" +
				"event: content_block_start\r\ndata: { \"type\" : \"content_block_start\" , \"index\" : 0 , \"content_block\" : { \"type\" : \"thinking\" , \"thinking\" : \"\" , \"signature\": \"\" , \"new\": [1] } }\r\n\r\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"abc=\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"xyz\"}}\n\n" +
				"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
				"event: ping\ndata: {\"type\": \"ping\"}\n\n" + end,
			Want: Accumulated{Thinking: "hm", Stop: protocol.StopToolUse, Usage: protocol.Usage{InputTokens: 5, OutputTokens: 9}, TurnEnds: 1},
		},
	})
}

func FuzzAnthropicNewStream(f *testing.F) {
	f.Add(anthropicTurn(f, SmallTurn("toolu_"), anthropicMeta))
	errTurn := SmallTurn("toolu_")
	errTurn.ErrorAfterStep = 1
	f.Add(anthropicTurn(f, errTurn, anthropicMeta))
	f.Add([]byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":-1}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkStream(t, anthropic.Wire{}, data, false) })
}

func TestOpenAIStreamRoundTrip(t *testing.T) {
	t.Parallel()
	roundTrips(t, openai.Wire{}, "call_", func(t testing.TB, turn *scenarios.ScriptTurn) []byte { return openaiTurn(t, turn, openaiMeta, true) }, openaiMeta.InputTokens, nil)
}

func TestOpenAIStreamMidStreamError(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("call_")
	turn.ErrorAfterStep = 3
	turn.ErrorMessage = "boom"
	midStreamError(t, openai.Wire{}, openaiTurn(t, turn, openaiMeta, true), turn, "server_error")
}

// TestStreamTolerance feeds hand-written streams that are odd but valid.
func TestOpenAIStreamTolerance(t *testing.T) {
	t.Parallel()
	const head = `"id":"x","object":"chat.completion.chunk","created":1,"model":"m"`
	tolerates(t, openai.Wire{}, []tolerated{
		{
			// Unknown fields, extra whitespace, CRLF line ends, comments and an event name.
			Name: "unknown fields and whitespace",
			Stream: ": hello\r\n\r\nevent: message\r\ndata:  { " + head + ` , "x_new": {"a":[1,2]}, "choices" : [ { "index" : 0 , "delta" : { "content" : "Hi" , "audio": null } , "finish_reason" : null } ] }` + "\r\n\r\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: Accumulated{Text: "Hi", Stop: protocol.StopEndTurn, TurnEnds: 1},
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
			Want: Accumulated{Text: "a", Stop: protocol.StopMaxToken, Usage: protocol.Usage{InputTokens: 3, OutputTokens: 4}, TurnEnds: 1},
		},
		{
			// A server that closes after the finish_reason and usage without [DONE].
			Name: "no done marker",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}` + "\n\n" +
				"data: {" + head + `,"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}` + "\n\n",
			Want: Accumulated{Text: "a", Stop: protocol.StopEndTurn, Usage: protocol.Usage{InputTokens: 1, OutputTokens: 2}, TurnEnds: 1},
		},
		{
			// A provider that repeats the id and name on every tool delta starts the call once.
			Name: "repeated tool id",
			Stream: "data: {" + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":":1}"}}]}}]}` + "\n\n" +
				"data: {" + head + `,"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			Want: Accumulated{Calls: []scenarios.ScriptToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}, Stop: protocol.StopToolUse, TurnEnds: 1},
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
			Want: Accumulated{Thinking: "think more", Text: "a", Stop: protocol.StopEndTurn, TurnEnds: 1},
		},
	})
}

func FuzzOpenAINewStream(f *testing.F) {
	f.Add(openaiTurn(f, SmallTurn("call_"), openaiMeta, true))
	errTurn := SmallTurn("call_")
	errTurn.ErrorAfterStep = 1
	f.Add(openaiTurn(f, errTurn, openaiMeta, false))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-1}]}}]}\n\ndata: [DONE]\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) { checkStream(t, openai.Wire{}, data, true) })
}

// streamError is a stream a wire's decoder refuses, and what its error says.
type streamError struct{ Name, Stream, WantErr string }

// streamErrors decodes every case with w: the error contains WantErr, and sticks.
func streamErrors(t *testing.T, w protocol.ProviderWire, cases []streamError) {
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

// badSteps: a step for a tool the turn lacks, or of no known kind, is an error naming it.
func badSteps(t *testing.T, w TurnWriter, turn *scenarios.ScriptTurn) {
	t.Helper()
	err := w.Step(turn, &scenarios.Step{Kind: scenarios.StepToolArgs, Tool: 5, Text: "{}"})
	if err == nil || !strings.Contains(err.Error(), "step for tool 5, but the turn has 2 tool calls") {
		t.Errorf("error = %v", err)
	}
	if err := w.Step(turn, &scenarios.Step{Kind: 99}); err == nil || !strings.Contains(err.Error(), "unknown step kind 99") {
		t.Errorf("error = %v", err)
	}
}

func TestAnthropicStreamErrors(t *testing.T) {
	t.Parallel()
	const start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n"
	const textStart = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
	streamErrors(t, anthropic.Wire{}, []streamError{
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

func TestAnthropicStreamWriterBadStep(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("toolu_")
	w := anthropic.NewStreamWriter(io.Discard, anthropicMeta, true)
	badSteps(t, w, turn)
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

func TestOpenAIStreamErrors(t *testing.T) {
	t.Parallel()
	const head = `"id":"x","object":"chat.completion.chunk","created":1,"model":"m"`
	streamErrors(t, openai.Wire{}, []streamError{
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

func TestOpenAIStreamWriterBadStep(t *testing.T) {
	t.Parallel()
	turn := SmallTurn("call_")
	w := openai.NewStreamWriter(io.Discard, openaiMeta, false)
	badSteps(t, w, turn)
}

// LibraryRoundTrip writes every turn of every embedded scenario with write and decodes it back
// with decode: the script's ground truth must come back, a mid-stream fault as a ProviderError.
func LibraryRoundTrip(t *testing.T, write func(t testing.TB, turn *scenarios.ScriptTurn, id string) []byte, decode func(t testing.TB, r io.Reader) (Accumulated, error)) {
	t.Helper()
	lib := scenarios.Embedded()
	if lib.Len() == 0 {
		t.Fatal("embedded library is empty")
	}
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		for _, seed := range []uint64{1, 7, 42} {
			t.Run(fmt.Sprintf("%s/seed=%d", name, seed), func(t *testing.T) {
				t.Parallel()
				script := sc.Render(seed)
				exp := script.Expected()
				for i := range script.Turns {
					turn := &script.Turns[i]
					if turn.HTTPStatus != 0 {
						continue // answered before any stream: nothing on this wire
					}
					got, err := decode(t, bytes.NewReader(write(t, turn, fmt.Sprintf("%s-%d", name, i))))
					want := Accumulated{Thinking: exp.Turns[i].Thinking, Text: exp.Turns[i].Text}
					if turn.ErrorAfterStep >= 0 {
						var perr *protocol.ProviderError
						if !errors.As(err, &perr) || perr.Message != turn.ErrorMessage {
							t.Fatalf("turn %d: stream ended with %v, want the provider error %q", i, err, turn.ErrorMessage)
						}
						got.Calls = nil // a failed turn's partial calls are not part of the ground truth
					} else {
						if err != io.EOF {
							t.Fatalf("turn %d: stream ended with %v", i, err)
						}
						want.Stop, want.TurnEnds = protocol.StopEndTurn, 1
						if len(turn.ToolCalls) > 0 {
							want.Stop = protocol.StopToolUse
						}
						want.Usage = protocol.Usage{InputTokens: turn.InputTokens, OutputTokens: turn.OutputTokens}
						for _, c := range exp.Turns[i].ToolCalls {
							want.Calls = append(want.Calls, scenarios.ScriptToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
						}
					}
					AssertAccumulated(t, got, want)
				}
			})
		}
	}
}

// Accumulated is what a runtime builds from a decoded turn.
type Accumulated struct {
	Thinking, Text string
	Calls          []scenarios.ScriptToolCall
	Stop           protocol.StopReason
	Usage          protocol.Usage
	TurnEnds       int
}

// DecodeAll drains st, checking its invariants, and returns its accumulation and final error.
func DecodeAll(t testing.TB, st protocol.ModelStream) (Accumulated, error) {
	t.Helper()
	var acc Accumulated
	var ev protocol.ModelEvent
	for {
		err := st.Next(&ev)
		if err != nil {
			return acc, err
		}
		if acc.TurnEnds > 0 {
			t.Fatalf("event %+v after ModelTurnEnd", ev)
		}
		switch ev.Kind {
		case protocol.ModelThinking:
			acc.Thinking += ev.Text
		case protocol.ModelText:
			acc.Text += ev.Text
		case protocol.ModelToolStart:
			if ev.ToolIndex != len(acc.Calls) {
				t.Fatalf("tool start index %d, want %d", ev.ToolIndex, len(acc.Calls))
			}
			acc.Calls = append(acc.Calls, scenarios.ScriptToolCall{ID: ev.ToolID, Name: ev.ToolName})
		case protocol.ModelToolArgs:
			if ev.ToolIndex >= len(acc.Calls) {
				t.Fatalf("tool args for index %d before its start", ev.ToolIndex)
			}
			acc.Calls[ev.ToolIndex].Arguments += ev.Text
		case protocol.ModelTurnEnd:
			acc.Stop, acc.Usage = ev.StopReason, ev.Usage
			acc.TurnEnds++
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
}

// WantFromTurn is the accumulation a turn must decode to, up to step upTo.
func WantFromTurn(turn *scenarios.ScriptTurn, upTo int) Accumulated {
	var want Accumulated
	for i := range turn.Steps {
		if i > upTo {
			break
		}
		st := &turn.Steps[i]
		switch st.Kind {
		case scenarios.StepThinking:
			want.Thinking += st.Text
		case scenarios.StepText:
			want.Text += st.Text
		case scenarios.StepToolArgs:
			for len(want.Calls) <= st.Tool {
				c := turn.ToolCalls[len(want.Calls)]
				want.Calls = append(want.Calls, scenarios.ScriptToolCall{ID: c.ID, Name: c.Name})
			}
			want.Calls[st.Tool].Arguments += st.Text
		}
	}
	return want
}

// AssertAccumulated fails t when got and want differ, showing both.
func AssertAccumulated(t testing.TB, got, want Accumulated) {
	t.Helper()
	gj, _ := json.MarshalIndent(got, "", " ")
	wj, _ := json.MarshalIndent(want, "", " ")
	if !bytes.Equal(gj, wj) {
		t.Errorf("decoded turn differs\ngot:  %s\nwant: %s", gj, wj)
	}
}

// providerWire is a provider wire under test and its mock side: a writer of a turn (with usage)
// and the prefixes of its response and tool call ids.
type providerWire struct {
	name                 string
	wire                 protocol.ProviderWire
	newWriter            func(io.Writer, jsonwire.StreamMeta) TurnWriter
	idPrefix, toolPrefix string
}

// providerWires are the wires the suites below run over.
var providerWires = []providerWire{
	{"anthropic", anthropic.Wire{}, func(w io.Writer, m jsonwire.StreamMeta) TurnWriter { return anthropic.NewStreamWriter(w, m, true) }, "msg_", "toolu_"},
	{"openai", openai.Wire{}, func(w io.Writer, m jsonwire.StreamMeta) TurnWriter { return openai.NewStreamWriter(w, m, true) }, "chatcmpl-", "call_"},
}

// frames plays turn through the wire's writer with meta, the way the mock does.
func (pw providerWire) frames(t testing.TB, turn *scenarios.ScriptTurn, meta jsonwire.StreamMeta) []byte {
	t.Helper()
	var buf bytes.Buffer
	WriteTurn(t, pw.newWriter(&buf, meta), turn)
	return buf.Bytes()
}

// TestStreamTransportError: on every wire, a read error mid-stream (a reset connection, a
// cancelled request) comes back wrapped, never as a clean end.
func TestStreamTransportError(t *testing.T) {
	t.Parallel()
	for _, pw := range providerWires {
		t.Run(pw.name, func(t *testing.T) {
			t.Parallel()
			transportError(t, pw.wire, pw.frames(t, SmallTurn(pw.toolPrefix), jsonwire.StreamMeta{ID: pw.idPrefix + "test1", Model: "sim-model", Created: 1700000000, InputTokens: 42}))
		})
	}
}

// TestLibraryRoundTrip writes, on every wire, every turn of every embedded scenario for a few
// seeds, and decodes it back against the script's ground truth (see LibraryRoundTrip).
func TestLibraryRoundTrip(t *testing.T) {
	t.Parallel()
	for _, pw := range providerWires {
		t.Run(pw.name, func(t *testing.T) {
			t.Parallel()
			LibraryRoundTrip(t, func(t testing.TB, turn *scenarios.ScriptTurn, id string) []byte {
				return pw.frames(t, turn, jsonwire.StreamMeta{ID: pw.idPrefix + id, Model: "sim", Created: 1})
			}, func(t testing.TB, r io.Reader) (Accumulated, error) { return DecodeAll(t, pw.wire.NewStream(r)) })
		})
	}
}
