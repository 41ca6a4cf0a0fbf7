package aisdk

import "github.com/streambench/streambench/protocol"

// The ai-sdk dialect's own rules (docs/PROTOCOLS.md, "ai-sdk").
const (
	RParts protocol.Rule = "R-aisdk-parts"
	RText  protocol.Rule = "R-aisdk-text"
	RTool  protocol.Rule = "R-aisdk-tool"
)

// Rules declares the rules above, the ones only ai-sdk checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: RParts, Kind: protocol.RuleStructure, Text: "a part's lifecycle: opened before its deltas, closed once, by id"},
		{ID: RText, Kind: protocol.RuleContent, Text: "text and reasoning deltas against the script"},
		{ID: RTool, Kind: protocol.RuleContent, Text: "a tool call's input and outcome against the script"},
	}
}
