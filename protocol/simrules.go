package protocol

// The Sim seed rules of issue 12 (docs/PROTOCOLS.md, sim-chat and sim-canvas): paused runs,
// final-turn output, capability honesty, cancel versus execution timeout, and the thinking cap;
// and, from the interop trial against Sim v0.8.9 (issue 23), providers that run tools settled.
const (
	RPaused             Rule = "R-paused"              // a paused run ends success with status "paused", every tool settled; only then
	RFinalOutput        Rule = "R-final-output"        // the success terminal's output content is the final turn's text only
	RThinkingCapability Rule = "R-thinking-capability" // a model without thinking yields no thinking frames, whatever the policy
	RCancelNotTimeout   Rule = "R-cancel-not-timeout"  // an execution timeout is an error naming it; a cancel is never reported as one
	RThinkingCap        Rule = "R-thinking-cap"        // at most 524,288 UTF-16 code units of thinking per execution
	RSettledTools       Rule = "R-settled-tools"       // a provider without a live tool loop: only the settled final text, in one chunk
)

// simSeedRules lists the rules above for Rules.
func simSeedRules() []Rule {
	return []Rule{RPaused, RFinalOutput, RThinkingCapability, RCancelNotTimeout, RThinkingCap, RSettledTools}
}
