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
)

// faultDoc describes each fault for --help and error messages.
var faultDoc = map[Fault]string{
	FaultTextDiffers:            "first byte of each turn's text changed",
	FaultDropError:              "scripted mid-stream errors replaced by a normal end",
	FaultOpenAIToolNoIndex:      "openai: tool_calls deltas without index",
	FaultOpenAIWrongFinish:      "openai: finish_reason stop and tool_calls swapped",
	FaultOpenAINoUsage:          "openai: no usage chunk",
	FaultOpenAINoDone:           "openai: no data: [DONE]",
	FaultOpenAIReasoningField:   "openai: reasoning sent as delta.reasoning (tolerated)",
	FaultAnthropicNoBlockStop:   "anthropic: no content_block_stop",
	FaultAnthropicNoMessageStop: "anthropic: no message_stop",
	FaultAnthropicPingStorm:     "anthropic: a ping before every event (tolerated)",
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
	}
	return nil
}

var (
	toolIndex   = regexp.MustCompile(`"tool_calls":\[\{"index":\d+,`)
	blockStop   = regexp.MustCompile(`event: content_block_stop\ndata: [^\n]*\n\n`)
	messageStop = regexp.MustCompile(`event: message_stop\ndata: [^\n]*\n\n`)
	eventStart  = regexp.MustCompile(`(?m)^(event: )`)
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
