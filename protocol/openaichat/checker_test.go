package openaichat

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
)

// chunk is a chat.completion.chunk frame with delta and finish (a JSON literal, "" for null).
func chunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	}
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` +
		delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
}

const (
	role  = `{"role":"assistant","content":""}`
	usage = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n"
	done  = "data: [DONE]\n\n"
)

// usageOf is the usage chunk reporting completion_tokens n (as written on the wire).
func usageOf(n string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + n + `,"total_tokens":5}}` + "\n\n"
}

func tool(index, rest string) string { return `{"tool_calls":[{` + index + rest + `}]}` }

// TestCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestCheckerRules(t *testing.T) {
	t.Parallel()
	text := chunk(role, "") + chunk(`{"content":"Hi"}`, "")
	end := chunk(`{}`, `"stop"`) + usage + done
	call0 := tool(`"index":0,`, `"id":"call_a","type":"function","function":{"name":"search","arguments":""}`)
	args0 := tool(`"index":0,`, `"function":{"arguments":"{\"q\":1}"}`)
	toolEnd := chunk(`{}`, `"tool_calls"`) + usage + done
	clienttest.CheckRules(t, newChecker, []clienttest.Rule{
		// A well-formed answer.
		{Name: "clean", Stream: text + end},
		// A well-formed tool call.
		{Name: "clean tool", Stream: chunk(role, "") + chunk(call0, "") + chunk(args0, "") + toolEnd},
		// The call's id and name repeated unchanged on a later delta are tolerated.
		{Name: "repeated id", Stream: chunk(call0, "") + chunk(tool(`"index":0,`, `"id":"call_a","function":{"name":"search","arguments":"{}"}`), "") + toolEnd},
		// reasoning and reasoning_content together, equal, are one piece.
		{Name: "both reasoning fields", Stream: chunk(`{"reasoning_content":"hm","reasoning":"hm"}`, "") + text + end},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: text, Aborted: true},
		// An event: line on a data-only wire.
		{Name: "event line", Stream: "event: chunk\n" + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// A frame that is not JSON.
		{Name: "not json", Stream: "data: {oops\n\n" + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// Two reasoning fields that disagree.
		{Name: "reasoning differs", Stream: chunk(`{"reasoning_content":"a","reasoning":"b"}`, "") + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// Content after the finish_reason.
		{Name: "delta after finish", Stream: chunk(`{}`, `"stop"`) + chunk(`{"content":"late"}`, "") + usage + done, Want: []protocol.Rule{RFinish}},
		// Two finish_reasons.
		{Name: "two finishes", Stream: text + chunk(`{}`, `"stop"`) + end, Want: []protocol.Rule{RFinish}},
		// A finish_reason the API does not have.
		{Name: "unknown finish", Stream: text + chunk(`{}`, `"done"`) + usage + done, Want: []protocol.Rule{RFinish}},
		// [DONE] with neither finish_reason nor usage (usage is optional without ground
		// truth: TGI and some gateways send none).
		{Name: "done early", Stream: text + done, Want: []protocol.Rule{RFinish}},
		// The usage chunk twice.
		{Name: "usage twice", Stream: text + chunk(`{}`, `"stop"`) + usage + usage + done, Want: []protocol.Rule{RUsage}},
		// The usage chunk before the finish_reason.
		{Name: "usage early", Stream: text + usage + chunk(`{}`, `"stop"`) + done, Want: []protocol.Rule{RUsage}},
		// Usage on the finish_reason's chunk, as some compatible servers send it: accepted
		// without ground truth (it failed R-openai-usage), not on a delta's chunk.
		{Name: "usage on the finish", Stream: text + `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" + done},
		{Name: "usage on a delta", Stream: `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" + chunk(`{}`, `"stop"`) + done, Want: []protocol.Rule{RUsage}},
		// A count past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: text + chunk(`{}`, `"stop"`) + usageOf("9223372036854775807") + done, Want: []protocol.Rule{RUsage}},
		// A negative count.
		{Name: "usage negative", Stream: text + chunk(`{}`, `"stop"`) + usageOf("-5") + done, Want: []protocol.Rule{RUsage}},
		// 2^40 itself is a count.
		{Name: "usage at the bound", Stream: text + chunk(`{}`, `"stop"`) + usageOf("1099511627776") + done},
		// A first tool delta without id and name.
		{Name: "tool without id", Stream: chunk(tool(`"index":0,`, `"function":{"arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{RToolCall}},
		// Index 2 before index 1.
		{Name: "index gap", Stream: chunk(call0, "") + chunk(args0, "") + chunk(tool(`"index":2,`, `"id":"call_c","function":{"name":"x","arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{RToolCall}},
		// A different id on a later delta of the same index.
		{Name: "id changes", Stream: chunk(call0, "") + chunk(tool(`"index":0,`, `"id":"call_b","function":{"arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{RToolCall}},
		// Arguments that are not a JSON object.
		{Name: "bad arguments", Stream: chunk(call0, "") + chunk(tool(`"index":0,`, `"function":{"arguments":"{\"q\":"}`), "") + toolEnd, Want: []protocol.Rule{RToolCall}},
		// A frame after [DONE].
		{Name: "after done", Stream: text + end + chunk(`{"content":"x"}`, ""), Want: []protocol.Rule{RDone}},
		// An error frame without a message.
		{Name: "error without message", Stream: text + `data: {"error":{"type":"server_error"}}` + "\n\n", Want: []protocol.Rule{RError}},
		// A frame after the error frame.
		{Name: "after error", Stream: text + `data: {"error":{"message":"x"}}` + "\n\n" + done, Want: []protocol.Rule{RError}},
	})
}

// FuzzChecker feeds arbitrary frames to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzChecker(f *testing.F) {
	clienttest.FuzzChecker(f, newChecker,
		chunk(role, "")+chunk(`{"content":"Hi"}`, "")+chunk(`{}`, `"stop"`)+usage+done,
		chunk(tool(`"index":0,`, `"id":"a","function":{"name":"s","arguments":"{"}`), "")+chunk(`{}`, `"tool_calls"`),
		"data: {\"error\":{\"message\":\"x\"}}\n\ndata: [DONE]\n\n",
	)
}

// newChecker is NewChecker as a protocol.Checker, for the clienttest kit.
func newChecker(s *protocol.Session) protocol.Checker { return NewChecker(s) }
