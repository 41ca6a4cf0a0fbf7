package mockprovider

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/streambench/streambench/scenarios"
)

// Fault is a wire misbehaviour the mock injects into every stream, so each rule of the provider
// wire dialects has a switch that makes it fail; a fault named for a wire applies to it only.
type Fault string

// The fault switches (Faults describes them), each beside the rule it proves (docs/PROTOCOLS.md).
const (
	FaultNone                    Fault = ""
	FaultTextDiffers             Fault = "text-differs"              // R-openai-content, R-anthropic-content
	FaultDropError               Fault = "drop-error"                // R-openai-error, R-anthropic-error
	FaultOpenAIToolNoIndex       Fault = "openai-tool-no-index"      // R-openai-tool-call
	FaultOpenAIWrongFinish       Fault = "openai-wrong-finish"       // R-openai-finish
	FaultOpenAINoUsage           Fault = "openai-no-usage"           // R-openai-usage
	FaultOpenAINoDone            Fault = "openai-no-done"            // R-openai-done
	FaultOpenAIReasoningField    Fault = "openai-reasoning-field"    // none: a leniency, which must pass
	FaultAnthropicNoBlockStop    Fault = "anthropic-no-block-stop"   // R-anthropic-block
	FaultAnthropicNoMessageStop  Fault = "anthropic-no-message-stop" // R-anthropic-message
	FaultAnthropicPingStorm      Fault = "anthropic-ping-storm"      // none: a leniency, which must pass
	FaultResponsesEventName      Fault = "responses-event-name"      // R-responses-event
	FaultResponsesSequence       Fault = "responses-sequence"        // R-responses-sequence
	FaultResponsesNoCreated      Fault = "responses-no-created"      // R-responses-lifecycle
	FaultResponsesNoItemDone     Fault = "responses-no-item-done"    // R-responses-item
	FaultResponsesNoPart         Fault = "responses-no-part"         // R-responses-item
	FaultResponsesIncompleteItem Fault = "responses-incomplete-item" // R-responses-item
	FaultResponsesDoneText       Fault = "responses-done-text"       // R-responses-text
	FaultResponsesNoUsage        Fault = "responses-no-usage"        // R-responses-usage
	FaultResponsesNoFailed       Fault = "responses-no-failed"       // R-responses-error
	FaultResponsesNoDone         Fault = "responses-no-done"         // R-responses-lifecycle (requireDone only)
)

// responsesWireName is the Responses wire's name (openairesponses.Name).
const responsesWireName = "openai-responses"

// faultSpec is a fault's description and its rewrite of wire's bytes (none: the handler's).
type faultSpec struct {
	doc, wire string
	rewrite   func([]byte) []byte
}

// faultSpecs holds every fault but FaultNone.
var faultSpecs = map[Fault]faultSpec{
	FaultTextDiffers: {doc: "first byte of each turn's text changed"},
	FaultDropError:   {doc: "scripted mid-stream errors replaced by a normal end"},
	FaultOpenAIToolNoIndex: {"openai: tool_calls deltas without index", "openai",
		replaceRe(`"tool_calls":\[\{"index":\d+,`, `"tool_calls":[{`)},
	FaultOpenAIWrongFinish: {"openai: finish_reason stop and tool_calls swapped", "openai", swapFinishReasons},
	FaultOpenAINoUsage:     {doc: "openai: no usage chunk", wire: "openai"},
	FaultOpenAINoDone:      {"openai: no data: [DONE]", "openai", replace("data: [DONE]\n\n", "")},
	FaultOpenAIReasoningField: {"openai: reasoning sent as delta.reasoning (tolerated)", "openai",
		replace(`{"reasoning_content":`, `{"reasoning":`)},
	FaultAnthropicNoBlockStop:   {"anthropic: no content_block_stop", "anthropic", dropEvent("content_block_stop")},
	FaultAnthropicNoMessageStop: {"anthropic: no message_stop", "anthropic", dropEvent("message_stop")},
	FaultAnthropicPingStorm: {"anthropic: a ping before every event (tolerated)", "anthropic",
		replaceRe(`(?m)^(event: )`, "event: ping\ndata: {\"type\":\"ping\"}\n\n$1")},
	FaultResponsesEventName: {"openai-responses: output_text.delta events named response.text.delta on their event: line",
		responsesWireName, replace("event: response.output_text.delta\n", "event: response.text.delta\n")},
	FaultResponsesSequence: {"openai-responses: sequence_number 1 on every event", responsesWireName,
		replaceRe(`"sequence_number":\d+`, `"sequence_number":1`)},
	FaultResponsesNoCreated: {"openai-responses: no response.created", responsesWireName,
		dropEvent("response.created")},
	FaultResponsesNoItemDone: {"openai-responses: no response.output_item.done", responsesWireName,
		dropEvent("response.output_item.done")},
	FaultResponsesNoPart: {"openai-responses: no response.content_part.added", responsesWireName,
		dropEvent("response.content_part.added")},
	// The item's first status member.
	FaultResponsesIncompleteItem: {"openai-responses: items done incomplete in a completed response", responsesWireName,
		replaceRe(`(event: response\.output_item\.done\ndata: [^\n]*?"item":\{[^\n]*?)"status":"completed"`,
			`${1}"status":"incomplete"`)},
	// The text up to and including its first character.
	FaultResponsesDoneText: {"openai-responses: output_text.done's text without its first character", responsesWireName,
		replaceRe(`(event: response\.output_text\.done\ndata: [^\n]*?)"text":"(?:\\.|[^\\"])`, `${1}"text":"`)},
	// usage is the last member of the response.
	FaultResponsesNoUsage: {"openai-responses: response.completed with usage null", responsesWireName,
		replaceRe(`(event: response\.completed\ndata: [^\n]*?)"usage":\{[^\n]*\}\}\}`, `${1}"usage":null}}`)},
	FaultResponsesNoFailed: {"openai-responses: no response.failed after the error event", responsesWireName,
		dropEvent("response.failed")},
	FaultResponsesNoDone: {"openai-responses: no data: [DONE] (OpenAI's own stream; tolerated unless requireDone)",
		responsesWireName, replace("data: [DONE]\n\n", "")},
}

