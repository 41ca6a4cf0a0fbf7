package jsonwire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodingJSON is the reference: encoding/json without HTML escaping.
func encodingJSON(t testing.TB, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		// Plain ASCII passes through untouched.
		{"plain", "hello world", `"hello world"`},
		// Quote and backslash get backslash escapes.
		{"quote backslash", `a"b\c`, `"a\"b\\c"`},
		// Common control characters use their short forms.
		{"short controls", "a\nb\rc\td\be\ff", `"a\nb\rc\td\be\ff"`},
		// Other control characters use \u00XX.
		{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		// HTML characters stay literal: frames are not embedded in HTML.
		{"html", "<a&b>", `"<a&b>"`},
		// Multi-byte UTF-8 passes through.
		{"utf8", "héllo 世界 🎉", `"héllo 世界 🎉"`},
		// Line and paragraph separators are escaped, as encoding/json does.
		{"separators", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		// Invalid UTF-8 becomes U+FFFD so the frame stays valid JSON.
		{"invalid utf8", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
		// Empty string.
		{"empty", "", `""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := string(AppendString(nil, tt.in))
			if got != tt.want {
				t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
			}
			if ref := string(encodingJSON(t, tt.in)); got != ref {
				t.Errorf("AppendString(%q) = %s, encoding/json = %s", tt.in, got, ref)
			}
		})
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\x7f\u2028", "\xff\xfe", "héllo\n", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prefix := []byte("x")
		got := AppendString(prefix, s)
		if !bytes.Equal(got[1:], encodingJSON(t, s)) {
			t.Fatalf("AppendString(%q) = %s, encoding/json = %s", s, got[1:], encodingJSON(t, s))
		}
		if bytes.ContainsAny(got, "\n\r") {
			t.Fatalf("output %q has a line break, which would split an SSE data line", got)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	s := "The quick brown fox \"jumps\" over the lazy dog.\n"
	buf := make([]byte, 0, 128)
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}
