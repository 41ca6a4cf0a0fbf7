package agui

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// SetResponseHeaders sets the response headers of an AG-UI event stream.
func SetResponseHeaders(h http.Header) {
	sse.SetHeaders(h)
}

// Writer writes AG-UI events as @ag-ui/encoder does, one Write per event; flushing is the
// caller's job. Not safe for concurrent use.
type Writer struct {
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w, buf: make([]byte, 0, 256)} }

// Write writes ev as one data: frame.
func (w *Writer) Write(ev *Event) error {
	body, err := jsonwire.MarshalNoHTML(ev)
	if err != nil {
		return err
	}
	b := append(w.buf[:0], "data: "...)
	b = append(b, bytes.TrimSpace(body)...)
	b = append(b, "\n\n"...)
	w.buf = b
	_, err = w.w.Write(b)
	return err
}

// RunStarted writes RUN_STARTED.
func (w *Writer) RunStarted(threadID, runID string) error {
	return w.Write(&Event{Type: TypeRunStarted, ThreadID: str(threadID), RunID: str(runID)})
}

// RunFinished writes RUN_FINISHED with result (nil: none).
func (w *Writer) RunFinished(threadID, runID string, result json.RawMessage) error {
	return w.Write(&Event{Type: TypeRunFinished, ThreadID: str(threadID), RunID: str(runID), Result: result})
}

// RunError writes RUN_ERROR with message and code ("" for none).
func (w *Writer) RunError(message, code string) error {
	ev := &Event{Type: TypeRunError, Message: str(message)}
	if code != "" {
		ev.Code = str(code)
	}
	return w.Write(ev)
}

// StepStarted writes STEP_STARTED.
func (w *Writer) StepStarted(name string) error {
	return w.Write(&Event{Type: TypeStepStarted, StepName: str(name)})
}

// StepFinished writes STEP_FINISHED.
func (w *Writer) StepFinished(name string) error {
	return w.Write(&Event{Type: TypeStepFinished, StepName: str(name)})
}

// TextStart writes TEXT_MESSAGE_START of an assistant message.
func (w *Writer) TextStart(messageID string) error {
	return w.Write(&Event{Type: TypeTextMessageStart, MessageID: str(messageID), Role: str("assistant")})
}

// TextContent writes TEXT_MESSAGE_CONTENT; an empty delta writes nothing (the schema forbids it).
func (w *Writer) TextContent(messageID, delta string) error {
	if delta == "" {
		return nil
	}
	return w.Write(&Event{Type: TypeTextMessageContent, MessageID: str(messageID), Delta: jsonString(delta)})
}

// TextEnd writes TEXT_MESSAGE_END.
func (w *Writer) TextEnd(messageID string) error {
	return w.Write(&Event{Type: TypeTextMessageEnd, MessageID: str(messageID)})
}

// ReasoningStart writes REASONING_START.
func (w *Writer) ReasoningStart(messageID string) error {
	return w.Write(&Event{Type: TypeReasoningStart, MessageID: str(messageID)})
}

// ReasoningMessageStart writes REASONING_MESSAGE_START (role reasoning).
func (w *Writer) ReasoningMessageStart(messageID string) error {
	return w.Write(&Event{Type: TypeReasoningMessageStart, MessageID: str(messageID), Role: str("reasoning")})
}

// ReasoningContent writes REASONING_MESSAGE_CONTENT; an empty delta writes nothing.
func (w *Writer) ReasoningContent(messageID, delta string) error {
	if delta == "" {
		return nil
	}
	return w.Write(&Event{Type: TypeReasoningMessageContent, MessageID: str(messageID), Delta: jsonString(delta)})
}

// ReasoningMessageEnd writes REASONING_MESSAGE_END.
func (w *Writer) ReasoningMessageEnd(messageID string) error {
	return w.Write(&Event{Type: TypeReasoningMessageEnd, MessageID: str(messageID)})
}

// ReasoningEnd writes REASONING_END.
func (w *Writer) ReasoningEnd(messageID string) error {
	return w.Write(&Event{Type: TypeReasoningEnd, MessageID: str(messageID)})
}

// ToolStart writes TOOL_CALL_START; parentMessageID "" sends none.
func (w *Writer) ToolStart(toolCallID, name, parentMessageID string) error {
	ev := &Event{Type: TypeToolCallStart, ToolCallID: str(toolCallID), ToolCallName: str(name)}
	if parentMessageID != "" {
		ev.ParentMessageID = str(parentMessageID)
	}
	return w.Write(ev)
}

// ToolArgs writes TOOL_CALL_ARGS.
func (w *Writer) ToolArgs(toolCallID, delta string) error {
	return w.Write(&Event{Type: TypeToolCallArgs, ToolCallID: str(toolCallID), Delta: jsonString(delta)})
}

// ToolEnd writes TOOL_CALL_END.
func (w *Writer) ToolEnd(toolCallID string) error {
	return w.Write(&Event{Type: TypeToolCallEnd, ToolCallID: str(toolCallID)})
}

// ToolResult writes TOOL_CALL_RESULT (role tool) as the tool message messageID.
func (w *Writer) ToolResult(messageID, toolCallID, content string) error {
	return w.Write(&Event{Type: TypeToolCallResult, MessageID: str(messageID), ToolCallID: str(toolCallID), Content: str(content), Role: str("tool")})
}

// StateSnapshot writes STATE_SNAPSHOT with snapshot (JSON).
func (w *Writer) StateSnapshot(snapshot json.RawMessage) error {
	return w.Write(&Event{Type: TypeStateSnapshot, Snapshot: snapshot})
}

// StateDelta writes STATE_DELTA with patch, a JSON Patch (RFC 6902) array.
func (w *Writer) StateDelta(patch json.RawMessage) error {
	return w.Write(&Event{Type: TypeStateDelta, Delta: patch})
}

func jsonString(s string) json.RawMessage {
	return jsonwire.AppendString(nil, s)
}
