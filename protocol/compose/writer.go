package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/sse"
)

// RunIDHeader is the response header that names the run, for the stop request.
const RunIDHeader = "X-Compose-Run-Id"

// Timing marks the runtime emits.
const (
	MarkMSMStart       = "msm_start"
	MarkMSMEnd         = "msm_end"
	MarkModelStart     = "model_start"
	MarkFirstTextDelta = "first_text_delta"
	MarkDone           = "done"
)

// ReasonUserStop is the stopped reason for a stop request.
const ReasonUserStop = "user_stop"

// SetResponseHeaders sets the response headers of an agent stream, including the run id.
func SetResponseHeaders(h http.Header, runID string) {
	sse.SetHeaders(h)
	h.Set(RunIDHeader, runID)
}

// Display is the UI hint of tool frames.
type Display struct {
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Summary string `json:"summary"`
}

// Writer writes compose agent-stream frames, one Write per frame built in a reused buffer.
// Flushing is the caller's job. Not safe for concurrent use.
type Writer struct{ f jsonwire.Sink }

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{jsonwire.NewSink(w, "compose")}
}

// Text writes {"choices":[{"delta":{"content":s}}]}; an empty s writes nothing.
func (w *Writer) Text(s string) error {
	if s == "" {
		return nil
	}
	b := append(w.f.Buf[:0], `data: {"choices":[{"delta":{"content":`...)
	b = jsonwire.AppendString(b, s)
	return w.end(append(b, "}}]"...))
}

// Reasoning writes {"type":"reasoning_delta","delta":s}.
func (w *Writer) Reasoning(s string) error {
	b := w.begin("reasoning_delta")
	b = jsonwire.AppendField(b, `,"delta":`, s)
	return w.end(b)
}

// ThinkingStart writes {"type":"thinking_start","message":message}.
func (w *Writer) ThinkingStart(message string) error {
	b := w.begin("thinking_start")
	b = jsonwire.AppendField(b, `,"message":`, message)
	return w.end(b)
}

// ThinkingEnd writes {"type":"thinking_end"}.
func (w *Writer) ThinkingEnd() error {
	return w.end(w.begin("thinking_end"))
}

// ToolArgsDelta writes a piece of a tool call's JSON arguments, sent before its tool_start.
func (w *Writer) ToolArgsDelta(id, toolName, argsDelta string, index int) error {
	b := w.begin("tool_args_delta")
	b = jsonwire.AppendField(b, `,"id":`, id)
	b = jsonwire.AppendField(b, `,"toolName":`, toolName)
	b = jsonwire.AppendField(b, `,"argsDelta":`, argsDelta)
	b = jsonwire.AppendInt(b, `,"index":`, int64(index))
	return w.end(b)
}

// ToolStart writes tool_start with the call's full input (compacted to the frame's one data
// line), its invoke text and display hint.
func (w *Writer) ToolStart(toolName string, input json.RawMessage, content string, display Display) error {
	b := w.begin("tool_start")
	b = jsonwire.AppendField(b, `,"toolName":`, toolName)
	b, err := appendCompact(append(b, `,"input":`...), input)
	if err != nil {
		return fmt.Errorf("compose: tool_start %s input: %w", toolName, err)
	}
	b = jsonwire.AppendField(b, `,"content":`, content)
	b = appendDisplay(b, display)
	return w.end(b)
}

// ToolEnd writes tool_end: {"output":{"success","output"},"message","failed":!success,"display"}.
func (w *Writer) ToolEnd(toolName string, success bool, output, message string, display Display) error {
	b := w.begin("tool_end")
	b = jsonwire.AppendField(b, `,"toolName":`, toolName)
	b = append(b, `,"output":{"success":`...)
	b = strconv.AppendBool(b, success)
	b = jsonwire.AppendField(b, `,"output":`, output)
	b = jsonwire.AppendField(b, `},"message":`, message)
	b = append(b, `,"failed":`...)
	b = strconv.AppendBool(b, !success)
	b = appendDisplay(b, display)
	return w.end(b)
}

// Timing writes {"type":"timing","source":"runtime","mark":mark,"elapsedMs":elapsedMs}.
func (w *Writer) Timing(mark string, elapsedMs int64) error {
	b := w.begin("timing")
	b = jsonwire.AppendField(b, `,"source":"runtime","mark":`, mark)
	b = jsonwire.AppendInt(b, `,"elapsedMs":`, elapsedMs)
	return w.end(b)
}

// DoneEvent writes the success terminal {"type":"done","model","usage"}.
func (w *Writer) DoneEvent(model string, usage protocol.Usage) error {
	b := w.begin("done")
	b = jsonwire.AppendField(b, `,"model":`, model)
	b = appendUsage(b, usage)
	return w.end(b)
}

// Stopped writes the stop terminal {"type":"stopped","reason","usage"}.
func (w *Writer) Stopped(reason string, usage protocol.Usage) error {
	b := w.begin("stopped")
	b = jsonwire.AppendField(b, `,"reason":`, reason)
	b = appendUsage(b, usage)
	return w.end(b)
}

