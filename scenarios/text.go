package scenarios

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// words is the vocabulary of generated text. A few entries are non-ASCII (Latin-1 accents,
// umlauts, CJK) so every consumer's UTF-8 handling is exercised, including decoders that split
// reads inside a multi-byte character.
var words = [...]string{
	"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
	"eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim",
	"ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi",
	"aliquip", "ex", "ea", "commodo", "consequat", "duis", "aute", "irure", "in", "reprehenderit",
	"voluptate", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "excepteur", "sint",
	"occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt",
	"mollit", "anim", "id", "est", "laborum", "stream", "token", "agent", "tool", "frame",
}

// unicodeWords are drawn about one time in twenty.
var unicodeWords = [...]string{"café", "naïve", "über", "Grüße", "résumé", "façade", "日本", "東京", "señor", "Ωmega"}

// punctuation is appended to a word about one time in eight.
var punctuation = [...]string{",", ".", ";", "!", "?", ":"}

// generateTokens returns n word-like tokens from r: the first without a leading space, every
// other one " word", sometimes with punctuation or a non-ASCII word. Concatenated they read as
// text; each token is what a provider would send as one token.
func generateTokens(r *rand.Rand, n int) []string {
	if n <= 0 {
		return nil
	}
	tokens := make([]string, n)
	for i := range tokens {
		var w string
		if r.IntN(20) == 0 {
			w = unicodeWords[r.IntN(len(unicodeWords))]
		} else {
			w = words[r.IntN(len(words))]
		}
		if r.IntN(8) == 0 && i != n-1 {
			w += punctuation[r.IntN(len(punctuation))]
		}
		if i == n-1 {
			w += "."
		}
		if i > 0 {
			w = " " + w
		}
		tokens[i] = w
	}
	return tokens
}

// generatePhrase returns n generated words joined with spaces, for tool queries and results.
func generatePhrase(r *rand.Rand, n int) string {
	return strings.TrimSuffix(strings.Join(generateTokens(r, n), ""), ".")
}

// splitLiteral splits s into tokens of leading whitespace plus one word, so the tokens
// concatenate back to exactly s. Trailing whitespace becomes a token of its own.
func splitLiteral(s string) []string {
	var tokens []string
	for len(s) > 0 {
		i := 0
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += size
		}
		for i < len(s) {
			r, size := utf8.DecodeRuneInString(s[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += size
		}
		tokens = append(tokens, s[:i])
		s = s[i:]
	}
	return tokens
}

// textTokens resolves a Text into tokens: the literal split by splitLiteral, or Tokens
// generated from r.
func textTokens(t Text, r *rand.Rand) []string {
	if t.Literal != "" {
		return splitLiteral(t.Literal)
	}
	return generateTokens(r, t.Tokens)
}

// splitPieces cuts s into pieces of 2 to 8 bytes (drawn from r), never inside a UTF-8
// character, the way providers stream tool-call arguments.
func splitPieces(r *rand.Rand, s string) []string {
	var pieces []string
	for len(s) > 0 {
		n := 2 + r.IntN(7)
		if n >= len(s) {
			pieces = append(pieces, s)
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	return pieces
}
