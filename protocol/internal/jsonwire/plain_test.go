package jsonwire

import (
	"encoding/json"
	"testing"
)

func TestCutPlainString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, value, rest string
		ok              bool
	}{
		{`abc"}`, "abc", `"}`, true},         // plain ASCII, rest starts at the quote
		{`"`, "", `"`, true},                 // empty body
		{`héllo 世界"`, "héllo 世界", `"`, true}, // valid multi-byte UTF-8
		{`a\"b"`, "", "", false},             // an escape needs decoding
		{"a\tb\"", "", "", false},            // raw control character is invalid JSON
		{"a\xffb\"", "", "", false},          // invalid UTF-8 decodes to U+FFFD, not its bytes
		{`abc`, "", "", false},               // no closing quote
		{"\u2028\"", "\u2028", `"`, true},    // U+2028 is plain in JSON
	}
	for _, tt := range tests {
		value, rest, ok := CutPlainString([]byte(tt.in))
		if ok != tt.ok || string(value) != tt.value || string(rest) != tt.rest {
			t.Errorf("CutPlainString(%q) = %q, %q, %v; want %q, %q, %v", tt.in, value, rest, ok, tt.value, tt.rest, tt.ok)
		}
	}
}

// FuzzCutPlainString checks that whatever CutPlainString accepts decodes, with encoding/json,
// to exactly its bytes: the checkers' fast paths rely on that.
func FuzzCutPlainString(f *testing.F) {
	for _, s := range []string{`abc"`, `a\nb"`, "\xc3\xa9\"", "\xed\xa0\x80\"", `"`, "x\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		value, rest, ok := CutPlainString(b)
		if !ok {
			return
		}
		if len(rest) == 0 || rest[0] != '"' || len(value)+len(rest) != len(b) {
			t.Fatalf("CutPlainString(%q) = %q, %q: not a split at a quote", b, value, rest)
		}
		var got string
		if err := json.Unmarshal(append(append([]byte{'"'}, value...), '"'), &got); err != nil || got != string(value) {
			t.Fatalf("accepted %q, but encoding/json decodes it to %q (err %v)", value, got, err)
		}
	})
}
