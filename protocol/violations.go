package protocol

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Violations collects one violation per rule for a stream, the first detail kept and later ones
// counted, so one root cause cannot flood the counters. The zero value is ready to use.
type Violations struct {
	list  []Violation
	extra []int
}

// Add records a violation of rule; the detail is formatted only for the first one per rule.
func (v *Violations) Add(rule Rule, format string, args ...any) {
	if i := slices.IndexFunc(v.list, func(x Violation) bool { return x.Rule == rule }); i >= 0 {
		v.extra[i]++
		return
	}
	v.list = append(v.list, Violation{Rule: rule, Detail: Shorten(fmt.Sprintf(format, args...), maxDetail)})
	v.extra = append(v.extra, 0)
}

const maxDetail = 240

// Shorten cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:runeCut(s, n)] + "…"
}

// List returns the violations, noting how many further occurrences each rule had.
func (v *Violations) List() []Violation {
	for i := range v.list {
		if v.extra[i] > 0 {
			v.list[i].Detail += fmt.Sprintf(" (and %d more)", v.extra[i])
			v.extra[i] = 0
		}
	}
	return v.list
}

// Quote quotes at most n bytes of s for a violation detail, cut on a UTF-8 boundary.
func Quote[T ~string | ~[]byte](b T, n int) string {
	s := string(b)
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q…(%d bytes)", s[:runeCut(s, n)], len(s))
}

// runeCut is the largest cut of s at or below n bytes that does not split a rune.
func runeCut(s string, n int) int {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// ErrorText is an error terminal's Observation.Error: its message, "error" when it has none.
func ErrorText(msg string) string { return cmp.Or(msg, "error") }

// CheckEventStream is the R-headers check every dialect makes: Content-Type text/event-stream.
func CheckEventStream(h http.Header) []Violation {
	if ct := h.Get("Content-Type"); !sse.IsEventStream(ct) {
		return []Violation{{Rule: RHeaders, Detail: fmt.Sprintf("Content-Type: expected text/event-stream, saw %q", ct)}}
	}
	return nil
}

// ScriptCalls are a session's scripted tool calls, every turn's in order.
type ScriptCalls []scenarios.ScriptToolCall

// ScriptedCalls lists exp's tool calls.
func ScriptedCalls(exp *scenarios.Expected) ScriptCalls {
	var out ScriptCalls
	for _, t := range exp.Turns {
		out = append(out, t.ToolCalls...)
	}
	return out
}

// Index is the position of the call of id, -1 when there is none.
func (s ScriptCalls) Index(id string) int {
	return slices.IndexFunc(s, func(c scenarios.ScriptToolCall) bool { return c.ID == id })
}

// MatchToolCall is the index of the scripted call a streamed one answers (its id's, else the
// earliest unused of its name; -1: none); the caller reports a repeat.
func MatchToolCall(script ScriptCalls, used []bool, id, name string) int {
	if i := script.Index(id); i >= 0 {
		return i
	}
	for i := range script {
		if !used[i] && script[i].Name == name {
			return i
		}
	}
	return -1
}

// DataOnly is ev's trimmed data on a wire of unnamed events: an event: line breaks R-framing.
func DataOnly(v *Violations, ev *sse.Event) []byte {
	if ev.Type != "" {
		v.Add(RFraming, "expected frames without an event: line, saw event %q", ev.Type)
	}
	return bytes.TrimSpace(ev.Data)
}

// DoneMarker follows a stream's data: [DONE] end marker, raw or (Quoted) the JSON string "[DONE]".
type DoneMarker struct {
	Quoted bool // the wire's marker is the JSON string "[DONE]"
	Done   bool // the marker arrived
	after  bool // a frame came after it
}

// Is reports whether data is the end marker in either form; the wire's other form breaks R-framing.
func (d *DoneMarker) Is(v *Violations, data []byte) bool {
	raw, quoted := string(data) == "[DONE]", string(data) == `"[DONE]"`
	switch {
	case raw && d.Quoted:
		v.Add(RFraming, `expected the end marker as the JSON string "[DONE]", saw raw [DONE]`)
	case quoted && !d.Quoted:
		v.Add(RFraming, `expected the raw end marker [DONE], saw the JSON string "[DONE]"`)
	}
	return raw || quoted
}

// After reports whether the marker arrived already; the first frame after it breaks R-terminal,
// quoting at most n bytes of its data.
func (d *DoneMarker) After(v *Violations, data []byte, n int) bool {
	if !d.Done {
		return false
	}
	if !d.after {
		d.after = true
		marker := "[DONE]"
		if d.Quoted {
			marker = `"[DONE]"`
		}
		v.Add(RTerminal, "expected nothing after %s, saw %s", marker, Quote(data, n))
	}
	return true
}
