package simcanvas

import "github.com/streambench/streambench/protocol"

// The sim-canvas dialect's own rules (docs/PROTOCOLS.md, "sim-canvas"); the shared are protocol's.
const (
	RRedactLive        protocol.Rule = "R-redact-live"
	RRedactOutput      protocol.Rule = "R-redact-output"
	RReconnectLiveOnly protocol.Rule = "R-reconnect-live-only"
	RReconnectReplay   protocol.Rule = "R-reconnect-replay"
)

// Rules declares the rules above, the ones only sim-canvas checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: RRedactLive, Kind: protocol.RuleStructure, Text: "a PII-redacted block sends no live stream:* frames"},
		{ID: RRedactOutput, Kind: protocol.RuleMixed, Text: "a PII-redacted block's output arrives redacted, with block:completed",
			Content: "output.content is the scripted final text redacted"},
		{ID: RReconnectLiveOnly, Kind: protocol.RuleStructure, Text: "a reconnect never replays stream:chunk, chunk_reset, thinking, tool"},
		{ID: RReconnectReplay, Kind: protocol.RuleStructure, Text: "a reconnect replays the buffered execution:*/block:* events missed"},
	}
}
