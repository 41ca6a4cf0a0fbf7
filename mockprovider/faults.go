package mockprovider

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/streambench/streambench/scenarios"
)

// Fault is a wire misbehaviour the mock injects into every stream it plays, so each rule of
// the provider-wire client dialects (openai-chat, anthropic-messages) has a switch that makes
// it fail. Unlike a scenario's faults (HTTP errors, mid-stream errors, stalls), which a
// correct provider can have, these break the wire contract itself. Faults named for a wire
// apply to that wire only; the others to both.
type Fault string

// The fault switches, each proving one rule (docs/PROTOCOLS.md).
const (
	FaultNone Fault = ""
	// FaultTextDiffers changes the first byte of the first text piece of every turn.
	FaultTextDiffers Fault = "text-differs" // R-openai-content, R-anthropic-content
	// FaultDropError finishes a turn normally where the script fails it mid-stream.
	FaultDropError Fault = "drop-error" // R-openai-error, R-anthropic-error
	// FaultOpenAIToolNoIndex drops "index" from every tool_calls delta.
	FaultOpenAIToolNoIndex Fault = "openai-tool-no-index" // R-openai-tool-call
	// FaultOpenAIWrongFinish swaps finish_reason "stop" and "tool_calls".
	FaultOpenAIWrongFinish Fault = "openai-wrong-finish" // R-openai-finish
	// FaultOpenAINoUsage omits the usage chunk although include_usage was asked for.
	FaultOpenAINoUsage Fault = "openai-no-usage" // R-openai-usage
	// FaultOpenAINoDone omits the final data: [DONE].
	FaultOpenAINoDone Fault = "openai-no-done" // R-openai-done
	// FaultOpenAIReasoningField sends reasoning as delta.reasoning (vLLM's name) instead of
	// delta.reasoning_content: a leniency, which must pass.
	FaultOpenAIReasoningField Fault = "openai-reasoning-field" // none: tolerated
	// FaultAnthropicNoBlockStop never sends content_block_stop.
	FaultAnthropicNoBlockStop Fault = "anthropic-no-block-stop" // R-anthropic-block
	// FaultAnthropicNoMessageStop omits the final message_stop.
	FaultAnthropicNoMessageStop Fault = "anthropic-no-message-stop" // R-anthropic-message
	// FaultAnthropicPingStorm sends a ping before every event: a leniency, which must pass.
	FaultAnthropicPingStorm Fault = "anthropic-ping-storm" // none: tolerated
	// FaultResponsesEventName names every output_text.delta event response.text.delta on its
	// event: line (the body's type unchanged).
	FaultResponsesEventName Fault = "responses-event-name" // R-responses-event
	// FaultResponsesSequence sends sequence_number 1 on every event.
	FaultResponsesSequence Fault = "responses-sequence" // R-responses-sequence
	// FaultResponsesNoCreated omits response.created.
	FaultResponsesNoCreated Fault = "responses-no-created" // R-responses-lifecycle
	// FaultResponsesNoItemDone never sends response.output_item.done.
	FaultResponsesNoItemDone Fault = "responses-no-item-done" // R-responses-item
	// FaultResponsesNoPart never sends response.content_part.added: text streams outside a part.
	FaultResponsesNoPart Fault = "responses-no-part" // R-responses-item
	// FaultResponsesIncompleteItem closes every item with status incomplete, the response
	// still completed.
	FaultResponsesIncompleteItem Fault = "responses-incomplete-item" // R-responses-item
	// FaultResponsesDoneText cuts the first character off every response.output_text.done's text.
	FaultResponsesDoneText Fault = "responses-done-text" // R-responses-text
	// FaultResponsesNoUsage sends response.completed with usage null.
	FaultResponsesNoUsage Fault = "responses-no-usage" // R-responses-usage
	// FaultResponsesNoFailed sends the scripted error event without response.failed after it.
	FaultResponsesNoFailed Fault = "responses-no-failed" // R-responses-error
	// FaultResponsesNoDone ends streams at the terminal event without data: [DONE], as
	// OpenAI's own API does: tolerated by default, R-responses-lifecycle with requireDone.
	FaultResponsesNoDone Fault = "responses-no-done" // R-responses-lifecycle (requireDone only)
)

