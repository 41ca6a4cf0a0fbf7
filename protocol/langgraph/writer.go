package langgraph

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/streambench/streambench/sse"
)

// Writer encodes a run stream as the Agent Server sends it: named events of indented JSON over
// several data: lines, each with an id: {start}-{seq}. Not safe for concurrent use.
type Writer struct {
	w     io.Writer
	buf   []byte
	ev    sse.Event
	start string
	seq   int
	// Compact writes each event's JSON on one data: line (langgraph-api's orjson output).
	Compact bool
	// DescendingIDs counts the ids down: a server no client can resume (langgraph-bad-id).
	DescendingIDs bool
}

// NewWriter returns a writer to w whose event ids start with start.
func NewWriter(w io.Writer, start int64) *Writer {
	return &Writer{w: w, start: strconv.FormatInt(start, 10)}
}

// Event writes one event of the given name with v as its JSON data.
func (w *Writer) Event(name string, v any) error {
	var data []byte
	var err error
	if w.Compact {
		data, err = json.Marshal(v)
	} else {
		data, err = json.MarshalIndent(v, "", "  ")
	}
	if err != nil {
		return err
	}
	return w.Raw(name, data)
}

// Raw writes one event with data as is (which may hold newlines: one data: line each).
func (w *Writer) Raw(name string, data []byte) error {
	seq := w.seq
	if w.DescendingIDs {
		seq = 1_000_000 - w.seq
	}
	w.ev = sse.Event{Type: name, Data: data, ID: w.start + "-" + strconv.Itoa(seq)}
	w.seq++
	w.buf = sse.AppendEvent(w.buf[:0], &w.ev)
	_, err := w.w.Write(w.buf)
	return err
}

// Metadata writes the first event: the run's id and attempt.
func (w *Writer) Metadata(runID string, attempt int) error {
	return w.Event(EventMetadata, Metadata{RunID: runID, Attempt: attempt})
}

// Message writes a messages-tuple event: [m, meta].
func (w *Writer) Message(m *Message, meta *ChunkMetadata) error {
	return w.Event(EventMessages, [2]any{m, meta})
}

// Values writes the state after a step.
func (w *Writer) Values(st *State) error { return w.Event(EventValues, st) }

// Updates writes a node's update: {node: {"messages": msgs}}.
func (w *Writer) Updates(node string, msgs []Message) error {
	return w.Event(EventUpdates, map[string]State{node: {Messages: msgs}})
}

// Error writes the error event a failed run ends with.
func (w *Writer) Error(name, message string) error {
	return w.Event(EventError, RunError{Error: name, Message: message})
}
