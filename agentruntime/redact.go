package agentruntime

import "github.com/streambench/streambench/protocol/simcanvas"

// PII redaction on the canvas (docs/PROTOCOLS.md, "PII-redacted blocks"): a deployment with
// redactPII is a workflow whose agent block redacts its output, so nothing of the block may
// stream live (the text, thinking and tools would carry the PII before redaction); the block's
// output, redacted by simcanvas.Redact, arrives only with block:completed.

// live reports whether the block's live stream frames (chunks, resets, thinking, tools) are
// forwarded: always, except for a redacting workflow (unless the redact-live fault says so).
func (e *simCanvasEmitter) live() bool {
	return !e.rn.dep.RedactPII || e.rn.faults.RedactLive
}

// redactOutput redacts PII in a redacting workflow's block output: its content and every
// tool call's arguments and result (the unredacted-output fault leaves them as they are).
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
