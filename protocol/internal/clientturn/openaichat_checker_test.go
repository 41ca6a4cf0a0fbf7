package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openaichat"
)

// ocChunk is a chat.completion.chunk frame with delta and finish (a JSON literal, "" for null).
func ocChunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	}
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` +
		delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
}

const (
	ocRole  = `{"role":"assistant","content":""}`
	ocUsage = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n"
	ocDone  = "data: [DONE]\n\n"
)

// ocUsageOf is the usage chunk reporting completion_tokens n (as written on the wire).
func ocUsageOf(n string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + n + `,"total_tokens":5}}` + "\n\n"
}

func ocTool(index, rest string) string { return `{"tool_calls":[{` + index + rest + `}]}` }

// TestOpenAIChatCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestOpenAIChatCheckerRules(t *testing.T) {
	t.Parallel()
	text := ocChunk(ocRole, "") + ocChunk(`{"content":"Hi"}`, "")
	end := ocChunk(`{}`, `"stop"`) + ocUsage + ocDone
	call0 := ocTool(`"index":0,`, `"id":"call_a","type":"function","function":{"name":"search","arguments":""}`)
	args0 := ocTool(`"index":0,`, `"function":{"arguments":"{\"q\":1}"}`)
	toolEnd := ocChunk(`{}`, `"tool_calls"`) + ocUsage + ocDone
	CheckRules(t, ocNewChecker, []Rule{
		// A well-formed answer.
		{Name: "clean", Stream: text + end},
		// A well-formed tool call.
		{Name: "clean tool", Stream: ocChunk(ocRole, "") + ocChunk(call0, "") + ocChunk(args0, "") + toolEnd},
		// The call's id and name repeated unchanged on a later delta are tolerated.
		{Name: "repeated id", Stream: ocChunk(call0, "") + ocChunk(ocTool(`"index":0,`, `"id":"call_a","function":{"name":"search","arguments":"{}"}`), "") + toolEnd},
		// reasoning and reasoning_content together, equal, are one piece.
		{Name: "both reasoning fields", Stream: ocChunk(`{"reasoning_content":"hm","reasoning":"hm"}`, "") + text + end},
		// A cut stream is not required to end.
		{Name: "aborted", Stream: text, Aborted: true},
		// An event: line on a data-only wire.
		{Name: "event line", Stream: "event: chunk\n" + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// A frame that is not JSON.
		{Name: "not json", Stream: "data: {oops\n\n" + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// Two reasoning fields that disagree.
		{Name: "reasoning differs", Stream: ocChunk(`{"reasoning_content":"a","reasoning":"b"}`, "") + text + end, Want: []protocol.Rule{protocol.RFraming}},
		// Content after the finish_reason.
		{Name: "delta after finish", Stream: ocChunk(`{}`, `"stop"`) + ocChunk(`{"content":"late"}`, "") + ocUsage + ocDone, Want: []protocol.Rule{openaichat.RFinish}},
		// Two finish_reasons.
		{Name: "two finishes", Stream: text + ocChunk(`{}`, `"stop"`) + end, Want: []protocol.Rule{openaichat.RFinish}},
		// A finish_reason the API does not have.
		{Name: "unknown finish", Stream: text + ocChunk(`{}`, `"done"`) + ocUsage + ocDone, Want: []protocol.Rule{openaichat.RFinish}},
		// [DONE] with neither finish_reason nor usage (usage is optional without ground
		// truth: TGI and some gateways send none).
		{Name: "done early", Stream: text + ocDone, Want: []protocol.Rule{openaichat.RFinish}},
		// The usage chunk twice.
		{Name: "usage twice", Stream: text + ocChunk(`{}`, `"stop"`) + ocUsage + ocUsage + ocDone, Want: []protocol.Rule{openaichat.RUsage}},
		// The usage chunk before the finish_reason.
		{Name: "usage early", Stream: text + ocUsage + ocChunk(`{}`, `"stop"`) + ocDone, Want: []protocol.Rule{openaichat.RUsage}},
		// Usage on the finish_reason's chunk, as some compatible servers send it: accepted
		// without ground truth (it failed R-openai-usage), not on a delta's chunk.
		{Name: "usage on the finish", Stream: text + `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" + ocDone},
		{Name: "usage on a delta", Stream: `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` + "\n\n" + ocChunk(`{}`, `"stop"`) + ocDone, Want: []protocol.Rule{openaichat.RUsage}},
		// A count past 2^40 (a hostile report that would overflow the run's totals).
		{Name: "usage overflow", Stream: text + ocChunk(`{}`, `"stop"`) + ocUsageOf("9223372036854775807") + ocDone, Want: []protocol.Rule{openaichat.RUsage}},
		// A negative count.
		{Name: "usage negative", Stream: text + ocChunk(`{}`, `"stop"`) + ocUsageOf("-5") + ocDone, Want: []protocol.Rule{openaichat.RUsage}},
		// 2^40 itself is a count.
		{Name: "usage at the bound", Stream: text + ocChunk(`{}`, `"stop"`) + ocUsageOf("1099511627776") + ocDone},
		// A first tool delta without id and name.
		{Name: "tool without id", Stream: ocChunk(ocTool(`"index":0,`, `"function":{"arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{openaichat.RToolCall}},
		// Index 2 before index 1.
		{Name: "index gap", Stream: ocChunk(call0, "") + ocChunk(args0, "") + ocChunk(ocTool(`"index":2,`, `"id":"call_c","function":{"name":"x","arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{openaichat.RToolCall}},
		// A different id on a later delta of the same index.
		{Name: "id changes", Stream: ocChunk(call0, "") + ocChunk(ocTool(`"index":0,`, `"id":"call_b","function":{"arguments":"{}"}`), "") + toolEnd, Want: []protocol.Rule{openaichat.RToolCall}},
		// Arguments that are not a JSON object.
		{Name: "bad arguments", Stream: ocChunk(call0, "") + ocChunk(ocTool(`"index":0,`, `"function":{"arguments":"{\"q\":"}`), "") + toolEnd, Want: []protocol.Rule{openaichat.RToolCall}},
		// A frame after [DONE].
		{Name: "after done", Stream: text + end + ocChunk(`{"content":"x"}`, ""), Want: []protocol.Rule{openaichat.RDone}},
		// An error frame without a message.
		{Name: "error without message", Stream: text + `data: {"error":{"type":"server_error"}}` + "\n\n", Want: []protocol.Rule{openaichat.RError}},
		// A frame after the error frame.
		{Name: "after error", Stream: text + `data: {"error":{"message":"x"}}` + "\n\n" + ocDone, Want: []protocol.Rule{openaichat.RError}},
	})
}

// FuzzOpenAIChatChecker feeds arbitrary frames to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzOpenAIChatChecker(f *testing.F) {
	fuzzChecker(f, ocNewChecker,
		ocChunk(ocRole, "")+ocChunk(`{"content":"Hi"}`, "")+ocChunk(`{}`, `"stop"`)+ocUsage+ocDone,
		ocChunk(ocTool(`"index":0,`, `"id":"a","function":{"name":"s","arguments":"{"}`), "")+ocChunk(`{}`, `"tool_calls"`),
		"data: {\"error\":{\"message\":\"x\"}}\n\ndata: [DONE]\n\n",
	)
}

// ocNewChecker is NewChecker as a protocol.Checker, for the clienttest kit.
func ocNewChecker(s *protocol.Session) protocol.Checker { return openaichat.NewChecker(s) }
