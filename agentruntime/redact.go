package agentruntime

import "github.com/streambench/streambench/protocol/simcanvas"

// PII redaction on the canvas (docs/PROTOCOLS.md, "PII-redacted blocks"): nothing of a redacting
// block streams live, as it would carry the PII; its output arrives redacted with
// block:completed.

// live reports whether the block's live stream frames are forwarded.
func (e *simCanvasEmitter) live() bool {
	return !e.rn.dep.RedactPII || e.rn.faults.RedactLive
}

// redactOutput redacts a redacting workflow's block output: content and tool calls.
func (e *simCanvasEmitter) redactOutput(out *canvasOutput) {
	if !e.rn.dep.RedactPII || e.rn.faults.UnredactedOutput {
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
