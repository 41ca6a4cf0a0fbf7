package openaichat

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/clienttest"
	"github.com/streambench/streambench/sse"
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

func tool(index, rest string) string { return `{"tool_calls":[{` + index + rest + `}]}` }

// judge feeds a raw stream to a structure-only checker (aborted: cut by the client).
func judge(t *testing.T, stream string, aborted bool) []protocol.Violation {
	t.Helper()
	s := clienttest.NewSession(t, "plain-answer", 1)
	s.NoGroundTruth, s.Aborted = true, aborted
	c := NewChecker(s)
	dec := sse.NewDecoder(strings.NewReader(stream))
	var ev sse.Event
	for {
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Observe(&ev)
	}
	return c.Finish(nil)
}

// TestCheckerRules makes each structural check fail (and its leniencies pass) on a
// hand-written stream, without ground truth.
func TestCheckerRules(t *testing.T) {
	t.Parallel()
	text := chunk(role, "") + chunk(`{"content":"Hi"}`, "")
	end := chunk(`{}`, `"stop"`) + usage + done
	call0 := tool(`"index":0,`, `"id":"call_a","type":"function","function":{"name":"search","arguments":""}`)
	args0 := tool(`"index":0,`, `"function":{"arguments":"{\"q\":1}"}`)
	toolEnd := chunk(`{}`, `"tool_calls"`) + usage + done
	tests := []struct {
		name    string
		stream  string
		aborted bool
		want    []protocol.Rule
	}{
		// A well-formed answer.
		{"clean", text + end, false, nil},
		// A well-formed tool call.
		{"clean tool", chunk(role, "") + chunk(call0, "") + chunk(args0, "") + toolEnd, false, nil},
		// The call's id and name repeated unchanged on a later delta are tolerated.
		{"repeated id", chunk(call0, "") + chunk(tool(`"index":0,`, `"id":"call_a","function":{"name":"search","arguments":"{}"}`), "") + toolEnd, false, nil},
		// reasoning and reasoning_content together, equal, are one piece.
		{"both reasoning fields", chunk(`{"reasoning_content":"hm","reasoning":"hm"}`, "") + text + end, false, nil},
		// A cut stream is not required to end.
		{"aborted", text, true, nil},
		// An event: line on a data-only wire.
		{"event line", "event: chunk\n" + text + end, false, []protocol.Rule{protocol.RFraming}},
		// A frame that is not JSON.
		{"not json", "data: {oops\n\n" + text + end, false, []protocol.Rule{protocol.RFraming}},
		// Two reasoning fields that disagree.
		{"reasoning differs", chunk(`{"reasoning_content":"a","reasoning":"b"}`, "") + text + end, false, []protocol.Rule{protocol.RFraming}},
		// Content after the finish_reason.
		{"delta after finish", chunk(`{}`, `"stop"`) + chunk(`{"content":"late"}`, "") + usage + done, false, []protocol.Rule{protocol.ROpenAIFinish}},
		// Two finish_reasons.
		{"two finishes", text + chunk(`{}`, `"stop"`) + end, false, []protocol.Rule{protocol.ROpenAIFinish}},
		// A finish_reason the API does not have.
		{"unknown finish", text + chunk(`{}`, `"done"`) + usage + done, false, []protocol.Rule{protocol.ROpenAIFinish}},
		// [DONE] with neither finish_reason nor usage.
		{"done early", text + done, false, []protocol.Rule{protocol.ROpenAIFinish, protocol.ROpenAIUsage}},
		// The usage chunk twice.
		{"usage twice", text + chunk(`{}`, `"stop"`) + usage + usage + done, false, []protocol.Rule{protocol.ROpenAIUsage}},
		// The usage chunk before the finish_reason.
		{"usage early", text + usage + chunk(`{}`, `"stop"`) + done, false, []protocol.Rule{protocol.ROpenAIUsage}},
		// A first tool delta without id and name.
		{"tool without id", chunk(tool(`"index":0,`, `"function":{"arguments":"{}"}`), "") + toolEnd, false, []protocol.Rule{protocol.ROpenAIToolCall}},
		// Index 2 before index 1.
		{"index gap", chunk(call0, "") + chunk(args0, "") + chunk(tool(`"index":2,`, `"id":"call_c","function":{"name":"x","arguments":"{}"}`), "") + toolEnd, false, []protocol.Rule{protocol.ROpenAIToolCall}},
		// A different id on a later delta of the same index.
		{"id changes", chunk(call0, "") + chunk(tool(`"index":0,`, `"id":"call_b","function":{"arguments":"{}"}`), "") + toolEnd, false, []protocol.Rule{protocol.ROpenAIToolCall}},
		// Arguments that are not a JSON object.
		{"bad arguments", chunk(call0, "") + chunk(tool(`"index":0,`, `"function":{"arguments":"{\"q\":"}`), "") + toolEnd, false, []protocol.Rule{protocol.ROpenAIToolCall}},
		// A frame after [DONE].
		{"after done", text + end + chunk(`{"content":"x"}`, ""), false, []protocol.Rule{protocol.ROpenAIDone}},
		// An error frame without a message.
		{"error without message", text + `data: {"error":{"type":"server_error"}}` + "\n\n", false, []protocol.Rule{protocol.ROpenAIError}},
		// A frame after the error frame.
		{"after error", text + `data: {"error":{"message":"x"}}` + "\n\n" + done, false, []protocol.Rule{protocol.ROpenAIError}},
	}
	for _, tt := range tests {
		vs := judge(t, tt.stream, tt.aborted)
		if got := clienttest.Rules(vs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: rules %v, want %v; violations %v", tt.name, got, tt.want, vs)
		}
	}
}

// FuzzChecker feeds arbitrary frames to a ground-truth checker: it must never panic, and
// every violation names a rule.
func FuzzChecker(f *testing.F) {
	f.Add([]byte(chunk(role, "") + chunk(`{"content":"Hi"}`, "") + chunk(`{}`, `"stop"`) + usage + done))
	f.Add([]byte(chunk(tool(`"index":0,`, `"id":"a","function":{"name":"s","arguments":"{"}`), "") + chunk(`{}`, `"tool_calls"`)))
	f.Add([]byte("data: {\"error\":{\"message\":\"x\"}}\n\ndata: [DONE]\n\n"))
	session := clienttest.NewSession(f, "parallel-tools", 1)
	f.Fuzz(func(t *testing.T, stream []byte) {
		s := *session
		c := NewChecker(&s)
		dec := sse.NewDecoder(strings.NewReader(string(stream)))
		var ev sse.Event
		var err error
		for err = dec.Next(&ev); err == nil; err = dec.Next(&ev) {
			c.Observe(&ev)
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
