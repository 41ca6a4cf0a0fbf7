package jsonwire

import "testing"

// TestScannerRaw: Raw returns a nested value's bytes as they are in the frame and validates
// them; a malformed value is an error, not a short slice.
func TestScannerRaw(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data, want string
		ok               bool
	}{
		// An object with escapes and nesting comes back verbatim, whitespace inside included.
		{"object", `{"input":{"a":[1, "x\"y"],"b":null},"z":1}`, `{"a":[1, "x\"y"],"b":null}`, true},
		// A scalar works too.
		{"number", `{"input":-1.5e3}`, `-1.5e3`, true},
		// A broken value is reported.
		{"broken", `{"input":{"a":}}`, ``, false},
	} {
		var s Scanner
		s.Reset([]byte(tc.data))
		var got []byte
		if s.Object("frame") {
			for first := true; ; {
				key, ok := s.Member(&first)
				if !ok {
					break
				}
				if string(key) == "input" {
					got = s.Raw()
				} else {
					s.Skip()
				}
			}
		}
		err := s.Finish()
		if (err == nil) != tc.ok || string(got) != tc.want {
			t.Errorf("%s: Raw = %q, err %v; want %q, ok %t", tc.name, got, err, tc.want, tc.ok)
		}
	}
}
