package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Directive selects a scenario from inside a user message, so any runtime that forwards the
// user's text works: "[[streambench scenario=NAME seed=N session=ID child=PATH toolPrefix=P]]".
type Directive struct {
	Scenario   string // the scenario to play.
	Seed       uint64 // selects the rendering (text, timings, tool ids).
	Session    string // identifies the conversation in the mock's records; optional.
	Child      string // selects a swarm child's script (as ChildHeader, which a gateway may drop); optional.
	ToolPrefix string // prefixes every played tool call's name (Sim: custom_<title>); optional.
}

// MaxToolPrefix is the longest Directive.ToolPrefix.
const MaxToolPrefix = 32

// ValidToolPrefix reports, as an error naming the problem, whether p can prefix tool names on
// every provider wire (OpenAI's allow ASCII letters, digits, '_' and '-').
func ValidToolPrefix(p string) error {
	if p == "" || len(p) > MaxToolPrefix {
		return fmt.Errorf("tool prefix %q: expected 1 to %d characters", p, MaxToolPrefix)
	}
	for _, r := range p {
		if !(r == '_' || r == '-' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			return fmt.Errorf("tool prefix %q: only ASCII letters, digits, '_' and '-' may prefix a tool name", p)
		}
	}
	return nil
}

// directiveOpen and directiveClose delimit a directive in text.
const (
	directiveOpen  = "[[streambench"
	directiveClose = "]]"
)

// String renders the directive in the form ParseDirective reads, leaving out empty optional keys.
func (d Directive) String() string {
	s := directiveOpen + " scenario=" + d.Scenario + " seed=" + strconv.FormatUint(d.Seed, 10)
	for _, kv := range [...][2]string{{"session", d.Session}, {"child", d.Child}, {"toolPrefix", d.ToolPrefix}} {
		if kv[1] != "" {
			s += " " + kv[0] + "=" + kv[1]
		}
	}
	return s + directiveClose
}

// directiveKeys are a directive's keys, in the order its errors list them.
var directiveKeys = [...]string{"scenario", "seed", "session", "child", "toolPrefix"}

// ParseDirective finds the first "[[streambench ...]]" directive anywhere in text: ok=false
// and no error when there is none, an error naming the problem when it is malformed. Keys:
// scenario and seed (decimal uint64) are required; session, child and toolPrefix optional.
func ParseDirective(text string) (Directive, bool, error) {
	start := strings.Index(text, directiveOpen)
	if start < 0 {
		return Directive{}, false, nil
	}
	rest := text[start+len(directiveOpen):]
	end := strings.Index(rest, directiveClose)
	if end < 0 {
		return Directive{}, true, fmt.Errorf("streambench directive at byte %d: missing closing %q", start, directiveClose)
	}
	body := rest[:end]
	if body != "" && body[0] != ' ' && body[0] != '\t' {
		return Directive{}, true, fmt.Errorf("streambench directive at byte %d: expected a space after %q, got %q", start, directiveOpen, body)
	}
	var d Directive
	var seen [len(directiveKeys)]bool
	for _, field := range strings.Fields(body) {
		key, value, found := strings.Cut(field, "=")
		if !found || value == "" {
			return Directive{}, true, fmt.Errorf("streambench directive: field %q: expected key=value", field)
		}
		k := slices.Index(directiveKeys[:], key)
		if k < 0 {
			return Directive{}, true, fmt.Errorf("streambench directive: unknown key %q (expected scenario, seed, session, child or toolPrefix)", key)
		}
		if seen[k] {
			return Directive{}, true, fmt.Errorf("streambench directive: %s given twice", key)
		}
		seen[k] = true
		switch key {
		case "scenario":
			d.Scenario = value
		case "seed":
			seed, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return Directive{}, true, fmt.Errorf("streambench directive: seed %q: expected a decimal unsigned 64-bit integer", value)
			}
			d.Seed = seed
		case "session":
			d.Session = value
		case "child":
			d.Child = value
		case "toolPrefix":
			if err := ValidToolPrefix(value); err != nil {
				return Directive{}, true, fmt.Errorf("streambench directive: %w", err)
			}
			d.ToolPrefix = value
		}
	}
	if !seen[0] {
		return Directive{}, true, fmt.Errorf("streambench directive: missing scenario=NAME")
	}
	if !seen[1] {
		return Directive{}, true, fmt.Errorf("streambench directive: missing seed=N")
	}
	return d, true, nil
}

// WithChild returns text with its first directive naming child too (false: no directive).
func WithChild(text, child string) (string, bool) {
	return withDirective(text, func(d *Directive) { d.Child = child })
}

// WithToolPrefix returns text with its first directive naming prefix too (false: no directive).
func WithToolPrefix(text, prefix string) (string, bool) {
	return withDirective(text, func(d *Directive) { d.ToolPrefix = prefix })
}

// withDirective returns text with its first directive changed by set (false: no directive).
func withDirective(text string, set func(d *Directive)) (string, bool) {
	d, found, err := ParseDirective(text)
	if !found || err != nil {
		return text, false
	}
	start := strings.Index(text, directiveOpen)
	end := start + len(directiveOpen) + strings.Index(text[start+len(directiveOpen):], directiveClose) + len(directiveClose)
	set(&d)
	return text[:start] + d.String() + text[end:], true
}
