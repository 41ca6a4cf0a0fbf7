package clientturn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// orEv is one event frame: the event: line typ and its JSON body, the type and a
// sequence_number seq first, then rest (members with a leading comma, or "").
func orEv(typ string, seq int, rest string) string {
	return orEvNamed(typ, typ, seq, rest)
}

// orEvNamed is ev with an event: line that may differ from the body's type.
func orEvNamed(line, typ string, seq int, rest string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", line, typ, seq, rest)
}

const (
	orMsgID  = `"item_id":"msg_1","output_index":0`
	orMsgRef = orMsgID + `,"content_index":0`
	orUsage  = `"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}`
	orDone   = "data: [DONE]\n\n"
)

// orResponse is a response object with status, output and usage (JSON members, or "").
func orResponse(status, output, usage string) string {
	r := `,"response":{"id":"resp_1","object":"response","status":"` + status + `","output":[` + output + `]`
	if usage != "" {
		r += "," + usage
	}
	return r + "}"
}

// orTextItem is a completed message item with text.
func orTextItem(status, text string) string {
	return `{"id":"msg_1","type":"message","status":"` + status + `","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"` + text + `"}]}`
}

// orStart is response.created and response.in_progress at sequence numbers 0 and 1.
var orStart = orEv("response.created", 0, orResponse("in_progress", "", "")) + orEv("response.in_progress", 1, orResponse("in_progress", "", ""))

