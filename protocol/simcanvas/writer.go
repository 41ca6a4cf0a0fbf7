package simcanvas

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Event types of the execution-events stream.
const (
	TypeExecutionStarted   = "execution:started"
	TypeBlockStarted       = "block:started"
	TypeChunk              = "stream:chunk"
	TypeChunkReset         = "stream:chunk_reset"
	TypeThinking           = "stream:thinking"
	TypeTool               = "stream:tool"
	TypeStreamDone         = "stream:done"
	TypeBlockCompleted     = "block:completed"
	TypeExecutionCompleted = "execution:completed"
	TypeExecutionError     = "execution:error"
	TypeExecutionCancelled = "execution:cancelled"
)

// SetResponseHeaders sets the response headers of an execution-events stream.
func SetResponseHeaders(h http.Header) {
	sse.SetHeaders(h)
}

// Writer writes execution events, each the envelope {"type","timestamp","executionId",
// "workflowId","eventId","data"} with an eventId one above the last, one Write per frame built
// in a reused buffer. Flushing is the caller's job. Not safe for concurrent use.
type Writer struct {
	Clock func() time.Time // stamps each frame; nil: time.Now
	// IDs writes each eventId as the frame's SSE id: line too, for a reconnect (reconnect.go).
	IDs         bool
	Type        string // the type of the frame being written ("" for Done's and Raw's, which have none)
	f           jsonwire.Sink
	executionID string
	workflowID  string
	eventID     int64
}

// NewWriter returns a Writer for one execution of a workflow.
func NewWriter(w io.Writer, executionID, workflowID string) *Writer {
	return &Writer{f: jsonwire.NewSink(w, "simcanvas"), executionID: executionID, workflowID: workflowID}
}

// EventID is the id of the last frame written (0 before the first).
func (w *Writer) EventID() int64 { return w.eventID }

// ExecutionStarted writes execution:started {startTime}.
func (w *Writer) ExecutionStarted(start time.Time) error {
	b := w.begin(TypeExecutionStarted)
	b = append(b, `{"startTime":"`...)
	b = start.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `"}`...)
	return w.end(b)
}

// BlockStarted writes block:started {blockId, blockName, blockType, executionOrder}.
func (w *Writer) BlockStarted(blockID, blockName, blockType string, executionOrder int) error {
	b := w.begin(TypeBlockStarted)
	b = jsonwire.AppendField(b, `{"blockId":`, blockID)
	b = jsonwire.AppendField(b, `,"blockName":`, blockName)
	b = jsonwire.AppendField(b, `,"blockType":`, blockType)
	b = jsonwire.AppendInt(b, `,"executionOrder":`, int64(executionOrder))
	b = append(b, '}')
	return w.end(b)
}

// Chunk writes stream:chunk {blockId, chunk}; an empty text writes nothing.
func (w *Writer) Chunk(blockID, text string) error {
	if text == "" {
		return nil
	}
	b := w.blockFrame(TypeChunk, blockID)
	b = jsonwire.AppendField(b, `,"chunk":`, text)
	b = append(b, '}')
	return w.end(b)
}

// ChunkReset writes stream:chunk_reset {blockId}: discard the block's streamed text.
func (w *Writer) ChunkReset(blockID string) error {
	return w.end(append(w.blockFrame(TypeChunkReset, blockID), '}'))
}

// Thinking writes stream:thinking {blockId, text} (the field is text, not data).
func (w *Writer) Thinking(blockID, text string) error {
	b := w.blockFrame(TypeThinking, blockID)
	b = jsonwire.AppendField(b, `,"text":`, text)
	b = append(b, '}')
	return w.end(b)
}

// ToolStart writes stream:tool {blockId, phase:"start", id, name}.
func (w *Writer) ToolStart(blockID, id, name string) error {
	return w.end(append(w.toolFrame(blockID, "start", id, name), '}'))
}

// ToolEnd writes stream:tool {blockId, phase:"end", id, name, status}.
func (w *Writer) ToolEnd(blockID, id, name string, status scenarios.Outcome) error {
	b := w.toolFrame(blockID, "end", id, name)
	b = jsonwire.AppendField(b, `,"status":`, string(status))
	b = append(b, '}')
	return w.end(b)
}

