package sse

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalidField means an event's Type or ID cannot be written as one SSE field line.
var ErrInvalidField = errors.New("sse: invalid field")

// Validate reports whether ev can be encoded: no CR or LF in Type, no CR, LF or NUL in ID.
func (ev *Event) Validate() error {
	if strings.ContainsAny(ev.Type, "\r\n") {
		return fmt.Errorf("%w: event type %q contains a line break", ErrInvalidField, ev.Type)
	}
	if strings.ContainsAny(ev.ID, "\r\n\x00") {
		return fmt.Errorf("%w: event id %q contains a line break or NUL", ErrInvalidField, ev.ID)
	}
	return nil
}

// AppendEvent appends ev as one frame to dst, allocating only when dst grows: "event:", "id:"
// and "retry:" (at least 1 ms) when set, then data lines split at LF, CRLF and lone CR (so Data
// round-trips when it has no CR; empty Data is one empty line, still dispatched) and a blank
// line. It does not validate: call ev.Validate unless Type and ID are known good.
func AppendEvent(dst []byte, ev *Event) []byte {
	if ev.Type != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Type...)
		dst = append(dst, '\n')
	}
	if ev.ID != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, ev.ID...)
		dst = append(dst, '\n')
	}
	if ms := ev.Retry.Milliseconds(); ms > 0 {
		dst = append(dst, "retry: "...)
		dst = strconv.AppendInt(dst, ms, 10)
		dst = append(dst, '\n')
	}
	dst = appendData(dst, ev.Data)
	return append(dst, '\n')
}

// appendData appends one "data: " line per line of p.
func appendData(dst, p []byte) []byte {
	if bytes.IndexByte(p, '\r') < 0 {
		// Fast path: LF is the only possible separator.
		for {
			dst = append(dst, "data: "...)
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				dst = append(dst, p...)
				return append(dst, '\n')
			}
			dst = append(dst, p[:i]...)
			dst = append(dst, '\n')
			p = p[i+1:]
		}
	}
	for {
		line, rest, more := cutLine(p)
		dst = append(dst, "data: "...)
		dst = append(dst, line...)
		dst = append(dst, '\n')
		if !more {
			return dst
		}
		p = rest
	}
}

// cutLine splits s at its first line break (CRLF, LF or lone CR).
func cutLine[S string | []byte](s S) (line, rest S, found bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			return s[:i], s[i+1:], true
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				return s[:i], s[i+2:], true
			}
			return s[:i], s[i+1:], true
		}
	}
	return s, s[len(s):], false
}
