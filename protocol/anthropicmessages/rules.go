package anthropicmessages

import "github.com/streambench/streambench/protocol"

// The anthropic-messages dialect's own rules (docs/PROTOCOLS.md, "anthropic-messages").
const (
	RMessage protocol.Rule = "R-anthropic-message"
	RBlock   protocol.Rule = "R-anthropic-block"
	RError   protocol.Rule = "R-anthropic-error"
	RContent protocol.Rule = "R-anthropic-content"
)

// rules declare the rules above, the ones only anthropic-messages checks, for the registry.
var rules = []protocol.RuleSpec{
	{ID: RMessage, Kind: protocol.RuleMixed, Text: "message_start first, one message_delta with stop_reason, message_stop last",
		Content: "stop_reason tool_use iff the turn has scripted calls, else end_turn"},
	{ID: RBlock, Kind: protocol.RuleStructure, Text: "each block start, deltas of its type, stop, by index"},
	{ID: RError, Kind: protocol.RuleMixed, Text: "a provider error: its shape, and only where scripted",
		Content: "an error (HTTP or event) at another turn than the one the script fails, or none where it fails"},
	{ID: RContent, Kind: protocol.RuleContent, Text: "ground truth: thinking, text and tool_use equal the script"},
}
