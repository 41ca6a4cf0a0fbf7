package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestEncode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   Event
		want string
	}{
		// Plain data.
		{name: "data", ev: Event{Data: []byte("hi")}, want: "data: hi\n\n"},
		// Every field, in the order event, id, retry, data.
		{name: "all-fields", ev: Event{Type: "receipt", ID: "7", Retry: 1500 * time.Millisecond, Data: []byte("{}")}, want: "event: receipt\nid: 7\nretry: 1500\ndata: {}\n\n"},
		// Multi-line data becomes several data lines.
		{name: "multi-line", ev: Event{Data: []byte("a\nb\n")}, want: "data: a\ndata: b\ndata: \n\n"},
		// CR and CRLF in data are line breaks too, as a decoder would read them.
		{name: "cr-crlf", ev: Event{Data: []byte("a\rb\r\nc")}, want: "data: a\ndata: b\ndata: c\n\n"},
		// Empty data is one empty data line, so the event is still dispatched.
		{name: "empty-data", ev: Event{Type: "ping"}, want: "event: ping\ndata: \n\n"},
		// A leading space in data survives because the encoder always writes one after the colon.
		{name: "leading-space", ev: Event{Data: []byte(" x")}, want: "data:  x\n\n"},
		// Sub-millisecond retry cannot be expressed and is omitted.
		{name: "tiny-retry", ev: Event{Retry: time.Microsecond, Data: []byte("x")}, want: "data: x\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			if err := NewEncoder(&buf).Encode(&tc.ev); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Errorf("Encode = %q, want %q", buf.String(), tc.want)
			}
			if got := string(AppendEvent([]byte("prefix"), &tc.ev)); got != "prefix"+tc.want {
				t.Errorf("AppendEvent = %q, want %q", got, "prefix"+tc.want)
			}
		})
	}
}

func TestEncodeDataAndComment(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	steps := []struct {
		do   func() error
		want string
	}{
		// Data fast path.
		{func() error { return e.Data([]byte(`{"a":1}`)) }, "data: {\"a\":1}\n\n"},
		// Data with a newline splits.
		{func() error { return e.Data([]byte("x\ny")) }, "data: x\ndata: y\n\n"},
		// The compose heartbeat shape.
		{func() error { return e.Comment("ping") }, ": ping\n\n"},
		// Multi-line comment text becomes several comment lines.
		{func() error { return e.Comment("a\r\nb") }, ": a\n: b\n\n"},
	}
	for i, s := range steps {
		buf.Reset()
		if err := s.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if buf.String() != s.want {
			t.Errorf("step %d wrote %q, want %q", i, buf.String(), s.want)
		}
	}
}

func TestEncodeRejectsInvalidFields(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ev   Event
	}{
		// A newline in the type would start a new field.
		{name: "type-lf", ev: Event{Type: "a\nb"}},
		// So would a CR.
		{name: "type-cr", ev: Event{Type: "a\rdata: x"}},
		// A newline in the id.
		{name: "id-lf", ev: Event{ID: "1\n"}},
		// A NUL in the id would make decoders ignore it.
		{name: "id-nul", ev: Event{ID: "1\x002"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			err := NewEncoder(&buf).Encode(&tc.ev)
			if !errors.Is(err, ErrInvalidField) {
				t.Fatalf("err = %v, want ErrInvalidField", err)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q despite the error", buf.String())
			}
		})
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestEncodeWriteError(t *testing.T) {
	t.Parallel()
	e := NewEncoder(failWriter{})
	for name, err := range map[string]error{
		"Encode":  e.Encode(&Event{Data: []byte("x")}),
		"Data":    e.Data([]byte("x")),
		"Comment": e.Comment("x"),
	} {
		if !errors.Is(err, io.ErrClosedPipe) || !strings.Contains(err.Error(), "sse: write") {
			t.Errorf("%s: err = %v, want wrapped io.ErrClosedPipe", name, err)
		}
	}
}

// TestEncodeDecodeRoundTrip checks a stream of encoded events decodes back, with whatever
// read sizes.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	events := []Event{
		{Data: []byte("plain")},
		{Type: "message_start", ID: "1", Data: []byte(`{"type":"message_start"}`)},
		{Data: []byte("multi\nline\n\ndata")},
		{Type: "x", Retry: 2 * time.Second, Data: []byte("")},
		{Data: []byte(" leading and trailing ")},
		{Type: "é", ID: "ü 2", Data: []byte("日本\xff")},
	}
	var buf bytes.Buffer
	e := NewEncoder(&buf)
	if err := e.Comment("hello"); err != nil {
		t.Fatal(err)
	}
	for i := range events {
		if err := e.Encode(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	// The decoder reports the persisting ID.
	want := make([]Event, len(events))
	copy(want, events)
	for i := 2; i < 5; i++ {
		want[i].ID = "1"
	}
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			t.Parallel()
			d := NewDecoder(rd.wrap(buf.String()))
			got, err := decodeAll(d)
			if err != io.EOF || !eventsEqual(got, want) {
				t.Fatalf("err %v\n got  %s\n want %s", err, fmtEvents(got), fmtEvents(want))
			}
			if d.Comments() != 1 {
				t.Errorf("Comments() = %d, want 1", d.Comments())
			}
		})
	}
}

// TestEncoderReset checks Reset redirects output.
func TestEncoderReset(t *testing.T) {
	t.Parallel()
	var first, second bytes.Buffer
	e := NewEncoder(&first)
	if err := e.Data([]byte("1")); err != nil {
		t.Fatal(err)
	}
	e.Reset(&second)
	if err := e.Data([]byte("2")); err != nil {
		t.Fatal(err)
	}
	if first.String() != "data: 1\n\n" || second.String() != "data: 2\n\n" {
		t.Errorf("first %q, second %q", first.String(), second.String())
	}
}
