package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"reflect"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

// Scanner is a strict, allocation-free JSON reader for the few fields a stream decoder needs
// of each frame: encoding/json's reflection costs microseconds and allocations per token. It
// validates what it reads or skips as RFC 8259 does. Decoded strings alias the frame or an
// internal buffer until the next Reset. Errors are sticky: after the first, methods return
// zero values and loops end, and Err (or Finish) says what and where. The zero value is ready
// for Reset. Not safe for concurrent use.
type Scanner struct {
	data []byte
	pos  int
	err  error
	// buf holds unescaped strings; it only grows within a frame, so earlier results stay valid.
	buf []byte
}

// Reset starts scanning data, forgetting any error and reusing the string buffer.
func (s *Scanner) Reset(data []byte) {
	s.data, s.pos, s.err, s.buf = data, 0, nil, s.buf[:0]
}

// fail records the first error, naming the byte offset.
func (s *Scanner) fail(format string, args ...any) {
	if s.err == nil {
		s.err = fmt.Errorf("at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
	}
}

func (s *Scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next significant byte, or 0 at the end.
func (s *Scanner) peek() byte {
	s.ws()
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

// Rest returns the input after what was read so far.
func (s *Scanner) Rest() []byte { return s.data[s.pos:] }

// Err returns the first error met so far, or nil.
func (s *Scanner) Err() error { return s.err }

// Finish checks that only whitespace follows the top-level value and returns the first error.
func (s *Scanner) Finish() error {
	if s.ws(); s.err == nil && s.pos < len(s.data) {
		s.fail("unexpected %q after the top-level value", s.data[s.pos])
	}
	return s.err
}

// null consumes a null literal if one is next.
func (s *Scanner) null() bool {
	if s.err == nil && s.peek() == 'n' {
		s.literal("null")
		return s.err == nil
	}
	return false
}

func (s *Scanner) literal(lit string) {
	if len(s.data)-s.pos >= len(lit) && string(s.data[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return
	}
	s.fail("invalid literal, want %s", lit)
}

// Object consumes '{' (false at null, or on a type error naming field).
func (s *Scanner) Object(field string) bool { return s.open('{', field, "an object") }

// Array is Object for arrays; iterate its elements with Element.
func (s *Scanner) Array(field string) bool { return s.open('[', field, "an array") }

func (s *Scanner) open(c byte, field, want string) bool {
	if s.err != nil || s.null() {
		return false
	}
	if s.peek() != c {
		s.typeError(field, want)
		return false
	}
	s.pos++
	return true
}

// Member advances to the next member's key (ok false at the end); first starts true.
func (s *Scanner) Member(first *bool) (key []byte, ok bool) {
	if !s.more('}', first) {
		return nil, false
	}
	if s.peek() != '"' {
		s.failAt("expected a string key")
		return nil, false
	}
	key = s.rawString()
	if s.peek() != ':' {
		s.failAt("expected ':' after object key")
		return nil, false
	}
	s.pos++
	return key, s.err == nil
}

// Members ranges over the keys of the object just opened, the body reading or skipping each
// value; a decode error ends the loop (Finish reports it).
func (s *Scanner) Members() iter.Seq[[]byte] {
	return func(yield func(key []byte) bool) {
		for first := true; ; {
			key, ok := s.Member(&first)
			if !ok || !yield(key) {
				return
			}
		}
	}
}

// Element advances to the next element of an array opened with Array; first starts true.
func (s *Scanner) Element(first *bool) bool {
	return s.more(']', first)
}

func (s *Scanner) more(closing byte, first *bool) bool {
	if s.err != nil {
		return false
	}
	c := s.peek()
	if c == closing {
		s.pos++
		return false
	}
	if !*first {
		if c != ',' {
			s.failAt(fmt.Sprintf("expected ',' or %q", closing))
			return false
		}
		s.pos++
	}
	*first = false
	return true
}

// failAt reports what was expected at s.pos, or the end of input when there is nothing left.
func (s *Scanner) failAt(expected string) {
	if s.pos >= len(s.data) {
		s.fail("unexpected end of JSON input")
		return
	}
	s.fail("%s, got %q", expected, s.data[s.pos])
}

func (s *Scanner) typeError(field, want string) {
	if s.pos >= len(s.data) {
		s.fail("unexpected end of JSON input")
		return
	}
	s.fail("%s: expected %s, got %s", field, want, kindOf(s.data[s.pos]))
}

func kindOf(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return fmt.Sprintf("invalid character %q", c)
}

// Str reads a string (null: nil) for field, aliasing the frame or buffer until the next Reset.
func (s *Scanner) Str(field string) []byte {
	if s.err != nil || s.null() {
		return nil
	}
	if s.peek() != '"' {
		s.typeError(field, "a string")
		return nil
	}
	return s.rawString()
}

// rawString reads the string at s.pos (which is '"'), unescaping it and replacing invalid
// UTF-8 and lone surrogates with U+FFFD as encoding/json does.
func (s *Scanner) rawString() []byte {
	start := s.pos + 1
	for i := start; i < len(s.data); {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return s.data[start:i]
		case c == '\\':
			return s.slowString(start, i)
		case c < 0x20:
			s.pos = i
			s.fail("invalid control character in string")
			return nil
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			if r == utf8.RuneError && size == 1 {
				return s.slowString(start, i)
			}
			i += size
		}
	}
	s.pos = len(s.data)
	s.fail("unexpected end of JSON input in string")
	return nil
}

// slowString unescapes a string from start, whose bytes before i need no change, into buf.
func (s *Scanner) slowString(start, i int) []byte {
	out := len(s.buf)
	s.buf = append(s.buf, s.data[start:i]...)
	for i < len(s.data) {
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return s.buf[out:len(s.buf):len(s.buf)]
		case c < 0x20:
			s.pos = i
			s.fail("invalid control character in string")
			return nil
		case c == '\\':
			if i+1 >= len(s.data) {
				i++
				continue
			}
			switch e := s.data[i+1]; e {
			case '"', '\\', '/':
				s.buf = append(s.buf, e)
			case 'b':
				s.buf = append(s.buf, '\b')
			case 'f':
				s.buf = append(s.buf, '\f')
			case 'n':
				s.buf = append(s.buf, '\n')
			case 'r':
				s.buf = append(s.buf, '\r')
			case 't':
				s.buf = append(s.buf, '\t')
			case 'u':
				r, ok := s.hex4(i + 2)
				if !ok {
					s.pos = i
					s.fail("invalid \\u escape in string")
					return nil
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2, ok := s.hex4(i + 2); ok && i+1 < len(s.data) && s.data[i] == '\\' && s.data[i+1] == 'u' {
						if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
							s.buf = utf8.AppendRune(s.buf, pair)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				s.buf = utf8.AppendRune(s.buf, r)
				continue
			default:
				s.pos = i
				s.fail("invalid escape \\%c in string", e)
				return nil
			}
			i += 2
		case c < utf8.RuneSelf:
			s.buf = append(s.buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(s.data[i:])
			s.buf = utf8.AppendRune(s.buf, r) // RuneError for invalid bytes, as encoding/json
			i += size
		}
	}
	s.pos = len(s.data)
	s.fail("unexpected end of JSON input in string")
	return nil
}

func (s *Scanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.data) {
		return 0, false
	}
	var r rune
	for _, c := range s.data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// Integer reads an integer (null: not present); a fraction or overflow is an error.
func (s *Scanner) Integer(field string) (n int, present bool) {
	if s.err != nil || s.null() {
		return 0, false
	}
	c := s.peek()
	if c != '-' && (c < '0' || c > '9') {
		s.typeError(field, "an integer")
		return 0, false
	}
	start := s.pos
	isInt := s.number()
	if s.err != nil {
		return 0, false
	}
	text := s.data[start:s.pos]
	if !isInt {
		s.pos = start
		s.fail("%s: expected an integer, got %s", field, text)
		return 0, false
	}
	v, err := strconv.ParseInt(string(text), 10, 0)
	if err != nil {
		s.pos = start
		s.fail("%s: integer %s out of range", field, text)
		return 0, false
	}
	return int(v), true
}

// number consumes a number, reporting whether it has neither fraction nor exponent.
func (s *Scanner) number() (isInt bool) {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(d, i)
	default:
		return s.badNumber(i, "invalid number")
	}
	isInt = true
	if i < len(d) && d[i] == '.' {
		isInt = false
		j := digits(d, i+1)
		if j == i+1 {
			return s.badNumber(j, "invalid number: no digit after the decimal point")
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		isInt = false
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return s.badNumber(i, "invalid number: no digit in the exponent")
		}
		i = j
	}
	s.pos = i
	return isInt
}

// badNumber fails at byte i with msg, a number's fault, and returns false.
func (s *Scanner) badNumber(i int, msg string) bool {
	s.pos = i
	s.fail("%s", msg)
	return false
}

// digits returns the index after the run of ASCII digits at d[i:].
func digits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// Skip consumes and validates any value, so a skipped field still rejects a malformed frame.
func (s *Scanner) Skip() { s.skipDepth(0) }

func (s *Scanner) skipDepth(depth int) {
	if s.err != nil {
		return
	}
	if depth >= maxJSONDepth {
		s.fail("exceeded max depth")
		return
	}
	switch c := s.peek(); {
	case c == '{':
		s.pos++
		for range s.Members() {
			s.skipDepth(depth + 1)
		}
	case c == '[':
		s.pos++
		for first := true; s.Element(&first); {
			s.skipDepth(depth + 1)
		}
	case c == '"':
		s.rawString()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		s.number()
	case c == 0 && s.pos >= len(s.data):
		s.fail("unexpected end of JSON input")
	default:
		s.fail("invalid character %q looking for a value", c)
	}
}

// CutPlainString splits b at the closing quote of a JSON string body whose bytes are its value
// (no escapes, no control characters, valid UTF-8); ok is false for any other, so a fast path
// falls back to full decoding instead of misreading it.
func CutPlainString(b []byte) (value, rest []byte, ok bool) {
	ascii := true
	for i, c := range b {
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(b[:i]) {
				return nil, nil, false
			}
			return b[:i], b[i:], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, nil, false
}

// CutPlainAfter cuts prefix from b, then the plain string that follows it (CutPlainString).
func CutPlainAfter(b []byte, prefix string) (value, rest []byte, ok bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, nil, false
	}
	return CutPlainString(b[len(prefix):])
}

// Known returns the one of names equal to b (a constant: no allocation), and whether there is one.
func Known(b []byte, names ...string) (string, bool) {
	for _, s := range names {
		if string(b) == s {
			return s, true
		}
	}
	return "", false
}

// CutUint cuts a JSON unsigned integer of at most maxDigits digits (no leading zero) from b.
func CutUint(b []byte, maxDigits int) (n int64, rest []byte, ok bool) {
	i := 0
	for i < len(b) && i < maxDigits && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	return n, b[i:], i > 0 && (i == 1 || b[0] != '0')
}

// Raw consumes and validates the next value and returns its bytes (nil at an error).
func (s *Scanner) Raw() []byte {
	if s.err != nil {
		return nil
	}
	s.ws()
	start := s.pos
	s.Skip()
	if s.err != nil {
		return nil
	}
	return s.data[start:s.pos]
}

// Equal reports whether a and b are the same JSON value. Unless they are equal bytes it decodes
// both, so a checker calls it once per tool call, never per delta.
func Equal(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Deref is *p, the zero value for nil: an optional member as decoded.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Member readers for an object a decoder reads one member of, the rest validated and skipped.
// The value is stored only when the member is there, so repeats merge as in encoding/json;
// field and where (field.key) are passed, not built, so the hot path never allocates.

// StrTo reads a string for field into *dst unless it is null (which leaves *dst as it was).
func (s *Scanner) StrTo(dst *[]byte, field string) {
	if b := s.Str(field); b != nil {
		*dst = b
	}
}

// StrsIn reads the object at field (false at null or a type error), each member named in keys
// into the matching dsts (as StrTo), skipping the rest; wheres name them in type errors.
func (s *Scanner) StrsIn(field string, keys, wheres []string, dsts ...*[]byte) bool {
	if !s.Object(field) {
		return false
	}
	for k := range s.Members() {
		i := 0
		for i < len(keys) && string(k) != keys[i] {
			i++
		}
		if i == len(keys) {
			s.Skip()
		} else {
			s.StrTo(dsts[i], wheres[i])
		}
	}
	return true
}

// StrIn reads the object at field (false at null or a type error) and its member key into *value.
func (s *Scanner) StrIn(field, key, where string, value *[]byte) (isObject bool) {
	return s.memberIn(field, key, func() { *value = s.Str(where) })
}

// IntegerIn reads the object at field (false at null or a type error), its key into *n.
func (s *Scanner) IntegerIn(field, key, where string, n *int, present *bool) (isObject bool) {
	return s.memberIn(field, key, func() { *n, *present = s.Integer(where) })
}

// memberIn reads the object at field (false at null or a type error): its member key by read,
// the others skipped.
func (s *Scanner) memberIn(field, key string, read func()) bool {
	if !s.Object(field) {
		return false
	}
	for k := range s.Members() {
		if string(k) == key {
			read()
		} else {
			s.Skip()
		}
	}
	return true
}
