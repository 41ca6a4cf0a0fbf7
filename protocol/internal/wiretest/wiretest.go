// Package wiretest is the test kit the provider wires share: a script turn played through a
// wire's stream writer, golden files, benchmarks, and each wire's fast parser compared with its
// encoding/json reference; its own tests are the anthropic and openai wires' request, stream,
// library and SDK suites. Only tests import it.
package wiretest

import (
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// TurnWriter is a wire's stream writer, as the mock drives it.
type TurnWriter interface {
	Start() error
	Step(turn *scenarios.ScriptTurn, step *scenarios.Step) error
	Error(message string) error
	Finish(turn *scenarios.ScriptTurn) error
}

// SmallTurn is a turn of thinking, text and two tool calls, in pieces that need escaping; its
// tool call ids start with toolIDPrefix, so golden files look like each wire's own.
func SmallTurn(toolIDPrefix string) *scenarios.ScriptTurn {
	return &scenarios.ScriptTurn{
		Steps: []scenarios.Step{
			{Kind: scenarios.StepThinking, Text: "Let me "},
			{Kind: scenarios.StepThinking, Text: "think \"hard\"."},
			{Kind: scenarios.StepText, Text: "Checking two "},
			{Kind: scenarios.StepText, Text: "sources…\n"},
			{Kind: scenarios.StepToolArgs, Tool: 0, Text: `{"q":"go `},
			{Kind: scenarios.StepToolArgs, Tool: 0, Text: `sse"}`},
			{Kind: scenarios.StepToolArgs, Tool: 1, Text: `{"url":`},
			{Kind: scenarios.StepToolArgs, Tool: 1, Text: `"https://x.test/?a=1&b=<2>"}`},
		},
		ToolCalls: []scenarios.ScriptToolCall{
			{ID: toolIDPrefix + "a1", Name: "search_call", Arguments: `{"q":"go sse"}`},
			{ID: toolIDPrefix + "b2", Name: "fetch_url", Arguments: `{"url":"https://x.test/?a=1&b=<2>"}`},
		},
		ErrorAfterStep: -1, StallAfterStep: -1,
		InputTokens: 42, OutputTokens: 17,
	}
}

// WriteTurn plays turn through w the way the mock does: the error frame after step
// ErrorAfterStep (after every step when it is past the last) ends the stream, else Finish.
func WriteTurn(t testing.TB, w TurnWriter, turn *scenarios.ScriptTurn) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Start())
	for i := range turn.Steps {
		must(w.Step(turn, &turn.Steps[i]))
		if turn.ErrorAfterStep == i {
			must(w.Error(turn.ErrorMessage))
			return
		}
	}
	if turn.ErrorAfterStep >= len(turn.Steps) {
		must(w.Error(turn.ErrorMessage))
		return
	}
	must(w.Finish(turn))
}
