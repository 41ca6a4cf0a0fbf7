package agui

import "encoding/json"

// Event types of the AG-UI protocol, as @ag-ui/core's EventType lists them (REASONING_* are
// the current names; THINKING_* are the older ones it still accepts, deprecated).
const (
	TypeRunStarted              = "RUN_STARTED"
	TypeRunFinished             = "RUN_FINISHED"
	TypeRunError                = "RUN_ERROR"
	TypeStepStarted             = "STEP_STARTED"
	TypeStepFinished            = "STEP_FINISHED"
	TypeTextMessageStart        = "TEXT_MESSAGE_START"
	TypeTextMessageContent      = "TEXT_MESSAGE_CONTENT"
	TypeTextMessageEnd          = "TEXT_MESSAGE_END"
	TypeTextMessageChunk        = "TEXT_MESSAGE_CHUNK"
	TypeToolCallStart           = "TOOL_CALL_START"
	TypeToolCallArgs            = "TOOL_CALL_ARGS"
	TypeToolCallEnd             = "TOOL_CALL_END"
	TypeToolCallChunk           = "TOOL_CALL_CHUNK"
	TypeToolCallResult          = "TOOL_CALL_RESULT"
	TypeReasoningStart          = "REASONING_START"
	TypeReasoningMessageStart   = "REASONING_MESSAGE_START"
	TypeReasoningMessageContent = "REASONING_MESSAGE_CONTENT"
	TypeReasoningMessageEnd     = "REASONING_MESSAGE_END"
	TypeReasoningMessageChunk   = "REASONING_MESSAGE_CHUNK"
	TypeReasoningEnd            = "REASONING_END"
	TypeReasoningEncrypted      = "REASONING_ENCRYPTED_VALUE"
	TypeThinkingStart           = "THINKING_START"
	TypeThinkingEnd             = "THINKING_END"
	TypeThinkingMessageStart    = "THINKING_TEXT_MESSAGE_START"
	TypeThinkingMessageContent  = "THINKING_TEXT_MESSAGE_CONTENT"
	TypeThinkingMessageEnd      = "THINKING_TEXT_MESSAGE_END"
	TypeStateSnapshot           = "STATE_SNAPSHOT"
	TypeStateDelta              = "STATE_DELTA"
	TypeMessagesSnapshot        = "MESSAGES_SNAPSHOT"
	TypeActivitySnapshot        = "ACTIVITY_SNAPSHOT"
	TypeActivityDelta           = "ACTIVITY_DELTA"
	TypeRaw                     = "RAW"
	TypeCustom                  = "CUSTOM"
)

// Event is one AG-UI event as it travels in an SSE data: line: the union of the fields the
// writer sends and the checker reads (the rest of an event is accepted and not judged). A
// field's pointer is nil when the event does not carry it, so the checker can tell a missing
// required field from an empty one.
type Event struct {
	Type            string  `json:"type"`
	ThreadID        *string `json:"threadId,omitempty"`
	RunID           *string `json:"runId,omitempty"`
	MessageID       *string `json:"messageId,omitempty"`
	Role            *string `json:"role,omitempty"`
	ToolCallID      *string `json:"toolCallId,omitempty"`
	ToolCallName    *string `json:"toolCallName,omitempty"`
	ParentMessageID *string `json:"parentMessageId,omitempty"`
	Content         *string `json:"content,omitempty"`
	StepName        *string `json:"stepName,omitempty"`
	Message         *string `json:"message,omitempty"`
	Code            *string `json:"code,omitempty"`
	Title           *string `json:"title,omitempty"`
	Name            *string `json:"name,omitempty"`
	// Delta is a string on the CONTENT, ARGS and CHUNK events and a JSON Patch array on
	// STATE_DELTA, so it is kept raw.
	Delta    json.RawMessage `json:"delta,omitempty"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// str returns a pointer to s, for building events.
func str(s string) *string { return &s }

// RunAgentInput is the body an AG-UI client POSTs to run an agent (@ag-ui/core's
// RunAgentInputSchema), with the fields streambench reads or sends.
type RunAgentInput struct {
	ThreadID       string            `json:"threadId"`
	RunID          string            `json:"runId"`
	State          json.RawMessage   `json:"state"`
	Messages       []InputMessage    `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	Context        []json.RawMessage `json:"context"`
	ForwardedProps json.RawMessage   `json:"forwardedProps"`
}

// InputMessage is one message of RunAgentInput (a user message's content is a string).
type InputMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content,omitempty"`
}
