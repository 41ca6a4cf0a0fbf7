package protocol

// RuleKind says what a rule judges: the stream's structure, which every target must get
// right, or its content against the script's ground truth, which only a target in front of
// the mock can (Session.NoGroundTruth, `--no-ground-truth`, turns every content judgement
// off).
type RuleKind uint8

// Rule kinds.
const (
	// RuleStructure: framing, lifecycle and order, one terminal and the end marker, headers,
	// policies and limits of the deployment, the client's own actions. Judged with and without
	// ground truth.
	RuleStructure RuleKind = iota + 1
	// RuleContent: text, thinking, tool calls, outcomes or counts compared with the script.
	// Not judged without ground truth.
	RuleContent
	// RuleMixed: a rule with a structural part, judged always, and a content part (against
	// the script), judged only with ground truth. RuleContentPart says which is which.
	RuleMixed
)

func (k RuleKind) String() string {
	switch k {
	case RuleStructure:
		return "structure"
	case RuleContent:
		return "content"
	case RuleMixed:
		return "mixed"
	}
	return "unknown"
}

// ruleKinds classifies every rule of Rules() (a test holds it to that). For a mixed rule the
// map's note is its content part; docs/PROTOCOLS.md says the same in each dialect's rule list.
var ruleKinds = map[Rule]struct {
	kind    RuleKind
	content string // RuleMixed: the part judged against the script
}{
	RConverge:         {RuleContent, ""},
	RResetScope:       {RuleMixed, "a reset in the final turn by the script's count of intermediate turns, or after every scripted tool call settled"},
	RLegacySettled:    {RuleMixed, "the one chunk is the scripted final text, and it comes"},
	RThinkingGate:     {RuleMixed, "the thinking frames carry the scripted thinking, all of it"},
	RToolGate:         {RuleMixed, "one tool frame pair per scripted call, with its id, name and scripted end status"},
	RNoThinkingAnswer: {RuleContent, ""},
	RToolRedaction:    {RuleStructure, ""},
	RToolLifecycle:    {RuleMixed, "compose: tool_end's failed agrees with the scripted outcome"},
	RTerminal:         {RuleMixed, "the error terminal where the script fails (a success terminal then), ai-sdk's finish with tool-calls while the script has more turns"},
	RAbort:            {RuleStructure, ""},
	RComposeAnswer:    {RuleContent, ""},
	RComposeArgs:      {RuleMixed, "each call's arguments and toolName equal the scripted call's, every scripted call streams its arguments"},
	RComposeThinking:  {RuleMixed, "the reasoning text is the scripted thinking"},
	RFraming:          {RuleStructure, ""},
	RHeaders:          {RuleStructure, ""},

	ROpenAIToolCall:   {RuleStructure, ""},
	ROpenAIFinish:     {RuleMixed, "tool_calls iff the turn has scripted calls, else stop"},
	ROpenAIUsage:      {RuleStructure, ""},
	ROpenAIDone:       {RuleStructure, ""},
	ROpenAIError:      {RuleMixed, "an error (HTTP or frame) at another turn than the one the script fails, or none where it fails"},
	ROpenAIContent:    {RuleContent, ""},
	RAnthropicMessage: {RuleMixed, "stop_reason tool_use iff the turn has scripted calls, else end_turn"},
	RAnthropicBlock:   {RuleStructure, ""},
	RAnthropicError:   {RuleMixed, "an error (HTTP or event) at another turn than the one the script fails, or none where it fails"},
	RAnthropicContent: {RuleContent, ""},

	RResponsesEvent:     {RuleStructure, ""},
	RResponsesSequence:  {RuleStructure, ""},
	RResponsesLifecycle: {RuleStructure, ""},
	RResponsesItem:      {RuleStructure, ""},
	RResponsesText:      {RuleStructure, ""},
	RResponsesUsage:     {RuleStructure, ""},
	RResponsesError:     {RuleMixed, "an error (HTTP or event) at another turn than the one the script fails, or none where it fails"},
	RResponsesContent:   {RuleContent, ""},

	RAGUIRun:            {RuleStructure, ""},
	RAGUIMessage:        {RuleStructure, ""},
	RAGUIReasoning:      {RuleStructure, ""},
	RAGUITool:           {RuleStructure, ""},
	RAGUIStep:           {RuleStructure, ""},
	RAGUIState:          {RuleStructure, ""},
	RAGUIError:          {RuleMixed, "RUN_ERROR where the script fails (RUN_FINISHED there is a violation)"},
	RAGUIContent:        {RuleContent, ""},
	RLangGraphEvent:     {RuleStructure, ""},
	RLangGraphLifecycle: {RuleStructure, ""},
	RLangGraphMessage:   {RuleStructure, ""},
	RLangGraphError:     {RuleMixed, "an error event in a session whose script does not fail at the provider, or none where it fails"},
	RLangGraphContent:   {RuleContent, ""},

	RAISDKParts: {RuleStructure, ""},
	RAISDKText:  {RuleContent, ""},
	RAISDKTool:  {RuleContent, ""},

	RRedactLive:        {RuleStructure, ""},
	RRedactOutput:      {RuleMixed, "output.content is the scripted final text redacted"},
	RReconnectLiveOnly: {RuleStructure, ""},
	RReconnectReplay:   {RuleStructure, ""},

	RSwarmClose:      {RuleStructure, ""},
	RSwarmOrder:      {RuleStructure, ""},
	RSwarmChain:      {RuleStructure, ""},
	RSwarmParentDone: {RuleStructure, ""},
	RSwarmContent:    {RuleContent, ""},
	RSwarmCancel:     {RuleStructure, ""},

	RPaused:             {RuleMixed, "the run pauses exactly when the script pauses"},
	RFinalOutput:        {RuleContent, ""},
	RThinkingCapability: {RuleStructure, ""},
	RCancelNotTimeout:   {RuleMixed, "the scripted execution timeout is reported as a timeout"},
	RThinkingCap:        {RuleStructure, ""},
	RSettledTools:       {RuleMixed, "the one chunk is the scripted final text, and it comes"},

	RPlanOrder:       {RuleStructure, ""},
	RPlanVersion:     {RuleStructure, ""},
	RPlanOutcome:     {RuleMixed, "the decision as the client was scripted to send it, as many requests as scripted decisions, the run ending as the script says"},
	RPlanTasks:       {RuleStructure, ""},
	RComposeAction:   {RuleStructure, ""},
	RConclaveVersion: {RuleStructure, ""},
	RTraceSource:     {RuleStructure, ""},
	RTimingOrder:     {RuleStructure, ""},
}

// RuleKindOf says whether r judges structure, content against the script, or both (0 for a
// rule that is not one of Rules()).
func RuleKindOf(r Rule) RuleKind { return ruleKinds[r].kind }

// RuleContentPart is the part of a mixed rule judged against the script ("" for a rule that
// is not mixed): the part a checker skips without ground truth.
func RuleContentPart(r Rule) string { return ruleKinds[r].content }
