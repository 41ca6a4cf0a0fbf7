package protocol

// Compose swarm rules (protocol/compose; docs/PROTOCOLS.md, "compose swarm children").
const (
	RSwarmClose      Rule = "R-swarm-close"       // every swarm_child_start has exactly one swarm_child_done or swarm_child_error
	RSwarmOrder      Rule = "R-swarm-order"       // child deltas and tool events only for a started, unfinished runKey; a runKey starts once
	RSwarmChain      Rule = "R-swarm-chain"       // runKeyChain is the parent's chain plus the runKey; depth, parentRunId and rootRunId agree
	RSwarmParentDone Rule = "R-swarm-parent-done" // the parent's done comes after every child finished
	RSwarmContent    Rule = "R-swarm-content"     // ground truth: each child's deltas, tools and outcome equal its script
	RSwarmCancel     Rule = "R-swarm-cancel"      // children of an aborted or stopped run are cancelled at the provider (mock's records)
)
