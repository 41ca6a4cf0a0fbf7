package clientturn_test

import (
	"fmt"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
)

// amEv is one named event whose data is the JSON object fields (type included).
func amEv(typ, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, fields)
}

var (
	amStart     = amEv("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`)
	amPing      = amEv("ping", "")
	amTextStart = amEv("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`)
	amTextDelta = amEv("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"Hi"}`)
	amStop0     = amEv("content_block_stop", `"index":0`)
	amMsgDelta  = amEv("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}`)
	amToolDelta = amEv("message_delta", `"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}`)
	amMsgStop   = amEv("message_stop", "")
)

func amToolStart(i int, id string) string {
	return amEv("content_block_start", fmt.Sprintf(`"index":%d,"content_block":{"type":"tool_use","id":%q,"name":"search","input":{}}`, i, id))
}

func amToolArgs(i int, piece string) string {
	return amEv("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":"input_json_delta","partial_json":%q}`, i, piece))
}

func amStop(i int) string { return amEv("content_block_stop", fmt.Sprintf(`"index":%d`, i)) }

// TestAnthropicMessagesCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestAnthropicMessagesCheckerRules(t *testing.T) {
	t.Parallel()
	text := amTextStart + amTextDelta + amStop0
	tools := amToolStart(0, "a") + amToolStart(1, "b") + amToolArgs(1, `{"u":`) + amToolArgs(0, `{"q":1}`) + amStop(0) + amToolArgs(1, `2}`) + amStop(1)
	CheckRules(t, amNewChecker, []Rule{
		// A well-formed answer.
		{Name: "clean", Stream: amStart + amPing + text + amMsgDelta + amMsgStop},
		// Two tool_use blocks interleaved, each assembling its own input.
		{Name: "interleaved tools", Stream: amStart + tools + amToolDelta + amMsgStop},
		// A tool_use block without any input_json_delta is an empty input.
		{Name: "no input", Stream: amStart + amToolStart(0, "a") + amStop(0) + amToolDelta + amMsgStop},
		// Pings before message_start and between everything; an unknown event type.
		{Name: "pings and unknown", Stream: amPing + amStart + amPing + text + amEv("future_event", "") + amMsgDelta + amPing + amMsgStop},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: amStart + amTextStart + amTextDelta, Aborted: true},
		// Data that is not JSON.
		{Name: "not json", Stream: "event: ping\ndata: {x\n\n" + amStart + text + amMsgDelta + amMsgStop, Want: []protocol.Rule{protocol.RFraming}},
		// The event name and the data's type disagree.
		{Name: "event name", Stream: amStart + "event: content_block_delta\ndata: {\"type\":\"ping\"}\n\n" + text + amMsgDelta + amMsgStop, Want: []protocol.Rule{protocol.RFraming}},
		// A block before message_start.
		{Name: "start not first", Stream: text + amStart + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// message_start twice.
		{Name: "two starts", Stream: amStart + amStart + text + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// Two message_delta events.
		{Name: "two deltas", Stream: amStart + text + amMsgDelta + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// message_delta without a stop_reason.
		{Name: "no stop reason", Stream: amStart + text + amEv("message_delta", `"delta":{},"usage":{"output_tokens":2}`) + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// A usage past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: amStart + text + amEv("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9223372036854775807}`) + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// A negative usage.
		{Name: "usage negative", Stream: amStart + text + amEv("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-5}`) + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// stop_reason tool_use with no tool_use block.
		{Name: "tool_use without tool", Stream: amStart + text + amToolDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// message_stop with no message_delta before it.
		{Name: "stop without delta", Stream: amStart + text + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// A block after message_delta.
		{Name: "block after delta", Stream: amStart + amMsgDelta + text + amMsgStop, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// An event after message_stop.
		{Name: "after stop", Stream: amStart + text + amMsgDelta + amMsgStop + amTextDelta, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// The stream ends after message_delta.
		{Name: "no message_stop", Stream: amStart + text + amMsgDelta, Want: []protocol.Rule{anthropicmessages.RMessage}},
		// Block index 1 started first.
		{Name: "index skipped", Stream: amStart + amEv("content_block_start", `"index":1,"content_block":{"type":"text","text":""}`) + amStop(1) + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// A delta for a block never started.
		{Name: "delta unstarted", Stream: amStart + text + amEv("content_block_delta", `"index":3,"delta":{"type":"text_delta","text":"x"}`) + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// A delta after its block's stop.
		{Name: "delta after stop", Stream: amStart + text + amTextDelta + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// A stop for a block already stopped.
		{Name: "stop twice", Stream: amStart + text + amStop0 + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// input_json_delta on a text block.
		{Name: "delta type", Stream: amStart + amTextStart + amToolArgs(0, "{}") + amStop0 + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// A tool_use block without id.
		{Name: "tool without id", Stream: amStart + amToolStart(0, "") + amToolArgs(0, "{}") + amStop(0) + amToolDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// partial_json that does not assemble to an object.
		{Name: "bad input", Stream: amStart + amToolStart(0, "a") + amToolArgs(0, `{"q":`) + amStop(0) + amToolDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// A block still open at message_delta.
		{Name: "open at delta", Stream: amStart + amTextStart + amTextDelta + amMsgDelta + amMsgStop, Want: []protocol.Rule{anthropicmessages.RBlock}},
		// The stream ends with a block open and no message_delta.
		{Name: "open at end", Stream: amStart + amTextStart + amTextDelta, Want: []protocol.Rule{anthropicmessages.RMessage, anthropicmessages.RBlock}},
		// An error event without a message.
		{Name: "error without message", Stream: amStart + amEv("error", `"error":{"type":"overloaded_error"}`), Want: []protocol.Rule{anthropicmessages.RError}},
		// An event after the error.
		{Name: "after error", Stream: amStart + amEv("error", `"error":{"type":"overloaded_error","message":"x"}`) + amMsgStop, Want: []protocol.Rule{anthropicmessages.RError}},
	})
}

// FuzzAnthropicMessagesChecker feeds arbitrary events to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzAnthropicMessagesChecker(f *testing.F) {
	fuzzChecker(f, amNewChecker,
		amStart+amTextStart+amTextDelta+amStop0+amMsgDelta+amMsgStop,
		amStart+amToolStart(0, "a")+amToolArgs(0, "{")+amToolDelta,
		amEv("error", `"error":{"type":"x","message":"y"}`),
	)
}

// amNewChecker is NewChecker as a protocol.Checker, for the clienttest kit.
func amNewChecker(s *protocol.Session) protocol.Checker { return anthropicmessages.NewChecker(s) }
