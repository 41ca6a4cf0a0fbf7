package jsonwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// DescribeError turns an encoding/json error into a message naming the field (or a syntax
// error's byte offset) under where; type errors say it all, others stay wrapped.
func DescribeError(where string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Errorf("%s: %s: expected %s, got JSON %s", where, typeErr.Field, typeErr.Type, typeErr.Value)
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return fmt.Errorf("%s: invalid JSON at byte %d: %w", where, syntaxErr.Offset, err)
	}
	return fmt.Errorf("%s: %w", where, err)
}

// Excerpt quotes the start of a frame for an error message, bounded for a huge or binary one.
func Excerpt(data []byte) string {
	const max = 80
	if len(data) > max {
		return fmt.Sprintf("%q…", data[:max])
	}
	return fmt.Sprintf("%q", data)
}

// CheckUTF8 returns an error naming where and the offset of the first invalid UTF-8 byte, or
// nil: encoding/json would make it U+FFFD without a word.
func CheckUTF8(where string, b []byte) error {
	if utf8.Valid(b) {
		return nil
	}
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Errorf("%s: not valid UTF-8 at byte %d", where, i)
		}
		i += size
	}
	return fmt.Errorf("%s: not valid UTF-8", where)
}

// DecodeRequest decodes a request body into v; an empty body, invalid UTF-8 and malformed JSON
// are errors naming what was wrong.
func DecodeRequest(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("request body: empty, want a JSON object")
	}
	if err := CheckUTF8("request body", body); err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return DescribeError("request body", err)
	}
	return nil
}