// faultDoc describes each fault for --help and error messages.
var faultDoc = map[Fault]string{
	FaultTextDiffers:             "first byte of each turn's text changed",
	FaultDropError:               "scripted mid-stream errors replaced by a normal end",
	FaultOpenAIToolNoIndex:       "openai: tool_calls deltas without index",
	FaultOpenAIWrongFinish:       "openai: finish_reason stop and tool_calls swapped",
	FaultOpenAINoUsage:           "openai: no usage chunk",
	FaultOpenAINoDone:            "openai: no data: [DONE]",
	FaultOpenAIReasoningField:    "openai: reasoning sent as delta.reasoning (tolerated)",
	FaultAnthropicNoBlockStop:    "anthropic: no content_block_stop",
	FaultAnthropicNoMessageStop:  "anthropic: no message_stop",
	FaultAnthropicPingStorm:      "anthropic: a ping before every event (tolerated)",
	FaultResponsesEventName:      "openai-responses: output_text.delta events named response.text.delta on their event: line",
	FaultResponsesSequence:       "openai-responses: sequence_number 1 on every event",
	FaultResponsesNoCreated:      "openai-responses: no response.created",
	FaultResponsesNoItemDone:     "openai-responses: no response.output_item.done",
	FaultResponsesNoPart:         "openai-responses: no response.content_part.added",
	FaultResponsesIncompleteItem: "openai-responses: items done incomplete in a completed response",
	FaultResponsesDoneText:       "openai-responses: output_text.done's text without its first character",
	FaultResponsesNoUsage:        "openai-responses: response.completed with usage null",
	FaultResponsesNoFailed:       "openai-responses: no response.failed after the error event",
	FaultResponsesNoDone:         "openai-responses: no data: [DONE] (OpenAI's own stream; tolerated unless requireDone)",
}

// Faults lists every fault switch with a one-line description, sorted by name.
func Faults() []string {
	out := make([]string, 0, len(faultDoc))
	for f, doc := range faultDoc {
		out = append(out, string(f)+": "+doc)
	}
	sort.Strings(out)
	return out
}

// ParseFault returns the fault named name ("" is none), or an error listing the known ones.
func ParseFault(name string) (Fault, error) {
	if _, ok := faultDoc[Fault(name)]; ok || name == "" {
		return Fault(name), nil
	}
	names := make([]string, 0, len(faultDoc))
	for f := range faultDoc {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown fault %q; known faults: %s", name, strings.Join(names, ", "))
}

// rewriter is the part of a fault that rewrites a wire's bytes, or nil.
func (f Fault) rewriter(wireName string) func([]byte) []byte {
	switch {
	case wireName == "openai" && f == FaultOpenAIToolNoIndex:
		return func(b []byte) []byte { return toolIndex.ReplaceAll(b, []byte(`"tool_calls":[{`)) }
	case wireName == "openai" && f == FaultOpenAIWrongFinish:
		return func(b []byte) []byte {
			b = bytes.ReplaceAll(b, []byte(`"finish_reason":"stop"`), []byte(`"finish_reason":"@"`))
			b = bytes.ReplaceAll(b, []byte(`"finish_reason":"tool_calls"`), []byte(`"finish_reason":"stop"`))
			return bytes.ReplaceAll(b, []byte(`"finish_reason":"@"`), []byte(`"finish_reason":"tool_calls"`))
		}
	case wireName == "openai" && f == FaultOpenAINoDone:
		return func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("data: [DONE]\n\n"), nil) }
	case wireName == "openai" && f == FaultOpenAIReasoningField:
		return func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte(`{"reasoning_content":`), []byte(`{"reasoning":`))
		}
	case wireName == "anthropic" && f == FaultAnthropicNoBlockStop:
		return func(b []byte) []byte { return blockStop.ReplaceAll(b, nil) }
	case wireName == "anthropic" && f == FaultAnthropicNoMessageStop:
		return func(b []byte) []byte { return messageStop.ReplaceAll(b, nil) }
	case wireName == "anthropic" && f == FaultAnthropicPingStorm:
		return func(b []byte) []byte {
			return eventStart.ReplaceAll(b, []byte("event: ping\ndata: {\"type\":\"ping\"}\n\n$1"))
		}
	case wireName == responsesWireName:
		return f.responsesRewriter()
	}
	return nil
}

// responsesWireName is the Responses wire's name (openairesponses.Name).
const responsesWireName = "openai-responses"

