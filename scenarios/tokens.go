package scenarios

import (
	"unicode"
	"unicode/utf8"
)

// TokenCounter counts the script's tokens in streamed thinking and answer text. A scripted
// token is leading whitespace plus one word, so counting the non-space runes that follow
// whitespace (or open a turn's text) gives the script's count however a runtime re-chunks the
// text; a token counts when its first byte arrives. It misses only trailing whitespace at the
// very end of a literal. The zero value is ready; not safe for concurrent use.
type TokenCounter struct {
	thinkingInWord, textInWord bool
}

// Thinking returns how many thinking tokens begin in piece.
func (c *TokenCounter) Thinking(piece string) int {
	return countStarts(piece, &c.thinkingInWord, &c.textInWord)
}

// ThinkingBytes is Thinking for a piece still in its frame's buffer (no copy).
func (c *TokenCounter) ThinkingBytes(piece []byte) int {
	return countStarts(piece, &c.thinkingInWord, &c.textInWord)
}

// Text returns how many answer tokens begin in piece.
func (c *TokenCounter) Text(piece string) int {
	return countStarts(piece, &c.textInWord, &c.thinkingInWord)
}

// TextBytes is Text for a piece still in its frame's buffer (no copy).
func (c *TokenCounter) TextBytes(piece []byte) int {
	return countStarts(piece, &c.textInWord, &c.thinkingInWord)
}

// Break marks a turn boundary the text does not show (a tool call, a chunk reset): the next
// text's first word is a new token even without leading whitespace.
func (c *TokenCounter) Break() { c.thinkingInWord, c.textInWord = false, false }

// countStarts counts the words beginning in s; inWord carries over from the previous piece of
// its kind, and the other kind's word ends.
func countStarts[T string | []byte](s T, inWord, other *bool) int {
	*other = false
	n := 0
	in := *inWord
	for i := 0; i < len(s); {
		var space bool
		if b := s[i]; b < utf8.RuneSelf {
			// ASCII fast path: the whitespace unicode.IsSpace knows below 0x80.
			space = b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == '\v' || b == '\f'
			i++
		} else {
			r, size := decodeRune(s, i)
			space = unicode.IsSpace(r)
			i += size
		}
		if !space && !in {
			n++
		}
		in = !space
	}
	*inWord = in
	return n
}

// decodeRune is utf8.DecodeRune of s[i:] without converting s (which could allocate per
// frame): an invalid byte decodes as one RuneError, which is not a space.
func decodeRune[T string | []byte](s T, i int) (rune, int) {
	if b, ok := any(s).([]byte); ok {
		return utf8.DecodeRune(b[i:])
	}
	return utf8.DecodeRuneInString(string(s[i:]))
}
