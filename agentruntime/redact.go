package agentruntime

import "github.com/streambench/streambench/protocol/simcanvas"

// redactOutput redacts a redacting workflow's block output: content and tool calls.
func (e *simCanvasEmitter) redactOutput(out *canvasOutput) {
	if !e.rn.dep.RedactPII || e.rn.faults.has("unredacted-output") {
		return
	}
	out.Redacted = true
	out.Content = simcanvas.Redact(out.Content)
	for i := range out.ToolCalls {
		t := &out.ToolCalls[i]
		t.Arguments = simcanvas.Redact(t.Arguments)
		t.Result = simcanvas.Redact(t.Result)
	}
}
