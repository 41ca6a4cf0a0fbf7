package simchat

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// ProtocolHeader opts a request in to agent-events framing; the response echoes it.
const ProtocolHeader = "X-Sim-Stream-Protocol"

// ProtocolToken is the opt-in token carried by ProtocolHeader.
const ProtocolToken = "agent-events-v1"

// OptedIn reports whether a request's headers opt in to agent-events framing: the token in any
// case, anywhere in a comma-separated list, across repeated header lines.
func OptedIn(h http.Header) bool {
	for _, v := range h.Values(ProtocolHeader) {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if strings.EqualFold(strings.TrimSpace(tok), ProtocolToken) {
				return true
			}
		}
	}
	return false
}

// SetResponseHeaders sets a sim-chat stream's headers, echoing ProtocolHeader when opted in.
func SetResponseHeaders(h http.Header, optedIn bool) {
	sse.SetHeaders(h)
	if optedIn {
		h.Set(ProtocolHeader, ProtocolToken)
	}
}

// FinalOutput is the success terminal's "output": the answer and the tool calls reduced to name
// and status, since public chat never exposes tool arguments or results (R-tool-redaction).
type FinalOutput struct {
	Content   string        `json:"content"`
	ToolCalls []ToolSummary `json:"toolCalls,omitempty"`
}

// ToolSummary is a tool call as the public final envelope shows it.
type ToolSummary struct {
	ID     string            `json:"id,omitempty"`
	Name   string            `json:"name"`
	Status scenarios.Outcome `json:"status"`
}

// Writer writes sim-chat frames to an io.Writer, one Write per frame, built in a reused buffer
// (per-token frames allocate nothing). Flushing is the caller's job. Not safe for concurrent use.
type Writer struct{ f jsonwire.Sink }

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{jsonwire.NewSink(w, "simchat")}
}

// Chunk writes an answer text frame {"blockId":…,"chunk":…}; an empty text writes nothing.
func (w *Writer) Chunk(blockID, text string) error {
	if text == "" {
		return nil
	}
	b := w.begin()
	b = jsonwire.AppendField(b, `{"blockId":`, blockID)
	b = jsonwire.AppendField(b, `,"chunk":`, text)
	return w.end(b)
}

// Reset writes a chunk_reset frame: the client discards the block's streamed text.
func (w *Writer) Reset(blockID string) error {
	b := w.begin()
	b = jsonwire.AppendField(b, `{"blockId":`, blockID)
	b = append(b, `,"event":"chunk_reset"}`...)
	return w.flushFrame(b)
}

// Thinking writes a thinking frame, its text in "data" (never in "chunk", so no client leaks it).
func (w *Writer) Thinking(blockID, text string) error {
	b := w.begin()
	b = jsonwire.AppendField(b, `{"blockId":`, blockID)
	b = jsonwire.AppendField(b, `,"event":"thinking","data":`, text)
	return w.end(b)
}

// ToolStart writes a tool lifecycle start frame carrying only the call's id and name.
func (w *Writer) ToolStart(blockID, id, name string) error {
	b := w.toolFrame(blockID, "start", id, name)
	return w.end(b)
}

// ToolEnd writes a tool lifecycle end frame with its status (success, error or cancelled).
func (w *Writer) ToolEnd(blockID, id, name string, status scenarios.Outcome) error {
	b := w.toolFrame(blockID, "end", id, name)
	b = jsonwire.AppendField(b, `,"status":`, string(status))
	return w.end(b)
}

func (w *Writer) toolFrame(blockID, phase, id, name string) []byte {
	b := w.begin()
	b = jsonwire.AppendField(b, `{"blockId":`, blockID)
	b = append(b, `,"event":"tool","phase":"`...)
	b = append(b, phase...)
	b = jsonwire.AppendField(b, `","id":`, id)
	b = jsonwire.AppendField(b, `,"name":`, name)
	return b
}

// StreamError writes a non-terminal stream_error frame for a block.
func (w *Writer) StreamError(blockID, msg string) error {
	b := w.begin()
	b = jsonwire.AppendField(b, `{"event":"stream_error","blockId":`, blockID)
	b = jsonwire.AppendField(b, `,"error":`, msg)
	return w.end(b)
}

// Final writes the success terminal with output JSON-encoded (FinalOutput: R-tool-redaction).
func (w *Writer) Final(output any) error {
	out, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("simchat: encode final output: %w", err)
	}
	b := w.begin()
	b = append(b, `{"event":"final","data":{"success":true,"output":`...)
	b = append(b, out...)
	b = append(b, '}')
	return w.end(b)
}

// Error writes the failure terminal {"event":"error","error":msg}.
func (w *Writer) Error(msg string) error {
	b := w.begin()
	b = jsonwire.AppendField(b, `{"event":"error","error":`, msg)
	return w.end(b)
}

// Done writes the end marker, the JSON string "[DONE]" (quotes included).
func (w *Writer) Done() error {
	return w.f.Write(append(w.f.Buf[:0], "data: \"[DONE]\"\n\n"...))
}

// Raw writes p as the data of one frame, unchecked, for a runtime's fault switches.
func (w *Writer) Raw(p []byte) error {
	return w.f.Raw(p)
}

func (w *Writer) begin() []byte { return append(w.f.Buf[:0], "data: "...) }

func (w *Writer) end(b []byte) error {
	b = append(b, '}')
	return w.flushFrame(b)
}

func (w *Writer) flushFrame(b []byte) error { return w.f.Write(append(b, "\n\n"...)) }
