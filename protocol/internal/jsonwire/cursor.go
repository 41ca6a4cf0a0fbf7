package jsonwire

import (
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// Cursor matches streamed pieces against the concatenation of parts (each turn's thinking, say)
// without building it, so a checker's memory stays small however long the answer.
type Cursor struct {
	parts []string
	part  int // index of the part the next byte comes from
	off   int // offset in that part
	n     int // bytes matched so far
	total int
}

// NewCursor returns a cursor at the start of the concatenation of parts (kept, not copied).
func NewCursor(parts []string) Cursor {
	c := Cursor{parts: parts}
	for _, p := range parts {
		c.total += len(p)
	}
	return c
}

// Advance consumes p if the expected text continues with it, and reports whether it did (on a
// mismatch the cursor does not move). A generic function, so []byte pieces are not converted.
func Advance[T ~string | ~[]byte](c *Cursor, p T) bool {
	part, off := c.part, c.off
	for rest := p; len(rest) > 0; {
		for part < len(c.parts) && off == len(c.parts[part]) {
			part, off = part+1, 0
		}
		if part == len(c.parts) {
			return false
		}
		want := c.parts[part][off:]
		k := min(len(want), len(rest))
		if want[:k] != string(rest[:k]) {
			return false
		}
		off += k
		rest = rest[k:]
	}
	c.part, c.off = part, off
	c.n += len(p)
	return true
}

// RestartAt moves the cursor to the start of part i.
func (c *Cursor) RestartAt(i int) {
	c.part, c.off, c.n = i, 0, 0
	for _, p := range c.parts[:i] {
		c.n += len(p)
	}
}

// Parts returns the parts the cursor matches against, as given to NewCursor.
func (c *Cursor) Parts() []string { return c.parts }

// Matched returns how many bytes of the expected text have been matched so far.
func (c *Cursor) Matched() int { return c.n }

// Total returns the length of the whole expected text.
func (c *Cursor) Total() int { return c.total }

// Done reports whether every expected byte was matched.
func (c *Cursor) Done() bool { return c.n == c.total }

// Next returns up to n bytes of the expected text after the cursor, for violation details.
func (c *Cursor) Next(n int) string {
	var b []byte
	part, off := c.part, c.off
	for part < len(c.parts) && len(b) < n {
		b = append(b, c.parts[part][off:]...)
		part, off = part+1, 0
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// Text follows streamed text against a script's (a Cursor): the first piece off the script is
// reported, and nothing is followed after it (Off).
type Text struct {
	Cursor
	Off bool
}

// NewText returns a Text at the start of the concatenation of parts.
func NewText(parts ...string) Text { return Text{Cursor: NewCursor(parts)} }

// TurnParts lists every expected turn's text (or thinking), in order: what a stream concatenates.
func TurnParts(exp *scenarios.Expected, thinking bool) []string {
	parts := make([]string, len(exp.Turns))
	for i, t := range exp.Turns {
		parts[i] = t.Text
		if thinking {
			parts[i] = t.Thinking
		}
	}
	return parts
}

// Follow advances t over p and reports whether p continued the script; the first piece that
// does not is reported under rule as "<what> diverges from the script at byte N: expected …,
// saw …", quotes of n bytes.
func Follow[T ~string | ~[]byte](t *Text, v *protocol.Violations, rule protocol.Rule, what string, p T, n int) bool {
	if t.Off {
		return false
	}
	if !Advance(&t.Cursor, p) {
		t.Off = true
		v.Add(rule, "%s diverges from the script at byte %d: expected %s, saw %s", what, t.Matched(), protocol.Quote(t.Next(n), n), protocol.Quote(p, n))
	}
	return !t.Off
}

// Short reports under rule, unless t diverged or is done, format with what the script has next
// (quoted, n bytes), the bytes matched and the total.
func (t *Text) Short(v *protocol.Violations, rule protocol.Rule, format string, n int) {
	if !t.Off && !t.Done() {
		v.Add(rule, format, protocol.Quote(t.Next(n), n), t.Matched(), t.Total())
	}
}
