package aisdk

import (
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// frame is what the checker reads of one part, its slices aliasing the event or the scanner's
// buffer until the next parse (reused: reading a part allocates nothing).
type frame struct {
	typ, id, delta, toolCallID, toolName, inputTextDelta, errorText, finishReason []byte
	input                                                                         []byte // raw JSON of "input"
	has                                                                           fieldSet
	preliminary                                                                   bool
}

// fieldSet records which fields a part carried (non-null).
type fieldSet uint16

const (
	hasType fieldSet = 1 << iota
	hasID
	hasDelta
	hasToolCallID
	hasToolName
	hasInputTextDelta
	hasErrorText
	hasInput
	hasFinishReason
)

// parse fills f from one part's JSON, skipping the rest; a null reads as absent, as zod's
// optional fields accept.
func (f *frame) parse(sc *jsonwire.Scanner, data []byte) error {
	sc.Reset(data)
	*f = frame{}
	if sc.Object("part") {
		for key := range sc.Members() {
			switch string(key) {
			case "type":
				f.typ = f.str(sc, "type", hasType)
			case "id":
				f.id = f.str(sc, "id", hasID)
			case "delta":
				f.delta = f.str(sc, "delta", hasDelta)
			case "toolCallId":
				f.toolCallID = f.str(sc, "toolCallId", hasToolCallID)
			case "toolName":
				f.toolName = f.str(sc, "toolName", hasToolName)
			case "inputTextDelta":
				f.inputTextDelta = f.str(sc, "inputTextDelta", hasInputTextDelta)
			case "errorText":
				f.errorText = f.str(sc, "errorText", hasErrorText)
			case "finishReason":
				f.finishReason = f.str(sc, "finishReason", hasFinishReason)
			case "input":
				// Present even when null: tool-input-available's input is z.unknown().
				f.input = sc.Raw()
				f.has |= hasInput
			case "preliminary":
				raw := sc.Raw()
				f.preliminary = string(raw) == "true"
			default:
				sc.Skip()
			}
		}
	}
	return sc.Finish()
}

// str reads a string member, recording its presence unless it was null.
func (f *frame) str(sc *jsonwire.Scanner, field string, bit fieldSet) []byte {
	b := sc.Str(field)
	if b != nil && sc.Err() == nil {
		f.has |= bit
	}
	return b
}

// Part types, as ai 7.0.173's uiMessageChunkSchema lists them.
const (
	typeStart                = "start"
	typeFinish               = "finish"
	typeAbort                = "abort"
	typeError                = "error"
	typeStartStep            = "start-step"
	typeFinishStep           = "finish-step"
	typeResetStep            = "reset-step"
	typeTextStart            = "text-start"
	typeTextDelta            = "text-delta"
	typeTextEnd              = "text-end"
	typeReasoningStart       = "reasoning-start"
	typeReasoningDelta       = "reasoning-delta"
	typeReasoningEnd         = "reasoning-end"
	typeToolInputStart       = "tool-input-start"
	typeToolInputDelta       = "tool-input-delta"
	typeToolInputAvailable   = "tool-input-available"
	typeToolInputError       = "tool-input-error"
	typeToolOutputAvailable  = "tool-output-available"
	typeToolOutputError      = "tool-output-error"
	typeToolOutputDenied     = "tool-output-denied"
	typeToolApprovalRequest  = "tool-approval-request"
	typeToolApprovalResponse = "tool-approval-response"
)

// unjudged reports whether t is a part type accepted without judging (data-* parts' shape is
// the application's).
func unjudged(t []byte) bool {
	switch string(t) {
	case "custom", "source-url", "source-document", "file", "reasoning-file", "message-metadata", "steering-message":
		return true
	}
	return len(t) > len("data-") && string(t[:len("data-")]) == "data-"
}
