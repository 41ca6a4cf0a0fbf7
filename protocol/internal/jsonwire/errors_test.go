package jsonwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDescribeError(t *testing.T) {
	t.Parallel()
	var v struct {
		Model string `json:"model"`
	}
	tests := []struct {
		name, body, want string
		wraps            bool
	}{
		// A type error names the field and both types.
		{"type", `{"model":3}`, "request body: model: expected string, got JSON number", false},
		// A syntax error names the byte offset and keeps the original error.
		{"syntax", `{"model":`, "request body: invalid JSON at byte 9: unexpected end of JSON input", true},
		// A type error at the top level has no field to name; it is wrapped as is.
		{"top-level type", `"x"`, "request body: json: cannot unmarshal string", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := v
			err := json.Unmarshal([]byte(tt.body), &v)
			if err == nil {
				t.Fatalf("the table is wrong: %s decodes", tt.body)
			}
			got := DescribeError("request body", err)
			if !strings.HasPrefix(got.Error(), tt.want) {
				t.Errorf("DescribeError = %q, want prefix %q", got, tt.want)
			}
			if errors.Is(got, err) != tt.wraps {
				t.Errorf("DescribeError wraps the original: %v, want %v", errors.Is(got, err), tt.wraps)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	if got := Excerpt([]byte("a\"b")); got != `"a\"b"` {
		t.Errorf("short frame: %s", got)
	}
	long := []byte(strings.Repeat("x", 100))
	if got := Excerpt(long); got != `"`+strings.Repeat("x", 80)+`"…` {
		t.Errorf("long frame not cut at 80 bytes: %s", got)
	}
}

func TestMarshalNoHTML(t *testing.T) {
	t.Parallel()
	got, err := MarshalNoHTML(map[string]string{"url": "https://x.test/?a=1&b=<2>"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"url":"https://x.test/?a=1&b=<2>"}`; string(got) != want {
		t.Errorf("MarshalNoHTML = %s, want %s (no HTML escaping, no newline)", got, want)
	}
	if _, err := MarshalNoHTML(func() {}); err == nil {
		t.Error("MarshalNoHTML of a func succeeded")
	}
}

func TestCheckUTF8(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want string
	}{
		// Valid UTF-8, multi-byte runes and U+FFFD itself included, passes.
		{"valid", "{\"a\":\"日本 \uFFFD\"}", ""},
		// The offset of the first bad byte is named.
		{"bad byte", "ab\xffcd", "body: not valid UTF-8 at byte 2"},
		// A truncated multi-byte rune at the end is bad too.
		{"truncated rune", "ab\xe6\x97", "body: not valid UTF-8 at byte 2"},
	} {
		err := CheckUTF8("body", []byte(tt.in))
		if got := fmt.Sprint(err); (tt.want == "" && err != nil) || (tt.want != "" && got != tt.want) {
			t.Errorf("%s: CheckUTF8 = %v, want %q", tt.name, err, tt.want)
		}
	}
}
