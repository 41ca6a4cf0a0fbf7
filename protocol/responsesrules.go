package protocol

// The openai-responses dialect's rules (protocol/openairesponses; docs/PROTOCOLS.md,
// "openai-responses"), from the Open Responses specification's streaming rules.
const (
	RResponsesEvent     Rule = "R-responses-event"     // an event: line on every frame, equal to the body's type
	RResponsesSequence  Rule = "R-responses-sequence"  // sequence_number on every event, strictly increasing
	RResponsesLifecycle Rule = "R-responses-lifecycle" // response.created first, one terminal whose response says so, nothing after but [DONE]
	RResponsesItem      Rule = "R-responses-item"      // items opened and closed by output_index, deltas inside an open content part, an incomplete item last
	RResponsesText      Rule = "R-responses-text"      // the deltas' concatenation equals the .done text, the part's and the item's final content
	RResponsesUsage     Rule = "R-responses-usage"     // response.completed carries usage.output_tokens, a count in 0…2^40
	RResponsesError     Rule = "R-responses-error"     // an error event's shape, response.failed right after it, and only where scripted
	RResponsesContent   Rule = "R-responses-content"   // ground truth: reasoning, text and function calls equal the script
)

// responsesRules lists the rules above for Rules.
func responsesRules() []Rule {
	return []Rule{RResponsesEvent, RResponsesSequence, RResponsesLifecycle, RResponsesItem, RResponsesText,
		RResponsesUsage, RResponsesError, RResponsesContent}
}
