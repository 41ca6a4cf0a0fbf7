package jsonwire

import (
	"errors"
	"io"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestEventQueueOrderEndAndErrors reads frames of 2, 0 and 1 events, then the turn's end; and
// a stream whose second read fails after queuing an event.
func TestEventQueueOrderEndAndErrors(t *testing.T) {
	t.Parallel()
	var q EventQueue
	frames := [][]string{{"a", "b"}, {}, {"c"}}
	reads := 0
	read := func() error {
		if reads == len(frames) {
			q.Finish()
			return nil
		}
		for _, text := range frames[reads] {
			q.Push(protocol.ModelEvent{Kind: protocol.ModelText, Text: text})
		}
		reads++
		return nil
	}
	var got string
	var ev protocol.ModelEvent
	for {
		err := q.Next(&ev, read)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got += ev.Text
	}
	if got != "abc" {
		t.Errorf("events %q, want abc in order", got)
	}
	if err := q.Next(&ev, read); !errors.Is(err, io.EOF) {
		t.Errorf("after the end: %v, want io.EOF again", err)
	}

	var failing EventQueue
	boom := errors.New("boom")
	calls := 0
	readFailing := func() error {
		calls++
		if calls == 1 {
			failing.Push(protocol.ModelEvent{Text: "x"})
			return nil
		}
		failing.Push(protocol.ModelEvent{Text: "y"})
		return boom
	}
	for i, want := range []string{"x", "y"} {
		if err := failing.Next(&ev, readFailing); err != nil || ev.Text != want {
			t.Fatalf("event %d: %q, %v; want %q (events before the error come first)", i, ev.Text, err, want)
		}
	}
	for range 2 {
		if err := failing.Next(&ev, readFailing); !errors.Is(err, boom) {
			t.Fatalf("after the events: %v, want the read error, every time", err)
		}
	}
	if calls != 2 {
		t.Errorf("read called %d times, want 2 (no reads after an error)", calls)
	}
}
