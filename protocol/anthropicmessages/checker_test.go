package anthropicmessages

import (
	"fmt"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
)

// ev is one named event whose data is the JSON object fields (type included).
func ev(typ, fields string) string {
	if fields != "" {
		fields = "," + fields
	}
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, fields)
}

var (
	start     = ev("message_start", `"message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`)
	ping      = ev("ping", "")
	textStart = ev("content_block_start", `"index":0,"content_block":{"type":"text","text":""}`)
	textDelta = ev("content_block_delta", `"index":0,"delta":{"type":"text_delta","text":"Hi"}`)
	stop0     = ev("content_block_stop", `"index":0`)
	msgDelta  = ev("message_delta", `"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}`)
	toolDelta = ev("message_delta", `"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":2}`)
	msgStop   = ev("message_stop", "")
)

func toolStart(i int, id string) string {
	return ev("content_block_start", fmt.Sprintf(`"index":%d,"content_block":{"type":"tool_use","id":%q,"name":"search","input":{}}`, i, id))
}

func toolArgs(i int, piece string) string {
	return ev("content_block_delta", fmt.Sprintf(`"index":%d,"delta":{"type":"input_json_delta","partial_json":%q}`, i, piece))
}

func stop(i int) string { return ev("content_block_stop", fmt.Sprintf(`"index":%d`, i)) }

// TestCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestCheckerRules(t *testing.T) {
	t.Parallel()
	text := textStart + textDelta + stop0
	tools := toolStart(0, "a") + toolStart(1, "b") + toolArgs(1, `{"u":`) + toolArgs(0, `{"q":1}`) + stop(0) + toolArgs(1, `2}`) + stop(1)
	clienttest.CheckRules(t, newChecker, []clienttest.Rule{
		// A well-formed answer.
		{Name: "clean", Stream: start + ping + text + msgDelta + msgStop},
		// Two tool_use blocks interleaved, each assembling its own input.
		{Name: "interleaved tools", Stream: start + tools + toolDelta + msgStop},
		// A tool_use block without any input_json_delta is an empty input.
		{Name: "no input", Stream: start + toolStart(0, "a") + stop(0) + toolDelta + msgStop},
		// Pings before message_start and between everything; an unknown event type.
		{Name: "pings and unknown", Stream: ping + start + ping + text + ev("future_event", "") + msgDelta + ping + msgStop},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: start + textStart + textDelta, Aborted: true},
		// Data that is not JSON.
		{Name: "not json", Stream: "event: ping\ndata: {x\n\n" + start + text + msgDelta + msgStop, Want: []protocol.Rule{protocol.RFraming}},
		// The event name and the data's type disagree.
		{Name: "event name", Stream: start + "event: content_block_delta\ndata: {\"type\":\"ping\"}\n\n" + text + msgDelta + msgStop, Want: []protocol.Rule{protocol.RFraming}},
		// A block before message_start.
		{Name: "start not first", Stream: text + start + msgDelta + msgStop, Want: []protocol.Rule{RMessage}},
		// message_start twice.
		{Name: "two starts", Stream: start + start + text + msgDelta + msgStop, Want: []protocol.Rule{RMessage}},
		// Two message_delta events.
		{Name: "two deltas", Stream: start + text + msgDelta + msgDelta + msgStop, Want: []protocol.Rule{RMessage}},
		// message_delta without a stop_reason.
		{Name: "no stop reason", Stream: start + text + ev("message_delta", `"delta":{},"usage":{"output_tokens":2}`) + msgStop, Want: []protocol.Rule{RMessage}},
		// A usage past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: start + text + ev("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9223372036854775807}`) + msgStop, Want: []protocol.Rule{RMessage}},
		// A negative usage.
		{Name: "usage negative", Stream: start + text + ev("message_delta", `"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":-5}`) + msgStop, Want: []protocol.Rule{RMessage}},
		// stop_reason tool_use with no tool_use block.
		{Name: "tool_use without tool", Stream: start + text + toolDelta + msgStop, Want: []protocol.Rule{RMessage}},
		// message_stop with no message_delta before it.
		{Name: "stop without delta", Stream: start + text + msgStop, Want: []protocol.Rule{RMessage}},
		// A block after message_delta.
		{Name: "block after delta", Stream: start + msgDelta + text + msgStop, Want: []protocol.Rule{RMessage}},
		// An event after message_stop.
		{Name: "after stop", Stream: start + text + msgDelta + msgStop + textDelta, Want: []protocol.Rule{RMessage}},
		// The stream ends after message_delta.
		{Name: "no message_stop", Stream: start + text + msgDelta, Want: []protocol.Rule{RMessage}},
		// Block index 1 started first.
		{Name: "index skipped", Stream: start + ev("content_block_start", `"index":1,"content_block":{"type":"text","text":""}`) + stop(1) + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// A delta for a block never started.
		{Name: "delta unstarted", Stream: start + text + ev("content_block_delta", `"index":3,"delta":{"type":"text_delta","text":"x"}`) + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// A delta after its block's stop.
		{Name: "delta after stop", Stream: start + text + textDelta + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// A stop for a block already stopped.
		{Name: "stop twice", Stream: start + text + stop0 + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// input_json_delta on a text block.
		{Name: "delta type", Stream: start + textStart + toolArgs(0, "{}") + stop0 + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// A tool_use block without id.
		{Name: "tool without id", Stream: start + toolStart(0, "") + toolArgs(0, "{}") + stop(0) + toolDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// partial_json that does not assemble to an object.
		{Name: "bad input", Stream: start + toolStart(0, "a") + toolArgs(0, `{"q":`) + stop(0) + toolDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// A block still open at message_delta.
		{Name: "open at delta", Stream: start + textStart + textDelta + msgDelta + msgStop, Want: []protocol.Rule{RBlock}},
		// The stream ends with a block open and no message_delta.
		{Name: "open at end", Stream: start + textStart + textDelta, Want: []protocol.Rule{RMessage, RBlock}},
		// An error event without a message.
		{Name: "error without message", Stream: start + ev("error", `"error":{"type":"overloaded_error"}`), Want: []protocol.Rule{RError}},
		// An event after the error.
		{Name: "after error", Stream: start + ev("error", `"error":{"type":"overloaded_error","message":"x"}`) + msgStop, Want: []protocol.Rule{RError}},
	})
}

// FuzzChecker feeds arbitrary events to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzChecker(f *testing.F) {
	clienttest.FuzzChecker(f, newChecker,
		start+textStart+textDelta+stop0+msgDelta+msgStop,
		start+toolStart(0, "a")+toolArgs(0, "{")+toolDelta,
		ev("error", `"error":{"type":"x","message":"y"}`),
	)
}

// newChecker is NewChecker as a protocol.Checker, for the clienttest kit.
func newChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }
