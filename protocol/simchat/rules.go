package simchat

import "github.com/streambench/streambench/protocol"

// The sim-chat dialect's own rules (docs/PROTOCOLS.md, "sim-chat"); the shared are protocol's.
const (
	RLegacySettled protocol.Rule = "R-legacy-settled"
	RThinkingGate  protocol.Rule = "R-thinking-gate"
	RToolGate      protocol.Rule = "R-tool-gate"
	RToolRedaction protocol.Rule = "R-tool-redaction"
	RSettledTools  protocol.Rule = "R-settled-tools"
)

// Rules declares the rules above, the ones only sim-chat checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: RLegacySettled, Kind: protocol.RuleMixed, Text: "a client without the opt-in header gets no chunk_reset, no intermediate-turn text, the final text in one piece",
			Content: "the one chunk is the scripted final text, and it comes"},
		{ID: RThinkingGate, Kind: protocol.RuleMixed, Text: "thinking frames only with the opt-in header and includeThinking",
			Content: "the thinking frames carry the scripted thinking, all of it"},
		{ID: RToolGate, Kind: protocol.RuleMixed, Text: "tool frames only with the opt-in header and includeToolCalls",
			Content: "one tool frame pair per scripted call, with its id, name and scripted end status"},
		{ID: RToolRedaction, Kind: protocol.RuleStructure, Text: "tool frames and the final envelope carry no tool arguments, input, result or output"},
		{ID: RSettledTools, Kind: protocol.RuleMixed, Text: "a provider without a live tool loop: only the settled final text, in one chunk",
			Content: "the one chunk is the scripted final text, and it comes"},
	}
}
