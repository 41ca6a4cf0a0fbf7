package jsonwire

// Raw consumes and validates the next value, whatever its kind, and returns its bytes as they
// are in the frame (nil at an error). A checker that compares a nested value (a tool call's
// input object, say) keeps these bytes instead of decoding the value on every frame.
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
