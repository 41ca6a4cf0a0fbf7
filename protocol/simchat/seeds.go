package simchat

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
)

// ThinkingCapUnits is the most thinking one execution may forward (R-thinking-cap), in UTF-16
// code units over every turn: Sim counts JavaScript string length
// (DEFAULT_MAX_THINKING_CHARS in apps/sim/providers/stream-pump.ts), not bytes. A runtime cuts
// the piece that crosses it and streams the answer in full.
const ThinkingCapUnits = 512 << 10

// StatusPaused is the final envelope's status of a run paused for human input (R-paused).
const StatusPaused = "paused"

// UTF16Len is the length of s (a string, or text still in the decoder's buffer) in UTF-16 code
// units, JavaScript's string length: 2 per rune above the Basic Multilingual Plane, else 1 (an
// invalid byte too, as its U+FFFD).
func UTF16Len[T ~string | ~[]byte](s T) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		n += utf16.RuneLen(r) // never a surrogate: DecodeRune makes those U+FFFD
		i += size
	}
	return n
}

// CapThinking returns parts cut to the largest prefix of their concatenation within limit
// UTF-16 code units, on a rune boundary: what a capped runtime forwards (strings shared).
func CapThinking(parts []string, limit int) []string {
	out := make([]string, len(parts))
	left := limit
	for i, p := range parts {
		n, units := utf16Prefix(p, left)
		out[i], left = p[:n], left-units
	}
	return out
}

// utf16Prefix returns the byte and UTF-16 lengths of the longest prefix of s within limit
// units, on a rune boundary. A rune crossing the limit is left out whole: JavaScript would send
// half its surrogate pair, which a JSON decoder makes one U+FFFD, so the count agrees.
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
		u := utf16.RuneLen(r)
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

// ModelThinksForSlug is false when a dash-separated part of the slug is "nothink" (a model
// without thinking, as the reference runtime's openai-nothink-all), else true.
func ModelThinksForSlug(slug string) bool {
	return !slices.Contains(strings.Split(slug, "-"), "nothink")
}

// LiveToolsForSlug is false when a dash-separated part of the slug is "settled" (a provider
// running its tools settled, as the reference runtime's openai-settled-all), else true.
func LiveToolsForSlug(slug string) bool { return !slices.Contains(strings.Split(slug, "-"), "settled") }

// SaysTimedOut reports whether an error says "timed out" or "timeout", in any case.
func SaysTimedOut(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "timed out") || strings.Contains(m, "timeout")
}

// OutputContent returns the "content" string of a terminal's output object, if it has one.
func OutputContent(output json.RawMessage) (string, bool) {
	var o struct {
		Content *string `json:"content"`
	}
	if len(output) == 0 || output[0] != '{' || json.Unmarshal(output, &o) != nil || o.Content == nil {
		return "", false
	}
	return *o.Content, true
}

// JudgeFinalOutput reports an output that is not the final turn's text want (R-final-output).
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
	if c.s.NoGroundTruth { // whether it pauses is the run's own, but a paused run settled every tool
		if *d.Success && d.Status == StatusPaused {
			c.tracker.OpenAtPause()
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
		c.tracker.OpenAtPause()
	}
	if *d.Success && exp.ProviderError == "" {
		JudgeFinalOutput(&c.v, "final", d.Output, exp.FinalText())
	}
}

// OpenAtPause reports, under R-paused, every tool still open at a paused terminal.
func (t *Tracker) OpenAtPause() {
	for _, tool := range t.tools {
		if !tool.Ended {
			t.Violations.Add(protocol.RPaused, "tool %s (%s) still open at the paused terminal; expected every tool settled", tool.ID, tool.Name)
		}
	}
}

// judgeErrorSeeds applies R-cancel-not-timeout: the scripted execution timeout's error says so.
func (c *Checker) judgeErrorSeeds(msg string) {
	if c.s.Expected.ExecutionTimeout && !c.s.NoGroundTruth && !SaysTimedOut(msg) {
		c.v.Add(protocol.RCancelNotTimeout, "expected the execution timeout's error terminal (a message saying it timed out), saw error %s", protocol.Quote(msg, 80))
	}
}

// thinkingSeeds applies R-thinking-capability and R-thinking-cap to a thinking frame's text,
// reporting whether it found a violation (the frame is then judged no further).
func (c *Checker) thinkingSeeds(text string) bool {
	c.thinkingUnits += UTF16Len(text)
	if c.optedIn && c.policy.IncludeThinking && c.policy.NoModelThinking {
		c.v.Add(protocol.RThinkingCapability, "expected no thinking frames: the deployment's model has no thinking capability (includeThinking does not change that), saw %s", protocol.Quote(text, 60))
		c.thinking.Off = true
		return true
	}
	if c.thinkingUnits > ThinkingCapUnits {
		c.v.Add(protocol.RThinkingCap, "expected at most %d UTF-16 code units of thinking per execution, saw %d", ThinkingCapUnits, c.thinkingUnits)
		c.thinking.Off = true
		return true
	}
	return false
}

// FinalPaused writes the final of a run paused for human input (R-paused).
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

// ThinkingBudget forwards at most ThinkingCapUnits of thinking per execution (zero value ready).
type ThinkingBudget struct{ used int }

// Admit returns the forwardable prefix of piece ("" past the cap) and counts it.
func (b *ThinkingBudget) Admit(piece string) string {
	n, units := utf16Prefix(piece, ThinkingCapUnits-b.used)
	b.used += units
	return piece[:n]
}
