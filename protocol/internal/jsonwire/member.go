package jsonwire

// Member readers for the common case of an object a decoder reads one member of (a usage
// object's token count, an error object's message): every other member is validated and
// skipped. The member's value is stored only when the member is there, so a repeated object
// merges into what the earlier one gave, as encoding/json decodes into a struct, and a
// repeated member's last value wins. field names the object in type errors, where the
// member's value (field.key); both are passed, not built, so that a decoder on the hot path
// never allocates.

// StrTo reads a string for field into *dst unless it is null, which (as in encoding/json)
// leaves *dst as it was.
func (s *Scanner) StrTo(dst *[]byte, field string) {
	if b := s.Str(field); b != nil {
		*dst = b
	}
}

// StrIn reads the object at field (false at null, or on a type error) and its member key into
// *value as Str does (nil for null).
func (s *Scanner) StrIn(field, key, where string, value *[]byte) (isObject bool) {
	if !s.Object(field) {
		return false
	}
	for k := range s.Members() {
		if string(k) == key {
			*value = s.Str(where)
		} else {
			s.Skip()
		}
	}
	return true
}

// IntegerIn reads the object at field (false at null, or on a type error) and its member key
// into *n and *present as Integer does (0 and false for null).
func (s *Scanner) IntegerIn(field, key, where string, n *int, present *bool) (isObject bool) {
	if !s.Object(field) {
		return false
	}
	for k := range s.Members() {
		if string(k) == key {
			*n, *present = s.Integer(where)
		} else {
			s.Skip()
		}
	}
	return true
}

// SkipObject validates and skips the object at field (false at null, or on a type error):
// for a member whose presence is judged, not its content.
func (s *Scanner) SkipObject(field string) bool {
	if !s.Object(field) {
		return false
	}
	for range s.Members() {
		s.Skip()
	}
	return true
}
