package protocol

// The ag-ui dialect's rules (protocol/agui; docs/PROTOCOLS.md, "ag-ui"): what the AG-UI
// client's verifyEvents judges, and what it leaves out.
const (
	RAGUIRun       Rule = "R-agui-run"       // RUN_STARTED first, one run, RUN_FINISHED with its ids, nothing after RUN_FINISHED or RUN_ERROR
	RAGUIMessage   Rule = "R-agui-message"   // text messages: START, non-empty CONTENT and END by messageId, all closed by RUN_FINISHED
	RAGUIReasoning Rule = "R-agui-reasoning" // reasoning phases and messages (and the older THINKING_*) opened, filled and closed the same way
	RAGUITool      Rule = "R-agui-tool"      // tool calls: START, ARGS, END by toolCallId, JSON arguments, one TOOL_CALL_RESULT after END
	RAGUIStep      Rule = "R-agui-step"      // STEP_STARTED and STEP_FINISHED paired by stepName, all finished by RUN_FINISHED
	RAGUIState     Rule = "R-agui-state"     // every STATE_DELTA is a JSON Patch (RFC 6902) that applies to the last snapshot
	RAGUIError     Rule = "R-agui-error"     // RUN_ERROR's shape, and RUN_ERROR (not RUN_FINISHED) where the script fails
	RAGUIContent   Rule = "R-agui-content"   // ground truth: text, reasoning and tool arguments equal the script
)

// aguiRules lists the rules above for Rules.
func aguiRules() []Rule {
	return []Rule{RAGUIRun, RAGUIMessage, RAGUIReasoning, RAGUITool, RAGUIStep, RAGUIState, RAGUIError, RAGUIContent}
}