// orMessage streams a message item with text "Hi" as two deltas from sequence number n on,
// returning the frames and the next sequence number.
func orMessage(n int) (string, int) {
	s := orEv("response.output_item.added", n, `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
		orEv("response.content_part.added", n+1, ","+orMsgRef+`,"part":{"type":"output_text","annotations":[],"text":""}`) +
		orEv("response.output_text.delta", n+2, ","+orMsgRef+`,"delta":"H"`) +
		orEv("response.output_text.delta", n+3, ","+orMsgRef+`,"delta":"i"`) +
		orEv("response.output_text.done", n+4, ","+orMsgRef+`,"text":"Hi"`) +
		orEv("response.content_part.done", n+5, ","+orMsgRef+`,"part":{"type":"output_text","annotations":[],"text":"Hi"}`) +
		orEv("response.output_item.done", n+6, `,"output_index":0,"item":`+orTextItem("completed", "Hi"))
	return s, n + 7
}

// orCompleted is response.completed at sequence number n with the message item.
func orCompleted(n int) string {
	return orEv("response.completed", n, orResponse("completed", orTextItem("completed", "Hi"), orUsage))
}

// orCall streams function_call item 0 with arguments {"q":1} from sequence number n.
func orCall(n int) (string, int) {
	ref := `,"item_id":"fc_1","output_index":0`
	s := orEv("response.output_item.added", n, `,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_a","name":"search","arguments":""}`) +
		orEv("response.function_call_arguments.delta", n+1, ref+`,"delta":"{\"q\":"`) +
		orEv("response.function_call_arguments.delta", n+2, ref+`,"delta":"1}"`) +
		orEv("response.function_call_arguments.done", n+3, ref+`,"arguments":"{\"q\":1}"`) +
		orEv("response.output_item.done", n+4, `,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_a","name":"search","arguments":"{\"q\":1}"}`)
	return s, n + 5
}

// TestOpenAIResponsesCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth: each row breaks exactly the rules it names.
func TestOpenAIResponsesCheckerRules(t *testing.T) {
	t.Parallel()
	msg, n := orMessage(2)
	skipped, skippedN := orMessage(6)
	clean := orStart + msg + orCompleted(n)
	fc, fn := orCall(2)
	callItem := `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_a","name":"search","arguments":"{\"q\":1}"}`
	reasoningRef := `"item_id":"rs_1","output_index":0`
	failed := orEv("response.failed", n, `,"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"boom"}}`)
	errorEvent := orEv("error", n, `,"code":"server_error","message":"boom","param":null`)
	CheckRules(t, orNewChecker, []Rule{
		// A well-formed answer, with and without data: [DONE] (lenient by default).
		{Name: "clean", Stream: clean + orDone},
		{Name: "clean without [DONE]", Stream: clean},
		// A well-formed function call.
		{Name: "clean call", Stream: orStart + fc + orEv("response.completed", fn, orResponse("completed", callItem, orUsage)) + orDone},
		// Reasoning as a summary part, OpenAI's reasoning models' way (no status on the item).
		{Name: "clean summary", Stream: orStart +
			orEv("response.output_item.added", 2, `,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
			orEv("response.reasoning_summary_part.added", 3, ","+reasoningRef+`,"summary_index":0,"part":{"type":"summary_text","text":""}`) +
			orEv("response.reasoning_summary_text.delta", 4, ","+reasoningRef+`,"summary_index":0,"delta":"hm"`) +
			orEv("response.reasoning_summary_text.done", 5, ","+reasoningRef+`,"summary_index":0,"text":"hm"`) +
			orEv("response.reasoning_summary_part.done", 6, ","+reasoningRef+`,"summary_index":0,"part":{"type":"summary_text","text":"hm"}`) +
			orEv("response.output_item.done", 7, `,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]}`) +
			orEv("response.completed", 8, orResponse("completed", `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]}`, orUsage))},
		// Unknown and extension events are ignored; sequence numbers may skip.
		{Name: "unknown events", Stream: orStart + orEv("response.queued", 2, "") + orEv("acme:trace_event", 5, `,"phase":"x"`) + skipped + orCompleted(skippedN+10)},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: orStart + msg, Aborted: true},
		// A frame that is not JSON.
		{Name: "not json", Stream: orStart + "event: x\ndata: {oops\n\n" + msg + orCompleted(n), Want: []protocol.Rule{protocol.RFraming}},
		// The event: line is not the type.
		{Name: "event line", Stream: orStart + strings.Replace(msg, "event: response.output_text.delta\n", "event: response.text.delta\n", 1) + orCompleted(n),
			Want: []protocol.Rule{openairesponses.REvent}},
		// No event: line at all.
		{Name: "no event line", Stream: strings.Replace(orStart, "event: response.in_progress\n", "", 1) + msg + orCompleted(n), Want: []protocol.Rule{openairesponses.REvent}},
		// A delta without its delta member.
		{Name: "no delta", Stream: orStart + strings.Replace(msg, `,"delta":"i"`, "", 1) + orCompleted(n), Want: []protocol.Rule{openairesponses.REvent, openairesponses.RText}},
		// A repeated sequence_number.
		{Name: "sequence repeats", Stream: orStart + strings.Replace(msg, `"sequence_number":3`, `"sequence_number":2`, 1) + orCompleted(n),
			Want: []protocol.Rule{openairesponses.RSequence}},
		// A missing sequence_number.
		{Name: "no sequence", Stream: strings.Replace(orStart, `,"sequence_number":1`, "", 1) + msg + orCompleted(n), Want: []protocol.Rule{openairesponses.RSequence}},
		// response.created missing.
		{Name: "no created", Stream: orEv("response.in_progress", 1, orResponse("in_progress", "", "")) + msg + orCompleted(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// Two terminals.
		{Name: "two terminals", Stream: clean + orCompleted(n+1), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// A terminal whose response says otherwise.
		{Name: "status differs", Stream: orStart + msg + orEv("response.completed", n, orResponse("in_progress", orTextItem("completed", "Hi"), orUsage)), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// [DONE] before the terminal.
		{Name: "done early", Stream: orStart + msg + orDone + orCompleted(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// The stream ends without a terminal (the load generator's truncated outcome; judged
		// here when Finish is told the stream ended cleanly).
		{Name: "no terminal", Stream: orStart + msg, Want: []protocol.Rule{openairesponses.RLifecycle}},
		// A delta before its item is added.
		{Name: "delta before item", Stream: orStart + orEv("response.output_text.delta", 2, ","+orMsgRef+`,"delta":"x"`) + orCompleted(3),
			Want: []protocol.Rule{openairesponses.RItem, openairesponses.RText}},
		// Text outside a content part.
		{Name: "event line of another type", Stream: orStart + strings.Replace(msg, `event: response.content_part.added`, `event: response.other`, 1) + orCompleted(n), Want: []protocol.Rule{openairesponses.REvent}},
		{Name: "no part added", Stream: orStart + orDropEvent(msg, "response.content_part.added") + orCompleted(n), Want: []protocol.Rule{openairesponses.RItem}},
		// The item never closed.
		{Name: "item open", Stream: orStart + orDropEvent(msg, "response.output_item.done") + orCompleted(n), Want: []protocol.Rule{openairesponses.RItem}},
		// An item at the wrong output_index.
		{Name: "output index", Stream: orStart + strings.Replace(msg, `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress"`, `,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress"`, 1) + orCompleted(n),
			Want: []protocol.Rule{openairesponses.RItem}},
		// The part closed without its output_text.done.
		{Name: "no text done", Stream: orStart + orDropEvent(msg, "response.output_text.done") + orCompleted(n), Want: []protocol.Rule{openairesponses.RItem}},
		// An incomplete item in a completed response.
		{Name: "incomplete item", Stream: orStart + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) + orCompleted(n),
			Want: []protocol.Rule{openairesponses.RItem}},
		// … and in an incomplete one, last: fine.
		{Name: "incomplete response", Stream: orStart + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) +
			orEv("response.incomplete", n, orResponse("incomplete", orTextItem("incomplete", "Hi"), orUsage))},
		// … but an item after it breaks the rule.
		{Name: "item after incomplete", Stream: orStart + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) +
			orEv("response.output_item.added", n, `,"output_index":1,"item":{"id":"msg_2","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
			orEv("response.output_item.done", n+1, `,"output_index":1,"item":{"id":"msg_2","type":"message","status":"completed","role":"assistant","content":[]}`) +
			orEv("response.incomplete", n+2, `,"response":{"id":"resp_1","status":"incomplete","`+orUsage[1:]+`}`),
			Want: []protocol.Rule{openairesponses.RItem}},
		// The .done text is not the deltas'.
		{Name: "done text", Stream: orStart + strings.Replace(msg, `"delta":"i"`, `"delta":"o"`, 1) + orEv("response.completed", n, orResponse("completed", orTextItem("completed", "Hi"), orUsage)),
			Want: []protocol.Rule{openairesponses.RText}},
		// The terminal's output is not what was streamed.
		{Name: "output text", Stream: orStart + msg + orEv("response.completed", n, orResponse("completed", orTextItem("completed", "Ho"), orUsage)), Want: []protocol.Rule{openairesponses.RText}},
		{Name: "output count", Stream: orStart + msg + orEv("response.completed", n, orResponse("completed", "", orUsage)), Want: []protocol.Rule{openairesponses.RText}},
		// A function call's arguments .done differs from its deltas.
		{Name: "arguments done", Stream: orStart + strings.Replace(fc, `"arguments":"{\"q\":1}"`, `"arguments":"{\"q\":2}"`, 1) + orEv("response.completed", fn, orResponse("completed", callItem, orUsage)),
			Want: []protocol.Rule{openairesponses.RText}},
		// A function call without its name.
		{Name: "call without name", Stream: orStart + strings.Replace(fc, `"call_id":"call_a","name":"search","arguments":""`, `"call_id":"call_a","arguments":""`, 1) + orEv("response.completed", fn, orResponse("completed", callItem, orUsage)),
			Want: []protocol.Rule{openairesponses.RItem}},
		// A usage count past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: orStart + msg + orEv("response.completed", n, orResponse("completed", orTextItem("completed", "Hi"), `"usage":{"output_tokens":9223372036854775807}`)),
			Want: []protocol.Rule{openairesponses.RUsage}},
		// Without ground truth usage may be null.
		{Name: "usage null", Stream: orStart + msg + orEv("response.completed", n, orResponse("completed", orTextItem("completed", "Hi"), `"usage":null`))},
		// An error event, then response.failed and [DONE]: the error is the session's outcome.
		{Name: "error then failed", Stream: orStart + msg + errorEvent + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1) + orDone},
		// An error event without response.failed.
		{Name: "error without failed", Stream: orStart + msg + errorEvent + orDone, Want: []protocol.Rule{openairesponses.RError}},
		// An error event without a message.
		{Name: "error without message", Stream: orStart + msg + orEv("error", n, `,"code":"server_error"`) + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1),
			Want: []protocol.Rule{openairesponses.RError}},
		// The specification's error shape ({"error":{…}}) is read too.
		{Name: "nested error", Stream: orStart + msg + orEv("error", n, `,"error":{"type":"server_error","message":"boom"}`) + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1)},
		// response.failed without its error.
		{Name: "failed without error", Stream: orStart + msg + orEv("response.failed", n, `,"response":{"id":"resp_1","status":"failed"}`), Want: []protocol.Rule{openairesponses.RError}},
		// Something after the terminal.
		{Name: "after terminal", Stream: clean + orEv("response.output_text.delta", n+1, ","+orMsgRef+`,"delta":"x"`), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// Something after [DONE].
		{Name: "after done", Stream: clean + orDone + orEv("response.in_progress", n+1, ""), Want: []protocol.Rule{openairesponses.RLifecycle}},
	})
}

