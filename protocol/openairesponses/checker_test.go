package openairesponses_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// ev is one event frame: the event: line typ and its JSON body, the type and a
// sequence_number seq first, then rest (members with a leading comma, or "").
func ev(typ string, seq int, rest string) string {
	return evNamed(typ, typ, seq, rest)
}

// evNamed is ev with an event: line that may differ from the body's type.
func evNamed(line, typ string, seq int, rest string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":%d%s}\n\n", line, typ, seq, rest)
}

const (
	msgID  = `"item_id":"msg_1","output_index":0`
	msgRef = msgID + `,"content_index":0`
	usage  = `"usage":{"input_tokens":3,"output_tokens":2,"total_tokens":5}`
	done   = "data: [DONE]\n\n"
)

// response is a response object with status, output and usage (JSON members, or "").
func response(status, output, usage string) string {
	r := `,"response":{"id":"resp_1","object":"response","status":"` + status + `","output":[` + output + `]`
	if usage != "" {
		r += "," + usage
	}
	return r + "}"
}

// textItem is a completed message item with text.
func textItem(status, text string) string {
	return `{"id":"msg_1","type":"message","status":"` + status + `","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"` + text + `"}]}`
}

// start is response.created and response.in_progress at sequence numbers 0 and 1.
var start = ev("response.created", 0, response("in_progress", "", "")) + ev("response.in_progress", 1, response("in_progress", "", ""))

