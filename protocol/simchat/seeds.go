package simchat

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
)

// ThinkingCapUnits is the most thinking text one execution may forward (R-thinking-cap):
// 524,288 (512 Ki) UTF-16 code units, summed over every turn. Sim counts JavaScript string
// length (DEFAULT_MAX_THINKING_CHARS in apps/sim/providers/stream-pump.ts, enforced per
// execution by the chat stream's sendThinking), not bytes: a character of the Basic
// Multilingual Plane is one unit however many UTF-8 bytes it takes ("é" 2, "日" 3), one
// outside it (an emoji) two. A runtime stops forwarding thinking there, cutting the piece that
// crosses it, and streams the answer in full.
const ThinkingCapUnits = 512 << 10

// StatusPaused is the final envelope's status for a run that paused for human input
// (R-paused): {"event":"final","data":{"success":true,"status":"paused","output":…}}.
const StatusPaused = "paused"

// UTF16Len is the length of s in UTF-16 code units, JavaScript's string length: 1 per rune of
// the Basic Multilingual Plane, 2 per rune above it. A byte that is not valid UTF-8 counts as
// one unit (a decoder turns it into U+FFFD), as does the U+FFFD a JSON decoder makes of a lone
// surrogate escape. ASCII, the common case, is counted without decoding.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += utf16Units(r)
		i += size
	}
	return n
}

// utf16LenBytes is UTF16Len of text still in the decoder's buffer.
func utf16LenBytes(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		n += utf16Units(r)
		i += size
	}
	return n
}

// utf16Units is how many UTF-16 code units r takes.
func utf16Units(r rune) int {
	if r > 0xFFFF {
		return 2
	}
	return 1
}

// CapThinking returns parts cut so that their total is the largest prefix of their
// concatenation that is at most limit UTF-16 code units and ends on a rune boundary: the
// thinking a capped runtime forwards. The strings are shared, not copied.
func CapThinking(parts []string, limit int) []string {
	out := make([]string, len(parts))
	left := limit
	for i, p := range parts {
		n, units := utf16Prefix(p, left)
		out[i], left = p[:n], left-units
	}
	return out
}

// utf16Prefix returns the byte length and UTF-16 length of the longest prefix of s, cut on a
// rune boundary, that is at most limit UTF-16 code units. A rune outside the Basic
// Multilingual Plane that would cross the limit is left out whole: a JavaScript slice would
// split its surrogate pair and send the lone first half, which a Go string cannot hold (a
// JSON decoder makes it U+FFFD, one unit, so the count agrees either way).
func utf16Prefix(s string, limit int) (n, units int) {
	if len(s) <= limit && isASCII(s) {
		return len(s), len(s)
	}
	for n < len(s) {
		if c := s[n]; c < utf8.RuneSelf {
			if units+1 > limit {
				break
			}
			n++
			units++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		u := utf16Units(r)
		if units+u > limit {
			break
		}
		n += size
		units += u
	}
	return n, units
}

// isASCII reports whether s is ASCII only (bytes and UTF-16 units then agree).
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
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

// LiveToolsForSlug is the provider capability a deployment slug names: false when one of its
// dash-separated parts is "settled" (the reference runtime's openai-settled-all runs its tools
// settled, as Sim's vLLM provider does), else true.
func LiveToolsForSlug(slug string) bool {
	for _, part := range strings.Split(slug, "-") {
		if part == "settled" {
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
func JudgeFinalOutput(v *protocol.Violations, where string, output json.RawMessage, want string) {
	got, ok := OutputContent(output)
	if !ok || got == want {
		return
	}
	detail := "saw " + protocol.Quote(got, 60)
	if strings.HasSuffix(got, want) && len(got) > len(want) {
		detail = "saw " + protocol.Quote(got[:len(got)-len(want)], 60) + " (an intermediate turn's text) before it"
	}
	v.Add(protocol.RFinalOutput, "%s: expected output content to be the final turn's text %s only, %s", where, protocol.Quote(want, 60), detail)
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
		c.v.Add(protocol.RCancelNotTimeout, "expected the execution timeout's error terminal (a message saying it timed out), saw error %s", protocol.Quote(msg, 80))
	}
}

// thinkingSeeds applies R-thinking-capability and R-thinking-cap to a thinking frame's text.
// It reports whether it found a violation, in which case the frame is not judged further (one
// cause, one rule).
func (c *Checker) thinkingSeeds(text string) bool {
	c.thinkingUnits += UTF16Len(text)
	if c.optedIn && c.policy.IncludeThinking && c.policy.NoModelThinking {
		c.v.Add(protocol.RThinkingCapability, "expected no thinking frames: the deployment's model has no thinking capability (includeThinking does not change that), saw %s", protocol.Quote(text, 60))
		c.thinkingOK = false
		return true
	}
	if c.thinkingUnits > ThinkingCapUnits {
		c.v.Add(protocol.RThinkingCap, "expected at most %d UTF-16 code units of thinking per execution, saw %d", ThinkingCapUnits, c.thinkingUnits)
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

// ThinkingBudget forwards at most ThinkingCapUnits UTF-16 code units of thinking: Admit
// returns the part of a piece that may still go out ("" once the cap is reached), cut on a
// rune boundary. The zero value is ready; one per execution.
type ThinkingBudget struct{ used int }

// Admit returns the forwardable prefix of piece and counts it.
func (b *ThinkingBudget) Admit(piece string) string {
	n, units := utf16Prefix(piece, ThinkingCapUnits-b.used)
	b.used += units
	return piece[:n]
}
