package wiretest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// ErrQuirk is a reference parser's error on input the fast parsers read apart on purpose.
var ErrQuirk = errors.New("encoding/json quirk")

// Quirky reports whether data has a duplicate key, or one equal to a knownKeys but for case.
func Quirky(data []byte, knownKeys []string) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					return true
				}
				top.keys[key] = true
				for _, k := range knownKeys {
					if key != k && strings.EqualFold(key, k) {
						return true
					}
				}
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, expectKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].expectKey = true
		}
	}
}

// ParserOf is the parse function p picks of a wire: fast, or the encoding/json reference ref,
// which (Reference) refuses with ErrQuirk what Quirky finds against keys.
func ParserOf[S, V any](p Parser, fast, ref func(*S, []byte, *V) error, keys []string) func(*S, []byte, *V) error {
	switch p {
	case Reference:
		return func(sc *S, data []byte, v *V) error {
			if Quirky(data, keys) {
				return ErrQuirk
			}
			return ref(sc, data, v)
		}
	case ReferenceUnchecked:
		return ref
	}
	return fast
}

// Outcome is everything a stream produced.
type Outcome struct {
	Events []protocol.ModelEvent
	End    string // "eof", the provider error, or "error"
	Quirk  bool   // the reference parser met an ErrQuirk
}

// RunStream drains st into an Outcome.
func RunStream(st protocol.ModelStream) Outcome {
	var o Outcome
	for {
		var ev protocol.ModelEvent
		err := st.Next(&ev)
		switch {
		case err == nil:
			o.Events = append(o.Events, ev)
			continue
		case err == io.EOF:
			o.End = "eof"
		case errors.Is(err, ErrQuirk):
			o.Quirk = true
		default:
			var perr *protocol.ProviderError
			if errors.As(err, &perr) {
				o.End = perr.Error()
			} else {
				o.End = "error"
			}
		}
		return o
	}
}

// Parser picks which of a wire's frame parsers a test stream uses.
type Parser int

const (
	// Fast is the wire's own scanner-based parser.
	Fast Parser = iota
	// Reference is the encoding/json reference, returning ErrQuirk on quirky input.
	Reference
	// ReferenceUnchecked is the reference without the (slow) quirk check.
	ReferenceUnchecked
)

// StreamOf builds a wire's ModelStream over data with parser p.
type StreamOf func(data []byte, p Parser) protocol.ModelStream

// AssertSameOutcome fails t unless the fast parser's stream over data ends as the reference's,
// with identical events (quirky input skipped): each wire's fuzz body.
func AssertSameOutcome(t *testing.T, data []byte, streamOf StreamOf) {
	t.Helper()
	f, ref := RunStream(streamOf(data, Fast)), RunStream(streamOf(data, Reference))
	if ref.Quirk {
		return // an encoding/json quirk the fast parser does not copy
	}
	if f.End != ref.End || len(f.Events) != len(ref.Events) {
		t.Fatalf("fast parser: %d events, end %s; reference: %d events, end %s", len(f.Events), f.End, len(ref.Events), ref.End)
	}
	for i := range f.Events {
		if f.Events[i] != ref.Events[i] {
			t.Fatalf("event %d: fast %+v, reference %+v", i, f.Events[i], ref.Events[i])
		}
	}
}

// MutationSweep deletes each byte of frames and replaces every fifth by bytes that matter to
// JSON: the fast parser must agree with the reference on every result.
func MutationSweep(t *testing.T, frames []byte, streamOf StreamOf) {
	t.Helper()
	compare := func(data []byte) {
		fast := RunStream(streamOf(data, Fast))
		// The quirk check is slow: only a disagreement is checked for quirks.
		ref := RunStream(streamOf(data, ReferenceUnchecked))
		if fast.End == ref.End && slices.Equal(fast.Events, ref.Events) {
			return
		}
		if RunStream(streamOf(data, Reference)).Quirk {
			return
		}
		t.Fatalf("on %q\nfast parser: %+v, end %s\nreference:   %+v, end %s", data, fast.Events, fast.End, ref.Events, ref.End)
	}
	buf := make([]byte, 0, len(frames))
	for i := range frames {
		compare(append(append(buf[:0], frames[:i]...), frames[i+1:]...))
		for _, c := range []byte(`"\{},:`) {
			if frames[i] != c && i%5 == 0 {
				buf = append(buf[:0], frames...)
				buf[i] = c
				compare(buf)
			}
		}
	}
}
