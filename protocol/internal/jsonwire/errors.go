package jsonwire

import (
	"encoding/json"
	"errors"
	"fmt"
)

// DescribeError turns an encoding/json error into a message naming the field (or the byte
// offset of a syntax error) under where, so a client that sent a bad body learns what to fix.
// The original error stays wrapped except for type errors, whose field and types say it all.
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

// Excerpt quotes the start of a frame for an error message: enough to recognise it, bounded
// so one huge or binary frame cannot flood a log.
func Excerpt(data []byte) string {
	const max = 80
	if len(data) > max {
		return fmt.Sprintf("%q…", data[:max])
	}
	return fmt.Sprintf("%q", data)
}