// Error writes the failure terminal {"type":"error","error":msg,"content":"\n\n[System Error: msg]\n"}.
func (w *Writer) Error(msg string) error {
	b := w.begin("error")
	b = jsonwire.AppendField(b, `,"error":`, msg)
	b = jsonwire.AppendField(b, `,"content":`, "\n\n[System Error: "+msg+"]\n")
	return w.end(b)
}

// Receipt writes the settlement receipt as the named event "receipt", after the terminal.
func (w *Writer) Receipt(id, finalAmountWei string) error {
	b := append(w.f.Buf[:0], "event: receipt\ndata: {\"id\":"...)
	b = jsonwire.AppendString(b, id)
	b = jsonwire.AppendField(b, `,"service":"agent","finalAmountWei":`, finalAmountWei)
	return w.end(b)
}

// Ping writes the heartbeat comment ": ping", which keeps idle connections open.
func (w *Writer) Ping() error {
	return w.f.Write(append(w.f.Buf[:0], ": ping\n\n"...))
}

// Done writes the raw end marker "data: [DONE]".
func (w *Writer) Done() error {
	return w.f.Write(append(w.f.Buf[:0], "data: [DONE]\n\n"...))
}

// Raw writes p as the data of one frame, unchecked, for a runtime's fault switches.
func (w *Writer) Raw(p []byte) error {
	return w.f.Raw(p)
}

func (w *Writer) begin(typ string) []byte {
	b := append(w.f.Buf[:0], `data: {"type":"`...)
	b = append(b, typ...)
	return append(b, '"')
}

func (w *Writer) end(b []byte) error { return w.f.Write(append(b, "}\n\n"...)) }

func appendUsage(b []byte, u protocol.Usage) []byte {
	b = jsonwire.AppendInt(b, `,"usage":{"input_tokens":`, int64(u.InputTokens))
	b = jsonwire.AppendInt(b, `,"output_tokens":`, int64(u.OutputTokens))
	b = jsonwire.AppendInt(b, `,"total_tokens":`, int64(u.InputTokens+u.OutputTokens))
	return append(b, '}')
}

func appendDisplay(b []byte, d Display) []byte {
	b = jsonwire.AppendField(b, `,"display":{"kind":`, d.Kind)
	b = jsonwire.AppendField(b, `,"name":`, d.Name)
	b = jsonwire.AppendField(b, `,"summary":`, d.Summary)
	return append(b, '}')
}

// appendCompact appends the JSON value raw (empty: {}) without whitespace, so it cannot break the
// data line; invalid JSON is an error rather than a frame no client can read.
func appendCompact(b []byte, raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return append(b, "{}"...), nil
	}
	if bytes.IndexAny(raw, "\r\n\t ") < 0 && json.Valid(raw) {
		return append(b, raw...), nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return b, err
	}
	return append(b, buf.Bytes()...), nil
}

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

// ChildStart is a swarm_child_start frame: RunKeyChain is the parent's chain plus RunKey (from
// the root run's id), Depth len(RunKeyChain)-1.
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
	return w.f.Write(append(b, "\n\n"...))
}

// ChildStart writes swarm_child_start.
func (w *Writer) ChildStart(f ChildStart) error { return writeJSON(w, TypeChildStart, &f) }

// ChildDone writes swarm_child_done.
func (w *Writer) ChildDone(f ChildDone) error { return writeJSON(w, TypeChildDone, &f) }

// ChildDelta writes {"type":"swarm_child_delta","runKey":…,"delta":…} (per token: reused buffer).
func (w *Writer) ChildDelta(runKey, delta string) error {
	b := w.begin(TypeChildDelta)
	b = jsonwire.AppendField(b, `,"runKey":`, runKey)
	b = jsonwire.AppendField(b, `,"delta":`, delta)
	return w.end(b)
}

// ChildToolStart writes swarm_child_tool_start {runKey, toolName, input}, as tool_start.
func (w *Writer) ChildToolStart(runKey, toolName string, input json.RawMessage) error {
	b := w.begin(TypeChildToolStart)
	b = jsonwire.AppendField(b, `,"runKey":`, runKey)
	b = jsonwire.AppendField(b, `,"toolName":`, toolName)
	b, err := appendCompact(append(b, `,"input":`...), input)
	if err != nil {
		return fmt.Errorf("compose: swarm_child_tool_start %s input: %w", toolName, err)
	}
	return w.end(b)
}

// ChildToolEnd writes swarm_child_tool_end {runKey, toolName, failed, output}, as tool_end.
func (w *Writer) ChildToolEnd(runKey, toolName string, failed bool, output string) error {
	b := w.begin(TypeChildToolEnd)
	b = jsonwire.AppendField(b, `,"runKey":`, runKey)
	b = jsonwire.AppendField(b, `,"toolName":`, toolName)
	b = append(b, `,"failed":`...)
	b = strconv.AppendBool(b, failed)
	b = jsonwire.AppendField(b, `,"output":`, output)
	return w.end(b)
}

// ChildError writes {"type":"swarm_child_error","runKey":runKey,"error":msg}.
func (w *Writer) ChildError(runKey, msg string) error {
	b := w.begin(TypeChildError)
	b = jsonwire.AppendField(b, `,"runKey":`, runKey)
	b = jsonwire.AppendField(b, `,"error":`, msg)
	return w.end(b)
}
