package simchat

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
)

// ThinkingCapBytes is the most thinking text one execution may forward (R-thinking-cap): 512 KiB
// summed over every turn. A runtime stops forwarding thinking there, cutting the piece that
// crosses it on a UTF-8 boundary, and streams the answer in full.
const ThinkingCapBytes = 512 << 10

// StatusPaused is the final envelope's status for a run that paused for human input
// (R-paused): {"event":"final","data":{"success":true,"status":"paused","output":…}}.
const StatusPaused = "paused"

// CapThinking returns parts cut so that their total is the largest prefix of their
// concatenation that is at most limit bytes and ends on a UTF-8 boundary: the thinking a
// capped runtime forwards. The strings are shared, not copied.
func CapThinking(parts []string, limit int) []string {
	out := make([]string, len(parts))
	left := limit
	for i, p := range parts {
		if len(p) <= left {
			out[i], left = p, left-len(p)
			continue
		}
		out[i] = p[:runeFloor(p, left)]
		left = 0
	}
	return out
}

// runeFloor is the largest n' <= n at which s can be cut without splitting a rune.
func runeFloor(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// ModelThinksForSlug is the capability a deployment slug names: false when one of its
// dash-separated parts is "nothink" (the reference runtime's openai-nothink-all names a model
// whose registry entry has no thinking), else true.
func ModelThinksForSlug(slug string) bool {
	for _, part := range strings.Split(slug, "-") {
		if part == "nothink" {
			return false
		}
	}
	return true
}

// SaysTimedOut reports whether an error terminal's message reports an execution timeout
// (R-cancel-not-timeout): it contains "timed out" or "timeout", in any case.
func SaysTimedOut(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "timed out") || strings.Contains(m, "timeout")
}

// OutputContent returns the "content" string of a terminal's output object, and whether it has
// one (an output of another shape is not judged by R-final-output).
func OutputContent(output json.RawMessage) (string, bool) {
	var o struct {
		Content *string `json:"content"`
	}
	if len(output) == 0 || output[0] != '{' || json.Unmarshal(output, &o) != nil || o.Content == nil {
		return "", false
	}
	return *o.Content, true
}

// JudgeFinalOutput reports, under R-final-output, an output whose content is not the final
// turn's text (want): an intermediate turn's preamble must never be persisted. where names the
// terminal for the detail.
func JudgeFinalOutput(v *Violations, where string, output json.RawMessage, want string) {
	got, ok := OutputContent(output)
	if !ok || got == want {
		return
	}
	detail := "saw " + Clip(got, 60)
	if strings.HasSuffix(got, want) && len(got) > len(want) {
		detail = "saw " + Clip(got[:len(got)-len(want)], 60) + " (an intermediate turn's text) before it"
	}
	v.Add(protocol.RFinalOutput, "%s: expected output content to be the final turn's text %s only, %s", where, Clip(want, 60), detail)
}

// judgeFinalSeeds applies the seed rules to a success final: R-paused and R-final-output.
func (c *Checker) judgeFinalSeeds(d *finalData) {
	if c.s.NoGroundTruth {
		// The target's run is not the script's: whether it pauses is its own, but a run that
		// says it paused has settled every tool.
		if *d.Success && d.Status == StatusPaused {
			c.openToolsAtPause()
		}
		return
	}
	exp := &c.s.Expected
	switch {
	case exp.Paused && (!*d.Success || d.Status != StatusPaused):
		c.v.Add(protocol.RPaused, "expected the run to pause for human input: final with success true and status %q, saw success %t, status %q", StatusPaused, *d.Success, d.Status)
	case !exp.Paused && d.Status == StatusPaused:
		c.v.Add(protocol.RPaused, "expected a completed final, saw status %q though the script never pauses", d.Status)
	}
	if exp.Paused {
		c.openToolsAtPause()
	}
	if *d.Success && exp.ProviderError == "" {
		JudgeFinalOutput(&c.v, "final", d.Output, exp.FinalText())
	}
}

// openToolsAtPause reports, under R-paused, every tool still open at a paused terminal.
func (c *Checker) openToolsAtPause() {
	for _, tool := range c.tracker.Tools() {
		if !tool.Ended {
			c.v.Add(protocol.RPaused, "tool %s (%s) still open at the paused terminal; expected every tool settled", tool.ID, tool.Name)
		}
	}
}

// judgeErrorSeeds applies R-cancel-not-timeout to an error terminal: when the script's
// execution timeout fires, the error must say it timed out.
func (c *Checker) judgeErrorSeeds(msg string) {
	if c.s.Expected.ExecutionTimeout && !c.s.NoGroundTruth && !SaysTimedOut(msg) {
		c.v.Add(protocol.RCancelNotTimeout, "expected the execution timeout's error terminal (a message saying it timed out), saw error %s", Clip(msg, 80))
	}
}

// thinkingSeeds applies R-thinking-capability and R-thinking-cap to a thinking frame of n
// bytes. It reports whether it found a violation, in which case the frame is not judged
// further (one cause, one rule).
func (c *Checker) thinkingSeeds(n int, text string) bool {
	c.thinkingBytes += n
	if c.optedIn && c.policy.IncludeThinking && c.policy.NoModelThinking {
		c.v.Add(protocol.RThinkingCapability, "expected no thinking frames: the deployment's model has no thinking capability (includeThinking does not change that), saw %s", Clip(text, 60))
		c.thinkingOK = false
		return true
	}
	if c.thinkingBytes > ThinkingCapBytes {
		c.v.Add(protocol.RThinkingCap, "expected at most %d bytes of thinking per execution, saw %d", ThinkingCapBytes, c.thinkingBytes)
		c.thinkingOK = false
		return true
	}
	return false
}

// FinalPaused writes the success terminal of a run paused for human input,
// {"event":"final","data":{"success":true,"status":"paused","output":…}} (R-paused).
func (w *Writer) FinalPaused(output any) error {
	out, err := json.Marshal(output)
	if err != nil {
		return fmt.Errorf("simchat: encode paused output: %w", err)
	}
	b := w.begin()
	b = append(b, `{"event":"final","data":{"success":true,"status":"paused","output":`...)
	b = append(b, out...)
	b = append(b, '}')
	return w.end(b)
}

// ThinkingBudget forwards at most ThinkingCapBytes of thinking: Admit returns the part of a
// piece that may still go out ("" once the cap is reached), cut on a UTF-8 boundary. The zero
// value is ready; one per execution.
type ThinkingBudget struct{ used int }

// Admit returns the forwardable prefix of piece and counts it.
func (b *ThinkingBudget) Admit(piece string) string {
	left := ThinkingCapBytes - b.used
	if len(piece) > left {
		piece = piece[:runeFloor(piece, left)]
	}
	b.used += len(piece)
	return piece
}