// answerFaults rewrite a non-streaming answer's JSON (written in one Write) on the fault's wire:
// the faults that mean something in an answer. text-differs and drop-error change the turn
// itself, so they apply to both request shapes on every wire; the rest are streams only.
var answerFaults = map[Fault]func([]byte) []byte{
	FaultOpenAIWrongFinish:    swapFinishReasons,
	FaultOpenAINoUsage:        replaceRe(`,"usage":\{[^}]*\}`, ""),
	FaultOpenAIReasoningField: replace(`"reasoning_content":`, `"reasoning":`),
	// Every output item's status (the response's own comes before its output).
	FaultResponsesIncompleteItem: func(b []byte) []byte {
		head, items, ok := bytes.Cut(b, []byte(`"output":[`))
		if !ok {
			return b
		}
		items = bytes.ReplaceAll(items, []byte(`"status":"completed"`), []byte(`"status":"incomplete"`))
		return slices.Concat(head, []byte(`"output":[`), items)
	},
	// usage is the response's last member.
	FaultResponsesNoUsage: replaceRe(`"usage":\{.*\}\}(\n?)$`, `"usage":null}$1`),
}

// answerTurn is turn as a non-streaming answer under f: for FaultTextDiffers a copy whose
// first text step is changed as the stream's is.
func (f Fault) answerTurn(turn *scenarios.ScriptTurn) *scenarios.ScriptTurn {
	for i := range turn.Steps {
		if changed := f.step(turn, &turn.Steps[i]); changed != &turn.Steps[i] {
			copied := *turn
			copied.Steps = slices.Clone(turn.Steps)
			copied.Steps[i] = *changed
			return &copied
		}
	}
	return turn
}

// Faults lists every fault switch with a one-line description, sorted by name; the ones that
// leave non-streaming answers alone say so.
func Faults() []string {
	out := make([]string, 0, len(faultSpecs))
	for f, spec := range faultSpecs {
		doc := spec.doc
		if spec.wire != "" && answerFaults[f] == nil {
			doc += " (streams only)"
		}
		out = append(out, string(f)+": "+doc)
	}
	sort.Strings(out)
	return out
}

// ParseFault returns the fault named name ("" is none), or an error listing the known ones.
func ParseFault(name string) (Fault, error) {
	if _, ok := faultSpecs[Fault(name)]; ok || name == "" {
		return Fault(name), nil
	}
	names := make([]string, 0, len(faultSpecs))
	for f := range faultSpecs {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown fault %q; known faults: %s", name, strings.Join(names, ", "))
}

// writer is w with the fault's rewrite on wireName of a stream, or of a non-streaming answer
// (w itself when there is none).
func (f Fault) writer(w http.ResponseWriter, wireName string, answer bool) http.ResponseWriter {
	spec := faultSpecs[f]
	rewrite := spec.rewrite
	if answer {
		rewrite = answerFaults[f]
	}
	if spec.wire != wireName || rewrite == nil {
		return w
	}
	return faultWriter{w, rewrite}
}

func replace(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(old), []byte(new)) }
}

// replaceRe is the rewrite that replaces every match of pattern with repl ($1 expanded).
func replaceRe(pattern, repl string) func([]byte) []byte {
	re := regexp.MustCompile(pattern)
	return func(b []byte) []byte { return re.ReplaceAll(b, []byte(repl)) }
}

// dropEvent is the rewrite that removes every event named typ.
func dropEvent(typ string) func([]byte) []byte {
	return replaceRe(`event: `+regexp.QuoteMeta(typ)+`\ndata: [^\n]*\n\n`, "")
}

func swapFinishReasons(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(`"finish_reason":"stop"`), []byte(`"finish_reason":"@"`))
	b = bytes.ReplaceAll(b, []byte(`"finish_reason":"tool_calls"`), []byte(`"finish_reason":"stop"`))
	return bytes.ReplaceAll(b, []byte(`"finish_reason":"@"`), []byte(`"finish_reason":"tool_calls"`))
}

// faultWriter writes a faulty response's body through the rewrite, each Write whole frames (or
// the whole answer); it is in the response only with a fault.
type faultWriter struct {
	http.ResponseWriter
	rewrite func([]byte) []byte
}

func (f faultWriter) Write(p []byte) (int, error) {
	if _, err := f.ResponseWriter.Write(f.rewrite(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// step returns step, or for FaultTextDiffers on the first text step a changed copy.
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
