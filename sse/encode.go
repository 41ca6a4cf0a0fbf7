package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrInvalidField means an event's Type or ID cannot be written as one SSE field line.
var ErrInvalidField = errors.New("sse: invalid field")

// Encoder writes events to an io.Writer, one Write per event (never interleaved mid-frame).
// Flushing is the caller's job. Not safe for concurrent use.
type Encoder struct {
	w   io.Writer
	buf []byte
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w, buf: make([]byte, 0, 512)}
}

// Reset makes e write to w, keeping its buffer.
func (e *Encoder) Reset(w io.Writer) { e.w = w }

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

// Encode writes ev as one frame: "event:", "id:" and "retry:" (at least 1 ms) when set, then
// data lines split at LF, CRLF and lone CR (so Data round-trips when it has no CR; empty Data
// is one empty line, still dispatched) and a blank line.
func (e *Encoder) Encode(ev *Event) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	e.buf = AppendEvent(e.buf[:0], ev)
	return e.write()
}

// Data writes p as an unnamed event, the common case's fast path.
func (e *Encoder) Data(p []byte) error {
	e.buf = appendData(e.buf[:0], p)
	e.buf = append(e.buf, '\n')
	return e.write()
}

// Comment writes text as ": " comment lines and a blank line (the heartbeat ": ping\n\n").
func (e *Encoder) Comment(text string) error {
	e.buf = e.buf[:0]
	for {
		line, rest, more := cutLine(text)
		e.buf = append(e.buf, ": "...)
		e.buf = append(e.buf, line...)
		e.buf = append(e.buf, '\n')
		if !more {
			break
		}
		text = rest
	}
	e.buf = append(e.buf, '\n')
	return e.write()
}

func (e *Encoder) write() error {
	if _, err := e.w.Write(e.buf); err != nil {
		return fmt.Errorf("sse: write event: %w", err)
	}
	return nil
}

// AppendEvent appends ev's wire form (as Encode writes it) to dst, allocating only when dst
// grows. It does not validate: call ev.Validate unless Type and ID are known good.
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
