package openaichat

import "github.com/streambench/streambench/protocol"

// The openai-chat dialect's own rules (docs/PROTOCOLS.md, "openai-chat").
const (
	RToolCall protocol.Rule = "R-openai-tool-call"
	RFinish   protocol.Rule = "R-openai-finish"
	RUsage    protocol.Rule = "R-openai-usage"
	RDone     protocol.Rule = "R-openai-done"
	RError    protocol.Rule = "R-openai-error"
	RContent  protocol.Rule = "R-openai-content"
)

// rules declare the rules above, the ones only openai-chat checks, for the registry.
var rules = []protocol.RuleSpec{
	{ID: RToolCall, Kind: protocol.RuleStructure, Text: "tool_calls deltas: index, id/name first, JSON arguments"},
	{ID: RFinish, Kind: protocol.RuleMixed, Text: "one finish_reason, last, naming what the turn did",
		Content: "tool_calls iff the turn has scripted calls, else stop"},
	{ID: RUsage, Kind: protocol.RuleStructure, Text: "the usage chunk asked for by stream_options.include_usage"},
	{ID: RDone, Kind: protocol.RuleStructure, Text: "data: [DONE] ends a completed stream, nothing after"},
	{ID: RError, Kind: protocol.RuleMixed, Text: "a provider error: its shape, and only where scripted",
		Content: "an error (HTTP or frame) at another turn than the one the script fails, or none where it fails"},
	{ID: RContent, Kind: protocol.RuleContent, Text: "ground truth: text, reasoning and tool calls equal the script"},
}