func (w *Writer) toolFrame(blockID, phase, id, name string) []byte {
	b := w.blockFrame(TypeTool, blockID)
	b = append(b, `,"phase":"`...)
	b = append(b, phase...)
	b = jsonwire.AppendField(b, `","id":`, id)
	return jsonwire.AppendField(b, `,"name":`, name)
}

// StreamDone writes stream:done {blockId}: the block's live stream is over.
func (w *Writer) StreamDone(blockID string) error {
	return w.end(append(w.blockFrame(TypeStreamDone, blockID), '}'))
}

// BlockCompleted writes block:completed {blockId, output (JSON-encoded), durationMs}.
func (w *Writer) BlockCompleted(blockID string, output any, duration time.Duration) error {
	out, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("simcanvas: encode block output: %w", err)
	}
	b := w.blockFrame(TypeBlockCompleted, blockID)
	b = append(b, `,"output":`...)
	b = append(b, out...)
	b = jsonwire.AppendInt(b, `,"durationMs":`, duration.Milliseconds())
	b = append(b, '}')
	return w.end(b)
}

// ExecutionCompleted writes the success terminal {success:true, output, duration} (ms).
func (w *Writer) ExecutionCompleted(output any, duration time.Duration) error {
	out, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("simcanvas: encode execution output: %w", err)
	}
	b := w.begin(TypeExecutionCompleted)
	b = append(b, `{"success":true,"output":`...)
	b = append(b, out...)
	b = appendDuration(b, duration)
	return w.end(b)
}

// ExecutionError writes the failure terminal {error, duration}.
func (w *Writer) ExecutionError(msg string, duration time.Duration) error {
	b := w.begin(TypeExecutionError)
	b = jsonwire.AppendField(b, `{"error":`, msg)
	b = appendDuration(b, duration)
	return w.end(b)
}

// ExecutionCancelled writes the cancellation terminal {duration}.
func (w *Writer) ExecutionCancelled(duration time.Duration) error {
	b := w.begin(TypeExecutionCancelled)
	b = jsonwire.AppendInt(b, `{"duration":`, duration.Milliseconds())
	return w.end(append(b, '}'))
}

// Done writes the raw end marker "data: [DONE]" (no quotes, no envelope).
func (w *Writer) Done() error {
	w.Type = ""
	return w.f.Write(append(w.f.Buf[:0], "data: [DONE]\n\n"...))
}

// Raw writes p as one frame's data, unchecked, without an envelope (for fault switches).
func (w *Writer) Raw(p []byte) error {
	w.Type = ""
	return w.f.Raw(p)
}

// begin starts a frame: the envelope up to "data":, with the next event id.
func (w *Writer) begin(typ string) []byte {
	w.eventID++
	w.Type = typ
	now := time.Now
	if w.Clock != nil {
		now = w.Clock
	}
	b := w.f.Buf[:0]
	if w.IDs {
		b = jsonwire.AppendInt(b, "id: ", w.eventID)
		b = append(b, '\n')
	}
	b = append(b, `data: {"type":"`...)
	b = append(b, typ...)
	b = append(b, `","timestamp":"`...)
	b = now().UTC().AppendFormat(b, time.RFC3339Nano)
	b = jsonwire.AppendField(b, `","executionId":`, w.executionID)
	b = jsonwire.AppendField(b, `,"workflowId":`, w.workflowID)
	b = jsonwire.AppendInt(b, `,"eventId":`, w.eventID)
	return append(b, `,"data":`...)
}

func (w *Writer) blockFrame(typ, blockID string) []byte {
	b := w.begin(typ)
	return jsonwire.AppendField(b, `{"blockId":`, blockID)
}

// end closes the data object's envelope and the frame, and writes it.
func (w *Writer) end(b []byte) error {
	return w.f.Write(append(b, "}\n\n"...))
}

func appendDuration(b []byte, d time.Duration) []byte {
	b = jsonwire.AppendInt(b, `,"duration":`, d.Milliseconds())
	return append(b, '}')
}
