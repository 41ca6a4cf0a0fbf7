package protocol

// The langgraph dialect's rules (protocol/langgraph; docs/PROTOCOLS.md, "langgraph"), from
// the LangGraph Agent Server's run stream (POST /runs/stream, /threads/{id}/runs/stream).
const (
	RLangGraphEvent     Rule = "R-langgraph-event"     // a named event of a requested mode (or metadata, error, end) whose JSON has that mode's shape; no id twice
	RLangGraphLifecycle Rule = "R-langgraph-lifecycle" // metadata first with a run_id, nothing after error or end, a clean close only after the final state
	RLangGraphMessage   Rule = "R-langgraph-message"   // the messages-tuple chunks of a message id add up to that message in the next state
	RLangGraphError     Rule = "R-langgraph-error"     // an error event's shape, and only where scripted
	RLangGraphContent   Rule = "R-langgraph-content"   // ground truth: the AI text and tool calls equal the script
)

// langGraphRules lists the rules above for Rules.
func langGraphRules() []Rule {
	return []Rule{RLangGraphEvent, RLangGraphLifecycle, RLangGraphMessage, RLangGraphError, RLangGraphContent}
}
