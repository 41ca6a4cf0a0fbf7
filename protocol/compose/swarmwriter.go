package compose

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// Swarm frame types (compose-stream-protocol, "Child agent events").
const (
	TypeChildStart     = "swarm_child_start"
	TypeChildDelta     = "swarm_child_delta"
	TypeChildToolStart = "swarm_child_tool_start"
	TypeChildToolEnd   = "swarm_child_tool_end"
	TypeChildDone      = "swarm_child_done"
	TypeChildError     = "swarm_child_error"
)

// StopReasonCompleted is a finished child's stopReason.
const StopReasonCompleted = "completed"

// ChildStart is a swarm_child_start frame: who the child is and where it sits in the run tree.
// RunKeyChain is the parent's chain plus RunKey, starting at the root run's id, and Depth is
// len(RunKeyChain)-1.
type ChildStart struct {
	RootRunID   string   `json:"rootRunId"`
	ParentRunID string   `json:"parentRunId"`
	SubID       string   `json:"subId"`
	Depth       int      `json:"depth"`
	AgentWallet string   `json:"agentWallet"`
	RunKey      string   `json:"runKey"`
	RunKeyChain []string `json:"runKeyChain"`
}

// ChildUsage is a child's token usage as swarm_child_done carries it (camelCase, unlike done).
type ChildUsage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	TotalTokens  int `json:"totalTokens"`
}

// ChildDone is a swarm_child_done frame.
type ChildDone struct {
	RunKey      string     `json:"runKey"`
	Usage       ChildUsage `json:"usage"`
	ToolBatches int        `json:"toolBatches"`
	StopReason  string     `json:"stopReason"`
	WallMs      int64      `json:"wallMs"`
}

// writeJSON writes {"type":typ, ...v's members} as one frame (v encodes as a non-empty object).
func writeJSON(w *Writer, typ string, v any) error {
	body, err := json.Marshal(v)
	if err != nil || len(body) < 3 || body[0] != '{' {
		return fmt.Errorf("compose: %s: not a non-empty JSON object: %v", typ, err)
	}
	b := w.begin(typ)
	b = append(b, ',')
	b = append(b, body[1:]...)
	return w.write(append(b, "\n\n"...))
}

// ChildStart writes swarm_child_start.
func (w *Writer) ChildStart(f ChildStart) error { return writeJSON(w, TypeChildStart, &f) }

// ChildDone writes swarm_child_done.
func (w *Writer) ChildDone(f ChildDone) error { return writeJSON(w, TypeChildDone, &f) }

// ChildDelta writes {"type":"swarm_child_delta","runKey":runKey,"delta":delta}, in the reused
// buffer like Text: child deltas are per token.
func (w *Writer) ChildDelta(runKey, delta string) error {
	b := w.begin(TypeChildDelta)
	b = append(b, `,"runKey":`...)
	b = jsonwire.AppendString(b, runKey)
	b = append(b, `,"delta":`...)
	b = jsonwire.AppendString(b, delta)
	return w.end(b)
}

// ChildToolStart writes {"type":"swarm_child_tool_start","runKey":…,"toolName":…,"input":…}.
// The seed names the frame without a shape; this one mirrors tool_start.
func (w *Writer) ChildToolStart(runKey, toolName string, input json.RawMessage) error {
	b := w.begin(TypeChildToolStart)
	b = append(b, `,"runKey":`...)
	b = jsonwire.AppendString(b, runKey)
	b = append(b, `,"toolName":`...)
	b = jsonwire.AppendString(b, toolName)
	b = append(b, `,"input":`...)
	var err error
	if b, err = appendCompact(b, input); err != nil {
		return fmt.Errorf("compose: swarm_child_tool_start %s input: %w", toolName, err)
	}
	return w.end(b)
}

// ChildToolEnd writes {"type":"swarm_child_tool_end","runKey":…,"toolName":…,"failed":…,
// "output":…}, mirroring tool_end.
func (w *Writer) ChildToolEnd(runKey, toolName string, failed bool, output string) error {
	b := w.begin(TypeChildToolEnd)
	b = append(b, `,"runKey":`...)
	b = jsonwire.AppendString(b, runKey)
	b = append(b, `,"toolName":`...)
	b = jsonwire.AppendString(b, toolName)
	b = append(b, `,"failed":`...)
	b = strconv.AppendBool(b, failed)
	b = append(b, `,"output":`...)
	b = jsonwire.AppendString(b, output)
	return w.end(b)
}

// ChildError writes {"type":"swarm_child_error","runKey":runKey,"error":msg}.
func (w *Writer) ChildError(runKey, msg string) error {
	b := w.begin(TypeChildError)
	b = append(b, `,"runKey":`...)
	b = jsonwire.AppendString(b, runKey)
	b = append(b, `,"error":`...)
	b = jsonwire.AppendString(b, msg)
	return w.end(b)
}
