package jsonwire

// Member readers for an object a decoder reads one member of, the rest validated and skipped.
// The value is stored only when the member is there, so repeats merge as in encoding/json;
// field and where (field.key) are passed, not built, so the hot path never allocates.

// StrTo reads a string for field into *dst unless it is null (which leaves *dst as it was).
func (s *Scanner) StrTo(dst *[]byte, field string) {
	if b := s.Str(field); b != nil {
		*dst = b
	}
}

// StrsIn reads the object at field (false at null or a type error), each member named in keys
// into the matching dsts (as StrTo), skipping the rest; wheres name them in type errors.
func (s *Scanner) StrsIn(field string, keys, wheres []string, dsts ...*[]byte) bool {
	if !s.Object(field) {
		return false
	}
	for k := range s.Members() {
		i := 0
		for i < len(keys) && string(k) != keys[i] {
			i++
		}
		if i == len(keys) {
			s.Skip()
		} else {
			s.StrTo(dsts[i], wheres[i])
		}
	}
	return true
}

// StrIn reads the object at field (false at null or a type error) and its member key into *value.
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

// IntegerIn reads the object at field (false at null or a type error) and its member key into
// *n and *present.
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

// SkipObject validates and skips the object at field (false at null or a type error).
func (s *Scanner) SkipObject(field string) bool {
	if !s.Object(field) {
		return false
	}
	for range s.Members() {
		s.Skip()
	}
	return true
}
