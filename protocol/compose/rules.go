package compose

import "github.com/streambench/streambench/protocol"

// The compose dialect's own rules (docs/PROTOCOLS.md, "compose"); R-swarm-cancel is protocol's.
const (
	RAnswer          protocol.Rule = "R-compose-answer"
	RArgs            protocol.Rule = "R-compose-args"
	RThinking        protocol.Rule = "R-compose-thinking"
	RPlanOrder       protocol.Rule = "R-plan-order"
	RPlanVersion     protocol.Rule = "R-plan-version"
	RPlanOutcome     protocol.Rule = "R-plan-outcome"
	RPlanTasks       protocol.Rule = "R-plan-tasks"
	RAction          protocol.Rule = "R-compose-action"
	RConclaveVersion protocol.Rule = "R-conclave-version"
	RTraceSource     protocol.Rule = "R-trace-source"
	RTimingOrder     protocol.Rule = "R-timing-order"
	RSwarmClose      protocol.Rule = "R-swarm-close"
	RSwarmOrder      protocol.Rule = "R-swarm-order"
	RSwarmChain      protocol.Rule = "R-swarm-chain"
	RSwarmParentDone protocol.Rule = "R-swarm-parent-done"
	RSwarmContent    protocol.Rule = "R-swarm-content"
)

// Rules declares the rules above, the ones only compose checks, for the registry.
func (*Dialect) Rules() []protocol.RuleSpec {
	return []protocol.RuleSpec{
		{ID: RAnswer, Kind: protocol.RuleContent, Text: "the concatenated text deltas are the scripted text of all turns"},
		{ID: RArgs, Kind: protocol.RuleMixed, Text: "each call's streamed arguments and tool_start input agree",
			Content: "each call's arguments and toolName equal the scripted call's, every scripted call streams its arguments"},
		{ID: RThinking, Kind: protocol.RuleMixed, Text: "thinking_start and thinking_end balanced",
			Content: "the reasoning text is the scripted thinking"},
		{ID: RPlanOrder, Kind: protocol.RuleStructure, Text: "plan.proposed → approval.requested → approval.decided (→ plan.feedback_requested → next version)"},
		{ID: RPlanVersion, Kind: protocol.RuleStructure, Text: "one proposalId, every frame on the current version, versions increase"},
		{ID: RPlanOutcome, Kind: protocol.RuleMixed, Text: "the decision as sent, the run ends as the script says, an undecided approval errors within its bound",
			Content: "the decision as the client was scripted to send it, as many requests as scripted decisions, the run ending as the script says"},
		{ID: RPlanTasks, Kind: protocol.RuleStructure, Text: "task.* only after approval, for a task of the approved plan"},
		{ID: RAction, Kind: protocol.RuleStructure, Text: "an action event carries a status"},
		{ID: RConclaveVersion, Kind: protocol.RuleStructure, Text: "per-key conclave versions never go backwards; a write or delete moves them on"},
		{ID: RTraceSource, Kind: protocol.RuleStructure, Text: "a trace's source is one the seed lists"},
		{ID: RTimingOrder, Kind: protocol.RuleStructure, Text: "msm_start ≤ model_start ≤ first_text_delta ≤ done, elapsedMs never decreasing"},
		{ID: RSwarmClose, Kind: protocol.RuleStructure, Text: "every swarm_child_start has exactly one swarm_child_done or swarm_child_error"},
		{ID: RSwarmOrder, Kind: protocol.RuleStructure, Text: "child deltas and tool events only for a started, unfinished runKey; a runKey starts once"},
		{ID: RSwarmChain, Kind: protocol.RuleStructure, Text: "runKeyChain is the parent's chain plus the runKey; depth, parentRunId and rootRunId agree"},
		{ID: RSwarmParentDone, Kind: protocol.RuleStructure, Text: "the parent's done comes after every child finished"},
		{ID: RSwarmContent, Kind: protocol.RuleContent, Text: "ground truth: each child's deltas, tools and outcome equal its script"},
	}
}
