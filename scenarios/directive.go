package scenarios

import (
	"fmt"
	"strconv"
	"strings"
)

// Directive selects a scenario from inside a user message, so any agent runtime that forwards
// the user's text verbatim can be load-tested against the mock provider without sharing state.
// Its text form is "[[streambench scenario=NAME seed=N session=ID child=PATH toolPrefix=P]]".
type Directive struct {
	// Scenario is the scenario name to play.
	Scenario string
	// Seed selects the rendering (text, timings, tool ids).
	Seed uint64
	// Session identifies the conversation in the mock's records; optional.
	Session string
	// Child selects a swarm child's script by its path (as ChildHeader does); optional. A
	// runtime writes it into a child agent's user message, so the selection survives a
	// gateway that drops custom headers.
	Child string
	// ToolPrefix is put before the name of every tool call the provider plays (optional): a
	// runtime that shows its tools to the model under prefixed names (Sim: custom_<title>)
	// finds the calls it offered. See ValidToolPrefix.
	ToolPrefix string
}

// MaxToolPrefix is the longest Directive.ToolPrefix.
const MaxToolPrefix = 32

// ValidToolPrefix reports, as an error naming the problem, whether p can prefix tool names on
// every provider wire: 1 to MaxToolPrefix ASCII letters, digits, '_' or '-' (OpenAI's tool
// names allow nothing else).
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

// String renders the directive in the form ParseDirective reads. An empty Session is omitted.
func (d Directive) String() string {
	var b strings.Builder
	b.WriteString(directiveOpen)
	b.WriteString(" scenario=")
	b.WriteString(d.Scenario)
	b.WriteString(" seed=")
	b.WriteString(strconv.FormatUint(d.Seed, 10))
	if d.Session != "" {
		b.WriteString(" session=")
		b.WriteString(d.Session)
	}
	if d.Child != "" {
		b.WriteString(" child=")
		b.WriteString(d.Child)
	}
	if d.ToolPrefix != "" {
		b.WriteString(" toolPrefix=")
		b.WriteString(d.ToolPrefix)
	}
	b.WriteString(directiveClose)
	return b.String()
}

// ParseDirective finds the first "[[streambench ...]]" directive anywhere in text. It returns
// ok=false and no error when text holds none, and an error naming the problem when the
// directive is present but malformed (unterminated, unknown or repeated key, missing scenario,
// bad seed, bad tool prefix). Keys: scenario (required, no spaces), seed (required, decimal
// uint64), session, child, toolPrefix.
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
	var haveScenario, haveSeed, haveSession, haveChild, haveToolPrefix bool
	for _, field := range strings.Fields(body) {
		key, value, found := strings.Cut(field, "=")
		if !found || value == "" {
			return Directive{}, true, fmt.Errorf("streambench directive: field %q: expected key=value", field)
		}
		switch key {
		case "scenario":
			if haveScenario {
				return Directive{}, true, fmt.Errorf("streambench directive: scenario given twice")
			}
			haveScenario = true
			d.Scenario = value
		case "seed":
			if haveSeed {
				return Directive{}, true, fmt.Errorf("streambench directive: seed given twice")
			}
			haveSeed = true
			seed, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return Directive{}, true, fmt.Errorf("streambench directive: seed %q: expected a decimal unsigned 64-bit integer", value)
			}
			d.Seed = seed
		case "session":
			if haveSession {
				return Directive{}, true, fmt.Errorf("streambench directive: session given twice")
			}
			haveSession = true
			d.Session = value
		case "child":
			if haveChild {
				return Directive{}, true, fmt.Errorf("streambench directive: child given twice")
			}
			haveChild = true
			d.Child = value
		case "toolPrefix":
			if haveToolPrefix {
				return Directive{}, true, fmt.Errorf("streambench directive: toolPrefix given twice")
			}
			haveToolPrefix = true
			if err := ValidToolPrefix(value); err != nil {
				return Directive{}, true, fmt.Errorf("streambench directive: %w", err)
			}
			d.ToolPrefix = value
		default:
			return Directive{}, true, fmt.Errorf("streambench directive: unknown key %q (expected scenario, seed, session, child or toolPrefix)", key)
		}
	}
	if !haveScenario {
		return Directive{}, true, fmt.Errorf("streambench directive: missing scenario=NAME")
	}
	if !haveSeed {
		return Directive{}, true, fmt.Errorf("streambench directive: missing seed=N")
	}
	return d, true, nil
}

// WithChild returns text with its first directive naming child as well (Directive.Child), and
// false when text holds no well-formed directive: a swarm child's user message is its run's,
// selecting the child's script even where a gateway drops ChildHeader.
func WithChild(text, child string) (string, bool) {
	return withDirective(text, func(d *Directive) { d.Child = child })
}

// WithToolPrefix returns text with its first directive asking for tool names prefixed with
// prefix (Directive.ToolPrefix), and false when text holds no well-formed directive.
func WithToolPrefix(text, prefix string) (string, bool) {
	return withDirective(text, func(d *Directive) { d.ToolPrefix = prefix })
}

// withDirective returns text with its first directive changed by set, and false when text
// holds no well-formed directive.
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