// message streams a message item with text "Hi" as two deltas from sequence number n on,
// returning the frames and the next sequence number.
func message(n int) (string, int) {
	s := ev("response.output_item.added", n, `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
		ev("response.content_part.added", n+1, ","+msgRef+`,"part":{"type":"output_text","annotations":[],"text":""}`) +
		ev("response.output_text.delta", n+2, ","+msgRef+`,"delta":"H"`) +
		ev("response.output_text.delta", n+3, ","+msgRef+`,"delta":"i"`) +
		ev("response.output_text.done", n+4, ","+msgRef+`,"text":"Hi"`) +
		ev("response.content_part.done", n+5, ","+msgRef+`,"part":{"type":"output_text","annotations":[],"text":"Hi"}`) +
		ev("response.output_item.done", n+6, `,"output_index":0,"item":`+textItem("completed", "Hi"))
	return s, n + 7
}

// completed is response.completed at sequence number n with the message item.
func completed(n int) string {
	return ev("response.completed", n, response("completed", textItem("completed", "Hi"), usage))
}

// call streams function_call item 0 with arguments {"q":1} from sequence number n.
func call(n int) (string, int) {
	ref := `,"item_id":"fc_1","output_index":0`
	s := ev("response.output_item.added", n, `,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","call_id":"call_a","name":"search","arguments":""}`) +
		ev("response.function_call_arguments.delta", n+1, ref+`,"delta":"{\"q\":"`) +
		ev("response.function_call_arguments.delta", n+2, ref+`,"delta":"1}"`) +
		ev("response.function_call_arguments.done", n+3, ref+`,"arguments":"{\"q\":1}"`) +
		ev("response.output_item.done", n+4, `,"output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_a","name":"search","arguments":"{\"q\":1}"}`)
	return s, n + 5
}

// TestCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth: each row breaks exactly the rules it names.
func TestCheckerRules(t *testing.T) {
	t.Parallel()
	msg, n := message(2)
	skipped, skippedN := message(6)
	clean := start + msg + completed(n)
	fc, fn := call(2)
	callItem := `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_a","name":"search","arguments":"{\"q\":1}"}`
	reasoningRef := `"item_id":"rs_1","output_index":0`
	failed := ev("response.failed", n, `,"response":{"id":"resp_1","status":"failed","error":{"code":"server_error","message":"boom"}}`)
	errorEvent := ev("error", n, `,"code":"server_error","message":"boom","param":null`)
	clienttest.CheckRules(t, newChecker, []clienttest.Rule{
		// A well-formed answer, with and without data: [DONE] (lenient by default).
		{Name: "clean", Stream: clean + done},
		{Name: "clean without [DONE]", Stream: clean},
		// A well-formed function call.
		{Name: "clean call", Stream: start + fc + ev("response.completed", fn, response("completed", callItem, usage)) + done},
		// Reasoning as a summary part, OpenAI's reasoning models' way (no status on the item).
		{Name: "clean summary", Stream: start +
			ev("response.output_item.added", 2, `,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
			ev("response.reasoning_summary_part.added", 3, ","+reasoningRef+`,"summary_index":0,"part":{"type":"summary_text","text":""}`) +
			ev("response.reasoning_summary_text.delta", 4, ","+reasoningRef+`,"summary_index":0,"delta":"hm"`) +
			ev("response.reasoning_summary_text.done", 5, ","+reasoningRef+`,"summary_index":0,"text":"hm"`) +
			ev("response.reasoning_summary_part.done", 6, ","+reasoningRef+`,"summary_index":0,"part":{"type":"summary_text","text":"hm"}`) +
			ev("response.output_item.done", 7, `,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]}`) +
			ev("response.completed", 8, response("completed", `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"hm"}]}`, usage))},
		// Unknown and extension events are ignored; sequence numbers may skip.
		{Name: "unknown events", Stream: start + ev("response.queued", 2, "") + ev("acme:trace_event", 5, `,"phase":"x"`) + skipped + completed(skippedN+10)},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: start + msg, Aborted: true},
		// A frame that is not JSON.
		{Name: "not json", Stream: start + "event: x\ndata: {oops\n\n" + msg + completed(n), Want: []protocol.Rule{protocol.RFraming}},
		// The event: line is not the type.
		{Name: "event line", Stream: start + strings.Replace(msg, "event: response.output_text.delta\n", "event: response.text.delta\n", 1) + completed(n),
			Want: []protocol.Rule{openairesponses.REvent}},
		// No event: line at all.
		{Name: "no event line", Stream: strings.Replace(start, "event: response.in_progress\n", "", 1) + msg + completed(n), Want: []protocol.Rule{openairesponses.REvent}},
		// A delta without its delta member.
		{Name: "no delta", Stream: start + strings.Replace(msg, `,"delta":"i"`, "", 1) + completed(n), Want: []protocol.Rule{openairesponses.REvent, openairesponses.RText}},
		// A repeated sequence_number.
		{Name: "sequence repeats", Stream: start + strings.Replace(msg, `"sequence_number":3`, `"sequence_number":2`, 1) + completed(n),
			Want: []protocol.Rule{openairesponses.RSequence}},
		// A missing sequence_number.
		{Name: "no sequence", Stream: strings.Replace(start, `,"sequence_number":1`, "", 1) + msg + completed(n), Want: []protocol.Rule{openairesponses.RSequence}},
		// response.created missing.
		{Name: "no created", Stream: ev("response.in_progress", 1, response("in_progress", "", "")) + msg + completed(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// Two terminals.
		{Name: "two terminals", Stream: clean + completed(n+1), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// A terminal whose response says otherwise.
		{Name: "status differs", Stream: start + msg + ev("response.completed", n, response("in_progress", textItem("completed", "Hi"), usage)), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// [DONE] before the terminal.
		{Name: "done early", Stream: start + msg + done + completed(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// The stream ends without a terminal (the load generator's truncated outcome; judged
		// here when Finish is told the stream ended cleanly).
		{Name: "no terminal", Stream: start + msg, Want: []protocol.Rule{openairesponses.RLifecycle}},
		// A delta before its item is added.
		{Name: "delta before item", Stream: start + ev("response.output_text.delta", 2, ","+msgRef+`,"delta":"x"`) + completed(3),
			Want: []protocol.Rule{openairesponses.RItem, openairesponses.RText}},
		// Text outside a content part.
		{Name: "event line of another type", Stream: start + strings.Replace(msg, `event: response.content_part.added`, `event: response.other`, 1) + completed(n), Want: []protocol.Rule{openairesponses.REvent}},
		{Name: "no part added", Stream: start + dropEvent(msg, "response.content_part.added") + completed(n), Want: []protocol.Rule{openairesponses.RItem}},
		// The item never closed.
		{Name: "item open", Stream: start + dropEvent(msg, "response.output_item.done") + completed(n), Want: []protocol.Rule{openairesponses.RItem}},
		// An item at the wrong output_index.
		{Name: "output index", Stream: start + strings.Replace(msg, `,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress"`, `,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress"`, 1) + completed(n),
			Want: []protocol.Rule{openairesponses.RItem}},
		// The part closed without its output_text.done.
		{Name: "no text done", Stream: start + dropEvent(msg, "response.output_text.done") + completed(n), Want: []protocol.Rule{openairesponses.RItem}},
		// An incomplete item in a completed response.
		{Name: "incomplete item", Stream: start + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) + completed(n),
			Want: []protocol.Rule{openairesponses.RItem}},
		// … and in an incomplete one, last: fine.
		{Name: "incomplete response", Stream: start + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) +
			ev("response.incomplete", n, response("incomplete", textItem("incomplete", "Hi"), usage))},
		// … but an item after it breaks the rule.
		{Name: "item after incomplete", Stream: start + strings.Replace(msg, `"item":{"id":"msg_1","type":"message","status":"completed"`, `"item":{"id":"msg_1","type":"message","status":"incomplete"`, 1) +
			ev("response.output_item.added", n, `,"output_index":1,"item":{"id":"msg_2","type":"message","status":"in_progress","role":"assistant","content":[]}`) +
			ev("response.output_item.done", n+1, `,"output_index":1,"item":{"id":"msg_2","type":"message","status":"completed","role":"assistant","content":[]}`) +
			ev("response.incomplete", n+2, `,"response":{"id":"resp_1","status":"incomplete","`+usage[1:]+`}`),
			Want: []protocol.Rule{openairesponses.RItem}},
		// The .done text is not the deltas'.
		{Name: "done text", Stream: start + strings.Replace(msg, `"delta":"i"`, `"delta":"o"`, 1) + ev("response.completed", n, response("completed", textItem("completed", "Hi"), usage)),
			Want: []protocol.Rule{openairesponses.RText}},
		// The terminal's output is not what was streamed.
		{Name: "output text", Stream: start + msg + ev("response.completed", n, response("completed", textItem("completed", "Ho"), usage)), Want: []protocol.Rule{openairesponses.RText}},
		{Name: "output count", Stream: start + msg + ev("response.completed", n, response("completed", "", usage)), Want: []protocol.Rule{openairesponses.RText}},
		// A function call's arguments .done differs from its deltas.
		{Name: "arguments done", Stream: start + strings.Replace(fc, `"arguments":"{\"q\":1}"`, `"arguments":"{\"q\":2}"`, 1) + ev("response.completed", fn, response("completed", callItem, usage)),
			Want: []protocol.Rule{openairesponses.RText}},
		// A function call without its name.
		{Name: "call without name", Stream: start + strings.Replace(fc, `"call_id":"call_a","name":"search","arguments":""`, `"call_id":"call_a","arguments":""`, 1) + ev("response.completed", fn, response("completed", callItem, usage)),
			Want: []protocol.Rule{openairesponses.RItem}},
		// A usage count past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: start + msg + ev("response.completed", n, response("completed", textItem("completed", "Hi"), `"usage":{"output_tokens":9223372036854775807}`)),
			Want: []protocol.Rule{openairesponses.RUsage}},
		// Without ground truth usage may be null.
		{Name: "usage null", Stream: start + msg + ev("response.completed", n, response("completed", textItem("completed", "Hi"), `"usage":null`))},
		// An error event, then response.failed and [DONE]: the error is the session's outcome.
		{Name: "error then failed", Stream: start + msg + errorEvent + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1) + done},
		// An error event without response.failed.
		{Name: "error without failed", Stream: start + msg + errorEvent + done, Want: []protocol.Rule{openairesponses.RError}},
		// An error event without a message.
		{Name: "error without message", Stream: start + msg + ev("error", n, `,"code":"server_error"`) + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1),
			Want: []protocol.Rule{openairesponses.RError}},
		// The specification's error shape ({"error":{…}}) is read too.
		{Name: "nested error", Stream: start + msg + ev("error", n, `,"error":{"type":"server_error","message":"boom"}`) + strings.Replace(failed, fmt.Sprintf(`"sequence_number":%d`, n), fmt.Sprintf(`"sequence_number":%d`, n+1), 1)},
		// response.failed without its error.
		{Name: "failed without error", Stream: start + msg + ev("response.failed", n, `,"response":{"id":"resp_1","status":"failed"}`), Want: []protocol.Rule{openairesponses.RError}},
		// Something after the terminal.
		{Name: "after terminal", Stream: clean + ev("response.output_text.delta", n+1, ","+msgRef+`,"delta":"x"`), Want: []protocol.Rule{openairesponses.RLifecycle}},
		// Something after [DONE].
		{Name: "after done", Stream: clean + done + ev("response.in_progress", n+1, ""), Want: []protocol.Rule{openairesponses.RLifecycle}},
	})
}