// responsesRewriter is the rewrite of a fault on the Responses wire, or nil.
func (f Fault) responsesRewriter() func([]byte) []byte {
	switch f {
	case FaultResponsesEventName:
		return func(b []byte) []byte {
			return bytes.ReplaceAll(b, []byte("event: response.output_text.delta\n"), []byte("event: response.text.delta\n"))
		}
	case FaultResponsesSequence:
		return func(b []byte) []byte { return sequenceNumber.ReplaceAll(b, []byte(`"sequence_number":1`)) }
	case FaultResponsesNoCreated:
		return dropEvent("response.created")
	case FaultResponsesNoItemDone:
		return dropEvent("response.output_item.done")
	case FaultResponsesNoPart:
		return dropEvent("response.content_part.added")
	case FaultResponsesIncompleteItem:
		return func(b []byte) []byte {
			return itemDoneStatus.ReplaceAll(b, []byte(`${1}"status":"incomplete"`))
		}
	case FaultResponsesDoneText:
		return func(b []byte) []byte { return outputTextDone.ReplaceAll(b, []byte(`${1}"text":"`)) }
	case FaultResponsesNoUsage:
		return func(b []byte) []byte { return completedUsage.ReplaceAll(b, []byte(`${1}"usage":null}}`)) }
	case FaultResponsesNoFailed:
		return dropEvent("response.failed")
	case FaultResponsesNoDone:
		return func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("data: [DONE]\n\n"), nil) }
	}
	return nil
}

// dropEvent is the rewrite that removes every event named typ.
func dropEvent(typ string) func([]byte) []byte {
	re := regexp.MustCompile(`event: ` + regexp.QuoteMeta(typ) + `\ndata: [^\n]*\n\n`)
	return func(b []byte) []byte { return re.ReplaceAll(b, nil) }
}

var (
	toolIndex   = regexp.MustCompile(`"tool_calls":\[\{"index":\d+,`)
	blockStop   = regexp.MustCompile(`event: content_block_stop\ndata: [^\n]*\n\n`)
	messageStop = regexp.MustCompile(`event: message_stop\ndata: [^\n]*\n\n`)
	eventStart  = regexp.MustCompile(`(?m)^(event: )`)

	sequenceNumber = regexp.MustCompile(`"sequence_number":\d+`)
	// itemDoneStatus is an output_item.done's item status (the item's first status member).
	itemDoneStatus = regexp.MustCompile(`(event: response\.output_item\.done\ndata: [^\n]*?"item":\{[^\n]*?)"status":"completed"`)
	// outputTextDone is an output_text.done's text up to and including its first character.
	outputTextDone = regexp.MustCompile(`(event: response\.output_text\.done\ndata: [^\n]*?)"text":"(?:\\.|[^\\"])`)
	// completedUsage is response.completed's usage, the last member of its response.
	completedUsage = regexp.MustCompile(`(event: response\.completed\ndata: [^\n]*?)"usage":\{[^\n]*\}\}\}`)
)

// faultWriter rewrites each Write (every stream writer call is whole frames in one Write).
// It is only in the stream when a fault is on: the hot path pays nothing otherwise.
type faultWriter struct {
	w       io.Writer
	rewrite func([]byte) []byte
}

func (f *faultWriter) Write(p []byte) (int, error) {
	if _, err := f.w.Write(f.rewrite(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// step returns step, or for FaultTextDiffers on the turn's first text step a copy whose
// first byte differs.
func (f Fault) step(turn *scenarios.ScriptTurn, step *scenarios.Step) *scenarios.Step {
	if f != FaultTextDiffers || step.Kind != scenarios.StepText || step.Text == "" {
		return step
	}
	for i := range turn.Steps {
		if turn.Steps[i].Kind == scenarios.StepText {
			if &turn.Steps[i] != step {
				return step
			}
			break
		}
	}
	changed := *step
	first := byte('X')
	if step.Text[0] == 'X' {
		first = 'Y'
	}
	changed.Text = string(first) + step.Text[1:]
	return &changed
}

// faultResponseWriter is the response writer a faulty stream writes through: headers and
// status go to the real one, body bytes through the rewrite.
type faultResponseWriter struct {
	http.ResponseWriter
	fw *faultWriter
}

func (f faultResponseWriter) Write(p []byte) (int, error) { return f.fw.Write(p) }
