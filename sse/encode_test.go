package sse

import (
	"errors"
	"io"
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
		// A JSON frame, the common case.
		{name: "json", ev: Event{Data: []byte(`{"a":1}`)}, want: "data: {\"a\":1}\n\n"},
		// An LF in data splits.
		{name: "lf", ev: Event{Data: []byte("x\ny")}, want: "data: x\ndata: y\n\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := tc.ev.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := string(AppendEvent([]byte("prefix"), &tc.ev)); got != "prefix"+tc.want {
				t.Errorf("AppendEvent = %q, want %q", got, "prefix"+tc.want)
			}
		})
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
			if err := tc.ev.Validate(); !errors.Is(err, ErrInvalidField) {
				t.Fatalf("err = %v, want ErrInvalidField", err)
			}
		})
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
	buf := []byte(": hello\n\n")
	for i := range events {
		if err := events[i].Validate(); err != nil {
			t.Fatal(err)
		}
		buf = AppendEvent(buf, &events[i])
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
			d := NewDecoder(rd.wrap(string(buf)))
			got, err := decodeAll(d)
			if err != io.EOF || !eventsEqual(got, want) {
				t.Fatalf("err %v\n got  %s\n want %s", err, fmtEvents(got), fmtEvents(want))
			}
			if d.comments != 1 {
				t.Errorf("comments = %d, want 1", d.comments)
			}
		})
	}
}
