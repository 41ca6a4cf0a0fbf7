package agui

import "github.com/streambench/streambench/protocol"

// The ag-ui dialect's own rules (docs/PROTOCOLS.md, "ag-ui").
const (
	RRun       protocol.Rule = "R-agui-run"
	RMessage   protocol.Rule = "R-agui-message"
	RReasoning protocol.Rule = "R-agui-reasoning"
	RTool      protocol.Rule = "R-agui-tool"
	RStep      protocol.Rule = "R-agui-step"
	RState     protocol.Rule = "R-agui-state"
	RError     protocol.Rule = "R-agui-error"
	RContent   protocol.Rule = "R-agui-content"
)

// Rules declares the rules above, the ones only ag-ui checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: RRun, Kind: protocol.RuleStructure, Text: "RUN_STARTED first, one run, RUN_FINISHED with its ids, nothing after RUN_FINISHED or RUN_ERROR"},
		{ID: RMessage, Kind: protocol.RuleStructure, Text: "text messages: START, non-empty CONTENT and END by messageId, all closed by RUN_FINISHED"},
		{ID: RReasoning, Kind: protocol.RuleStructure, Text: "reasoning phases and messages (and the older THINKING_*) opened, filled and closed the same way"},
		{ID: RTool, Kind: protocol.RuleStructure, Text: "tool calls: START, ARGS, END by toolCallId, JSON arguments, one TOOL_CALL_RESULT after END"},
		{ID: RStep, Kind: protocol.RuleStructure, Text: "STEP_STARTED and STEP_FINISHED paired by stepName, all finished by RUN_FINISHED"},
		{ID: RState, Kind: protocol.RuleStructure, Text: "every STATE_DELTA is a JSON Patch (RFC 6902) that applies to the last snapshot"},
		{ID: RError, Kind: protocol.RuleMixed, Text: "RUN_ERROR's shape, and RUN_ERROR (not RUN_FINISHED) where the script fails",
			Content: "RUN_ERROR where the script fails (RUN_FINISHED there is a violation)"},
		{ID: RContent, Kind: protocol.RuleContent, Text: "ground truth: text, reasoning and tool arguments equal the script"},
	}
}
