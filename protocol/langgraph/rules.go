package langgraph

import "github.com/streambench/streambench/protocol"

// The langgraph dialect's own rules (docs/PROTOCOLS.md, "langgraph").
const (
	REvent     protocol.Rule = "R-langgraph-event"
	RLifecycle protocol.Rule = "R-langgraph-lifecycle"
	RMessage   protocol.Rule = "R-langgraph-message"
	RError     protocol.Rule = "R-langgraph-error"
	RContent   protocol.Rule = "R-langgraph-content"
)

// Rules declares the rules above, the ones only langgraph checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: REvent, Kind: protocol.RuleStructure, Text: "a named event of a requested mode (or metadata, error, end) whose JSON has that mode's shape; no id twice"},
		{ID: RLifecycle, Kind: protocol.RuleStructure, Text: "metadata first with a run_id, nothing after error or end, a clean close only after the final state"},
		{ID: RMessage, Kind: protocol.RuleStructure, Text: "the messages-tuple chunks of a message id add up to that message in the next state"},
		{ID: RError, Kind: protocol.RuleMixed, Text: "an error event's shape, and only where scripted",
			Content: "an error event in a session whose script does not fail at the provider, or none where it fails"},
		{ID: RContent, Kind: protocol.RuleContent, Text: "ground truth: the AI text and tool calls equal the script"},
	}
}
