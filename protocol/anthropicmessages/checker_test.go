package anthropicmessages

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/sse"
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

// judge feeds a raw stream to a structure-only checker (aborted: cut by the client).
func judge(t *testing.T, stream string, aborted bool) []protocol.Violation {
	t.Helper()
	s := clienttest.NewSession(t, "plain-answer", 1)
	s.NoGroundTruth, s.Aborted = true, aborted
	c := NewChecker(s)
	dec := sse.NewDecoder(strings.NewReader(stream))
	var e sse.Event
	for {
		err := dec.Next(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Observe(&e)
	}
	return c.Finish(nil)
}

// TestCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestCheckerRules(t *testing.T) {
	t.Parallel()
	text := textStart + textDelta + stop0
	tools := toolStart(0, "a") + toolStart(1, "b") + toolArgs(1, `{"u":`) + toolArgs(0, `{"q":1}`) + stop(0) + toolArgs(1, `2}`) + stop(1)
	tests := []struct {
		name    string
		stream  string
		aborted bool
		want    []protocol.Rule
	}{
		// A well-formed answer.
		{"clean", start + ping + text + msgDelta + msgStop, false, nil},
		// Two tool_use blocks interleaved, each assembling its own input.
		{"interleaved tools", start + tools + toolDelta + msgStop, false, nil},
		// A tool_use block without any input_json_delta is an empty input.
		{"no input", start + toolStart(0, "a") + stop(0) + toolDelta + msgStop, false, nil},
		// Pings before message_start and between everything; an unknown event type.
		{"pings and unknown", ping + start + ping + text + ev("future_event", "") + msgDelta + ping + msgStop, false, nil},
		// A cut stream is not required to end.
		{"aborted", start + textStart + textDelta, true, nil},
		// Data that is not JSON.
		{"not json", "event: ping\ndata: {x\n\n" + start + text + msgDelta + msgStop, false, []protocol.Rule{protocol.RFraming}},
		// The event name and the data's type disagree.
		{"event name", start + "event: content_block_delta\ndata: {\"type\":\"ping\"}\n\n" + text + msgDelta + msgStop, false, []protocol.Rule{protocol.RFraming}},
		// A block before message_start.
		{"start not first", text + start + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// message_start twice.
		{"two starts", start + start + text + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// Two message_delta events.
		{"two deltas", start + text + msgDelta + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// message_delta without a stop_reason.
		{"no stop reason", start + text + ev("message_delta", `"delta":{},"usage":{"output_tokens":2}`) + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// stop_reason tool_use with no tool_use block.
		{"tool_use without tool", start + text + toolDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// message_stop with no message_delta before it.
		{"stop without delta", start + text + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// A block after message_delta.
		{"block after delta", start + msgDelta + text + msgStop, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// An event after message_stop.
		{"after stop", start + text + msgDelta + msgStop + textDelta, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// The stream ends after message_delta.
		{"no message_stop", start + text + msgDelta, false, []protocol.Rule{protocol.RAnthropicMessage}},
		// Block index 1 started first.
		{"index skipped", start + ev("content_block_start", `"index":1,"content_block":{"type":"text","text":""}`) + stop(1) + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// A delta for a block never started.
		{"delta unstarted", start + text + ev("content_block_delta", `"index":3,"delta":{"type":"text_delta","text":"x"}`) + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// A delta after its block's stop.
		{"delta after stop", start + text + textDelta + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// A stop for a block already stopped.
		{"stop twice", start + text + stop0 + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// input_json_delta on a text block.
		{"delta type", start + textStart + toolArgs(0, "{}") + stop0 + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// A tool_use block without id.
		{"tool without id", start + toolStart(0, "") + toolArgs(0, "{}") + stop(0) + toolDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// partial_json that does not assemble to an object.
		{"bad input", start + toolStart(0, "a") + toolArgs(0, `{"q":`) + stop(0) + toolDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// A block still open at message_delta.
		{"open at delta", start + textStart + textDelta + msgDelta + msgStop, false, []protocol.Rule{protocol.RAnthropicBlock}},
		// The stream ends with a block open and no message_delta.
		{"open at end", start + textStart + textDelta, false, []protocol.Rule{protocol.RAnthropicMessage, protocol.RAnthropicBlock}},
		// An error event without a message.
		{"error without message", start + ev("error", `"error":{"type":"overloaded_error"}`), false, []protocol.Rule{protocol.RAnthropicError}},
		// An event after the error.
		{"after error", start + ev("error", `"error":{"type":"overloaded_error","message":"x"}`) + msgStop, false, []protocol.Rule{protocol.RAnthropicError}},
	}
	for _, tt := range tests {
		vs := judge(t, tt.stream, tt.aborted)
		if got := clienttest.Rules(vs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: rules %v, want %v; violations %v", tt.name, got, tt.want, vs)
		}
	}
}

// FuzzChecker feeds arbitrary events to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzChecker(f *testing.F) {
	f.Add([]byte(start + textStart + textDelta + stop0 + msgDelta + msgStop))
	f.Add([]byte(start + toolStart(0, "a") + toolArgs(0, "{") + toolDelta))
	f.Add([]byte(ev("error", `"error":{"type":"x","message":"y"}`)))
	session := clienttest.NewSession(f, "parallel-tools", 1)
	f.Fuzz(func(t *testing.T, stream []byte) {
		s := *session
		c := NewChecker(&s)
		dec := sse.NewDecoder(strings.NewReader(string(stream)))
		var e sse.Event
		var err error
		for err = dec.Next(&e); err == nil; err = dec.Next(&e) {
			c.Observe(&e)
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
		for _, v := range c.Finish(err) {
			if v.Rule == "" {
				t.Fatalf("violation without a rule: %+v", v)
			}
		}
	})
}
