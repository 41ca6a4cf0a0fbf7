package scenarios

import (
	"math/rand/v2"
	"strings"
	"unicode"
	"unicode/utf8"
)

// words is the vocabulary of generated text.
var words = [...]string{
	"lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
	"eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim",
	"ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi",
	"aliquip", "ex", "ea", "commodo", "consequat", "duis", "aute", "irure", "in", "reprehenderit",
	"voluptate", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "excepteur", "sint",
	"occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt",
	"mollit", "anim", "id", "est", "laborum", "stream", "token", "agent", "tool", "frame",
}

// unicodeWords, drawn about one time in twenty, exercise every consumer's UTF-8 handling.
var unicodeWords = [...]string{"café", "naïve", "über", "Grüße", "résumé", "façade", "日本", "東京", "señor", "Ωmega"}

// punctuation is appended to a word about one time in eight.
var punctuation = [...]string{",", ".", ";", "!", "?", ":"}

// generateText returns n word-like tokens drawn from r as one string and each token's end
// offset (one allocation per text, not per token).
func generateText(r *rand.Rand, n int) (string, []int) {
	if n <= 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(n * 8)
	cuts := make([]int, n)
	for i := range cuts {
		if i > 0 {
			b.WriteByte(' ')
		}
		if r.IntN(20) == 0 {
			b.WriteString(unicodeWords[r.IntN(len(unicodeWords))])
		} else {
			b.WriteString(words[r.IntN(len(words))])
		}
		if i == n-1 {
			b.WriteByte('.')
		} else if r.IntN(8) == 0 {
			b.WriteString(punctuation[r.IntN(len(punctuation))])
		}
		cuts[i] = b.Len()
	}
	return b.String(), cuts
}

// generatePhrase returns n generated words, for tool queries and results.
func generatePhrase(r *rand.Rand, n int) string {
	s, _ := generateText(r, n)
	return strings.TrimSuffix(s, ".")
}

// literalCuts returns the end offsets of s's tokens: leading whitespace plus one word.
func literalCuts(s string) []int {
	var cuts []int
	inWord := false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if space && inWord {
			cuts = append(cuts, i)
		}
		inWord = !space
	}
	if s != "" {
		cuts = append(cuts, len(s)) // the last word, or trailing whitespace
	}
	return cuts
}

func textCuts(t Text, r *rand.Rand) (string, []int) {
	if t.Literal != "" {
		return t.Literal, literalCuts(t.Literal)
	}
	return generateText(r, t.Tokens)
}

// pieceCuts returns the end offsets of s cut into pieces of 2 to 8 bytes, on rune boundaries.
func pieceCuts(r *rand.Rand, s string) []int {
	var cuts []int
	i := 0
	for i < len(s) {
		n := i + 2 + r.IntN(7)
		if n >= len(s) {
			cuts = append(cuts, len(s))
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		cuts = append(cuts, n)
		i = n
	}
	return cuts
}
