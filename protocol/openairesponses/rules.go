package openairesponses

import "github.com/streambench/streambench/protocol"

// The openai-responses dialect's own rules (docs/PROTOCOLS.md, "openai-responses").
const (
	REvent     protocol.Rule = "R-responses-event"
	RSequence  protocol.Rule = "R-responses-sequence"
	RLifecycle protocol.Rule = "R-responses-lifecycle"
	RItem      protocol.Rule = "R-responses-item"
	RText      protocol.Rule = "R-responses-text"
	RUsage     protocol.Rule = "R-responses-usage"
	RError     protocol.Rule = "R-responses-error"
	RContent   protocol.Rule = "R-responses-content"
)

// rules declare the rules above, the ones only openai-responses checks, for the registry.
var rules = []protocol.RuleSpec{
	{ID: REvent, Kind: protocol.RuleStructure, Text: "an event: line on every frame, equal to the body's type"},
	{ID: RSequence, Kind: protocol.RuleStructure, Text: "sequence_number on every event, strictly increasing"},
	{ID: RLifecycle, Kind: protocol.RuleStructure, Text: "response.created first, one terminal whose response says so, nothing after but [DONE]"},
	{ID: RItem, Kind: protocol.RuleStructure, Text: "items opened and closed by output_index, deltas inside an open content part, an incomplete item last"},
	{ID: RText, Kind: protocol.RuleStructure, Text: "the deltas' concatenation equals the .done text, the part's and the item's final content"},
	{ID: RUsage, Kind: protocol.RuleStructure, Text: "response.completed carries usage.output_tokens, a count in 0…2^40"},
	{ID: RError, Kind: protocol.RuleMixed, Text: "an error event's shape, response.failed right after it, and only where scripted",
		Content: "an error (HTTP or event) at another turn than the one the script fails, or none where it fails"},
	{ID: RContent, Kind: protocol.RuleContent, Text: "ground truth: reasoning, text and function calls equal the script"},
}
