package jsonwire

import "unicode/utf8"

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
