package simcanvas

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

// PII redaction on the canvas (docs/PROTOCOLS.md, "PII-redacted blocks"): a redacting block
// streams no live frames and sends its output, redacted, with block:completed. Redact is the
// one definition, the runtime's to redact and the checker's to expect.

// Replacement tokens for each kind of PII span Redact finds.
const (
	RedactedEmail = "[REDACTED:email]"
	RedactedPhone = "[REDACTED:phone]"
	RedactedSSN   = "[REDACTED:ssn]"
)

// piiPatterns are the spans Redact replaces, in order: e-mail addresses, US SSNs (first, so a
// phone number never swallows one) and "+" with 8 to 15 digits (the "+" keeps the scripts'
// word tokens and tool ids from matching).
var piiPatterns = [...]struct {
	re          *regexp.Regexp
	replacement string
}{
	{regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`), RedactedEmail},
	{regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`), RedactedSSN},
	{regexp.MustCompile(`\+\d(?:[ -]?\d){7,14}`), RedactedPhone},
}

// Redact returns s with every PII span replaced by its kind's token. Safe for concurrent use.
func Redact(s string) string {
	for _, p := range piiPatterns {
		s = p.re.ReplaceAllLiteralString(s, p.replacement)
	}
	return s
}

// HasPII reports whether s holds a span Redact would replace.
func HasPII(s string) bool {
	for _, p := range piiPatterns {
		if p.re.MatchString(s) {
			return true
		}
	}
	return false
}

// LiveOnly reports whether typ is a live-only frame (answer text, resets, thinking, tools):
// never buffered for a reconnect, never sent by a PII-redacted block.
func LiveOnly(typ string) bool {
	return typ == TypeChunk || typ == TypeChunkReset || typ == TypeThinking || typ == TypeTool
}

type redactState struct {
	liveFrames     int
	blockCompleted int
}

// redactedFrame judges a frame of a redacted workflow's stream before the general switch: a
// live frame is R-redact-live's alone (consumed), an output checked against the redacted text.
func (c *Checker) redactedFrame(typ string, p *payload) (protocol.Observation, bool) {
	if LiveOnly(typ) {
		c.redact.liveFrames++
		if c.redact.liveFrames == 1 {
			c.v.Add(RRedactLive, "workflow redacts PII: expected no live %s frames (output only with block:completed), saw %s for block %s",
				typ, typ, p.BlockID)
		}
		return protocol.Observation{Kind: protocol.FrameOther}, true
	}
	switch typ {
	case TypeBlockCompleted:
		c.redact.blockCompleted++
		c.checkRedactedOutput(typ, p.Output, true)
	case TypeExecutionCompleted:
		c.checkRedactedOutput(typ, p.Output, false)
	}
	return protocol.Observation{}, false
}

// checkRedactedOutput checks an output has no PII, and a block's the redacted final-turn text.
func (c *Checker) checkRedactedOutput(typ string, raw json.RawMessage, block bool) {
	if len(raw) == 0 {
		if block {
			c.v.Add(RRedactOutput, "%s: expected the block's redacted output, saw none", typ)
		}
		return
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		c.v.Add(RRedactOutput, "%s: output is not JSON: %v", typ, err)
		return
	}
	if path, s, ok := findPII(out, "output"); ok {
		c.v.Add(RRedactOutput, "%s: expected PII redacted, saw %s = %s", typ, path, protocol.Quote(s, 80))
		return
	}
	if !block || c.s.NoGroundTruth || c.s.Expected.ProviderError != "" {
		return
	}
	obj, _ := out.(map[string]any)
	content, _ := obj["content"].(string)
	if want := Redact(c.s.Expected.FinalText()); content != want {
		c.v.Add(RRedactOutput, "%s: expected output.content %s (the final text, PII redacted), saw %s",
			typ, protocol.Quote(want, 60), protocol.Quote(content, 60))
	}
}

// findPII returns the path of a string holding PII in a decoded JSON value (keys sorted).
func findPII(v any, path string) (string, string, bool) {
	switch x := v.(type) {
	case string:
		if HasPII(x) {
			return path, x, true
		}
	case []any:
		for i, e := range x {
			if p, s, ok := findPII(e, path+"["+strconv.Itoa(i)+"]"); ok {
				return p, s, true
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if p, s, ok := findPII(x[k], path+"."+k); ok {
				return p, s, true
			}
		}
	}
	return "", "", false
}

// finishRedacted judges a redacted workflow's end: a completed execution (the script's, or
// without it one whose terminal says so; not a paused one) delivered block:completed.
func (c *Checker) finishRedacted(mode simchat.EndMode) {
	completed := c.s.Expected.ProviderError == "" && !c.s.Expected.Paused
	if c.s.NoGroundTruth {
		completed = c.completedOK
	}
	if mode == simchat.EndComplete && c.redact.blockCompleted == 0 && completed {
		c.v.Add(RRedactOutput, "workflow redacts PII: expected the block's redacted output with block:completed, saw no block:completed")
	}
}
