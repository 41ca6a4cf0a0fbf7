package clientturn_test

import (
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/openairesponses"
)

// TestOpenAIResponsesFaults proves every rule can fail: each mock fault switch breaks its rule and nothing
// else, on a scenario that exercises it.
func TestOpenAIResponsesFaults(t *testing.T) {
	t.Parallel()
	truth, noTruth := openairesponses.New(), Configured(t, openairesponses.New(), NoTruth)
	Faults(t, mocktest.Start, truth, noTruth, []Fault[mockprovider.Fault]{
		// One changed byte of the answer: only the content rule sees it (the .done text is
		// the changed deltas' concatenation).
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", Want: []protocol.Rule{openairesponses.RContent}},
		// Without ground truth the same stream is structurally fine.
		{Fault: mockprovider.FaultTextDiffers, Scenario: "plain-answer", NoTruth: true},
		// A scripted mid-stream failure that never comes.
		{Fault: mockprovider.FaultDropError, Scenario: "provider-error-midstream", Want: []protocol.Rule{openairesponses.RError}},
		// The event: line of the text deltas is not their type.
		{Fault: mockprovider.FaultResponsesEventName, Scenario: "plain-answer", Want: []protocol.Rule{openairesponses.REvent}},
		// sequence_number stuck at 1.
		{Fault: mockprovider.FaultResponsesSequence, Scenario: "tool-chain", Want: []protocol.Rule{openairesponses.RSequence}},
		// No response.created: the lifecycle does not start.
		{Fault: mockprovider.FaultResponsesNoCreated, Scenario: "thinking-answer", Want: []protocol.Rule{openairesponses.RLifecycle}},
		// Items never closed, reasoning, message and function calls alike.
		{Fault: mockprovider.FaultResponsesNoItemDone, Scenario: "tool-chain", Want: []protocol.Rule{openairesponses.RItem}},
		// Text and reasoning streamed outside a content part (their content still judged,
		// and right).
		{Fault: mockprovider.FaultResponsesNoPart, Scenario: "thinking-answer", Want: []protocol.Rule{openairesponses.RItem}},
		// An incomplete item that is not the last, in a completed response.
		{Fault: mockprovider.FaultResponsesIncompleteItem, Scenario: "thinking-answer", Want: []protocol.Rule{openairesponses.RItem}},
		// output_text.done's text is not the deltas'.
		{Fault: mockprovider.FaultResponsesDoneText, Scenario: "plain-answer", Want: []protocol.Rule{openairesponses.RText}},
		{Fault: mockprovider.FaultResponsesDoneText, Scenario: "plain-answer", NoTruth: true, Want: []protocol.Rule{openairesponses.RText}},
		// response.completed without usage: against the script a violation …
		{Fault: mockprovider.FaultResponsesNoUsage, Scenario: "plain-answer", Want: []protocol.Rule{openairesponses.RUsage}},
		// … and without ground truth (a gateway that drops it) allowed, tokens estimated.
		{Fault: mockprovider.FaultResponsesNoUsage, Scenario: "plain-answer", NoTruth: true},
		// The scripted error event without response.failed after it.
		{Fault: mockprovider.FaultResponsesNoFailed, Scenario: "provider-error-midstream", Want: []protocol.Rule{openairesponses.RError}},
		// No data: [DONE], as OpenAI's own stream: the default (lenient) mode accepts it.
		{Fault: mockprovider.FaultResponsesNoDone, Scenario: "tool-chain"},
		// Other wires' faults leave this wire alone.
		{Fault: mockprovider.FaultOpenAINoDone, Scenario: "plain-answer"},
		{Fault: mockprovider.FaultAnthropicNoBlockStop, Scenario: "tool-chain"},
	})
	// With requireDone, the Open Responses specification's [DONE] is owed.
	strict, strictNoTruth := Configured(t, openairesponses.New(), protocol.Options{"requireDone": true}),
		Configured(t, openairesponses.New(), protocol.Options{"requireDone": true, "noGroundTruth": true})
	Faults(t, mocktest.Start, strict, strictNoTruth, []Fault[mockprovider.Fault]{
		{Fault: mockprovider.FaultResponsesNoDone, Scenario: "plain-answer", Want: []protocol.Rule{openairesponses.RLifecycle}},
		{Fault: mockprovider.FaultResponsesNoDone, Scenario: "provider-error-midstream", Want: []protocol.Rule{openairesponses.RLifecycle}},
		{Fault: mockprovider.FaultResponsesNoDone, Scenario: "plain-answer", NoTruth: true, Want: []protocol.Rule{openairesponses.RLifecycle}},
	})
}