// dropEvent removes the events named typ from stream.
func dropEvent(stream, typ string) string {
	var b strings.Builder
	for _, frame := range strings.SplitAfter(stream, "\n\n") {
		if !strings.HasPrefix(frame, "event: "+typ+"\n") {
			b.WriteString(frame)
		}
	}
	return b.String()
}

// TestRequireDone: with requireDone a stream that ends at its terminal breaks
// R-responses-lifecycle; with [DONE] it is clean.
func TestRequireDone(t *testing.T) {
	t.Parallel()
	msg, n := message(2)
	strict := func(s *protocol.Session) protocol.Checker { return openairesponses.NewChecker(s, true) }
	clienttest.CheckRules(t, strict, []clienttest.Rule{
		{Name: "with [DONE]", Stream: start + msg + completed(n) + done},
		{Name: "without [DONE]", Stream: start + msg + completed(n), Want: []protocol.Rule{openairesponses.RLifecycle}},
	})
}

// FuzzChecker feeds arbitrary frames to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzChecker(f *testing.F) {
	msg, n := message(2)
	fc, fn := call(2)
	clienttest.FuzzChecker(f, newChecker,
		start+msg+completed(n)+done,
		start+fc+ev("response.completed", fn, response("completed", "", usage)),
		start+ev("error", 2, `,"message":"x"`)+ev("response.failed", 3, `,"response":{"status":"failed","error":{"message":"x"}}`)+done,
	)
}

// newChecker is the default, lenient checker as a protocol.Checker.
func newChecker(s *protocol.Session) protocol.Checker { return openairesponses.NewChecker(s, false) }

// newWriter is the mock's stream writer, as the kit drives it.
func newWriter(w io.Writer) clienttest.TurnWriter {
	return openairesponses.NewStreamWriter(w, openairesponses.StreamMeta{ID: "resp_bench", Model: "m", Created: 1})
}

// BenchmarkObserve judges a whole 256-frame answer against its ground truth per op (a fresh
// checker each time, as the load generator makes one per stream) and reports the cost and
// allocations per frame.
func BenchmarkObserve(b *testing.B) {
	clienttest.BenchObserve(b, newWriter, newChecker)
}

// BenchmarkObserveFrame judges one text delta per op on a warm checker without ground truth.
func BenchmarkObserveFrame(b *testing.B) {
	clienttest.BenchObserveFrame(b, newWriter, newChecker)
}
