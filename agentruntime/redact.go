package agentruntime

import "github.com/streambench/streambench/protocol/simcanvas"

// PII redaction (docs/PROTOCOLS.md, "PII-redacted blocks"): a redacting block streams nothing
// live, as it would carry the PII.

// live reports whether the block's live stream frames are forwarded.
func (e *simCanvasEmitter) live() bool {
	return !e.rn.dep.RedactPII || e.rn.faults.has("redact-live")
}

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
