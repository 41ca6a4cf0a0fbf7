package agui

import "encoding/json"

// Event types of the AG-UI protocol, as @ag-ui/core's EventType (THINKING_*: deprecated).
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

// Event is one AG-UI event, the union of the fields used; nil: a field the event lacks.
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
	// Delta is a string, or STATE_DELTA's JSON Patch array: kept raw.
	Delta    json.RawMessage `json:"delta,omitempty"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Value    json.RawMessage `json:"value,omitempty"`
}

func str(s string) *string { return &s }

// RunAgentInput is the body an AG-UI client POSTs to run an agent (@ag-ui/core's schema).
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
