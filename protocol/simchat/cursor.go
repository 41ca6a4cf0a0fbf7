package simchat

// cursor matches streamed pieces against the concatenation of parts (each turn's thinking, say)
// without building it, so a checker holds no copy of the script's text: memory per open stream
// stays small however long the answer.
type cursor struct {
	parts []string
	part  int // index of the part the next byte comes from
	off   int // offset in that part
	n     int // bytes matched so far
	total int
}

func newCursor(parts []string) cursor {
	c := cursor{parts: parts}
	for _, p := range parts {
		c.total += len(p)
	}
	return c
}

// advance consumes p if the expected text continues with it, and reports whether it did;
// on a mismatch the cursor does not move.
func advance[T ~string | ~[]byte](c *cursor, p T) bool {
	part, off := c.part, c.off
	for rest := p; len(rest) > 0; {
		for part < len(c.parts) && off == len(c.parts[part]) {
			part, off = part+1, 0
		}
		if part == len(c.parts) {
			return false
		}
		want := c.parts[part][off:]
		k := min(len(want), len(rest))
		if want[:k] != string(rest[:k]) {
			return false
		}
		off += k
		rest = rest[k:]
	}
	c.part, c.off = part, off
	c.n += len(p)
	return true
}

// restartAt moves the cursor to the start of part i.
func (c *cursor) restartAt(i int) {
	c.part, c.off, c.n = i, 0, 0
	for _, p := range c.parts[:i] {
		c.n += len(p)
	}
}

// done reports whether every expected byte was matched.
func (c *cursor) done() bool { return c.n == c.total }

// next returns up to n bytes of the expected text after the cursor, for violation details.
func (c *cursor) next(n int) string {
	var b []byte
	part, off := c.part, c.off
	for part < len(c.parts) && len(b) < n {
		b = append(b, c.parts[part][off:]...)
		part, off = part+1, 0
	}
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
