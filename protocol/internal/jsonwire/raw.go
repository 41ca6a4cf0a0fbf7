package jsonwire

import (
	"bytes"
	"encoding/json"
	"reflect"
)

// Raw consumes and validates the next value and returns its bytes as in the frame (nil at an
// error), for a checker to keep rather than decode.
func (s *Scanner) Raw() []byte {
	if s.err != nil {
		return nil
	}
	s.ws()
	start := s.pos
	s.Skip()
	if s.err != nil {
		return nil
	}
	return s.data[start:s.pos]
}

// Equal reports whether a and b are the same JSON value. Unless they are equal bytes it decodes
// both, so a checker calls it once per tool call, never per delta.
func Equal(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// Deref is *p, "" for nil: an optional string member as decoded.
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