// orDropEvent removes the events named typ from stream.
func orDropEvent(stream, typ string) string {
	var b strings.Builder
	for _, frame := range strings.SplitAfter(stream, "\n\n") {
		if !strings.HasPrefix(frame, "event: "+typ+"\n") {
			b.WriteString(frame)
		}
	}
	return b.String()
}

// TestOpenAIResponsesRequireDone: with requireDone a stream that ends at its terminal breaks
// R-responses-lifecycle; with [DONE] it is clean.
func TestOpenAIResponsesRequireDone(t *testing.T) {
	t.Parallel()
	msg, n := orMessage(2)
	strict := func(s *protocol.Session) protocol.Checker { return openairesponses.NewChecker(s, true) }
	CheckRules(t, strict, []Rule{
		{Name: "with [DONE]", Stream: orStart + msg + orCompleted(n) + orDone},
		{Name: "without [DONE]", Stream: orStart + msg + orCompleted(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
	})
}

// FuzzOpenAIResponsesChecker feeds arbitrary frames to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzOpenAIResponsesChecker(f *testing.F) {
	msg, n := orMessage(2)
	fc, fn := orCall(2)
	fuzzChecker(f, orNewChecker,
		orStart+msg+orCompleted(n)+orDone,
		orStart+fc+orEv("response.completed", fn, orResponse("completed", "", orUsage)),
		orStart+orEv("error", 2, `,"message":"x"`)+orEv("response.failed", 3, `,"response":{"status":"failed","error":{"message":"x"}}`)+orDone,
	)
}

// orNewChecker is the default, lenient checker as a protocol.Checker.
func orNewChecker(s *protocol.Session) protocol.Checker { return openairesponses.NewChecker(s, false) }
