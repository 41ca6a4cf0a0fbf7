package session

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/sse"
)

// TestTape: a stream that fits is kept whole; a longer one keeps its first and last whole
// frames with a line saying how much was left out between; a frame cut by a bound is never
// shown in part, so a secret in it cannot be half redacted; a frame longer than the tape
// leaves the note alone.
func TestTape(t *testing.T) {
	t.Parallel()
	play := func(events ...sse.Event) *tape {
		tp := new(tape)
		for i := range events {
			tp.record(&events[i])
		}
		return tp
	}
	frame := func(i int) sse.Event {
		return sse.Event{Type: "delta", Data: []byte(fmt.Sprintf(`{"n":%03d,"pad":"%s"}`, i, strings.Repeat("x", 40)))}
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret-token", "<redacted>") }

	// short: every frame, as on the wire, redacted
	got := play(sse.Event{Data: []byte("a")}, sse.Event{Type: "done", Data: []byte("sk-secret-token")}).frames(redact)
	if want := []string{"data: a", "event: done\ndata: <redacted>"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("short stream: %q, want %q", got, want)
	}
	// within head and ring together: whole, once
	var mid []sse.Event
	n := (tapeHead + tapeTail) / 80 // the frames are 68 bytes with their blank line
	for i := range n {
		mid = append(mid, frame(i))
	}
	got = play(mid...).frames(nil)
	if len(got) != n || !strings.Contains(got[0], `"n":000`) || !strings.Contains(got[n-1], fmt.Sprintf(`"n":%03d`, n-1)) {
		t.Errorf("a stream the head and ring hold: %d frames %q", len(got), got)
	}
	// long: the first frames, the note, the last frames, whole frames only
	var long []sse.Event
	for i := range 500 {
		long = append(long, frame(i))
	}
	got = play(long...).frames(nil)
	note := slices.IndexFunc(got, func(f string) bool { return strings.HasPrefix(f, "…[") })
	if note < 1 || !strings.Contains(got[0], `"n":000`) || !strings.Contains(got[len(got)-1], `"n":499`) || !strings.Contains(got[note], "bytes of frames not kept") {
		t.Fatalf("a long stream: %q", got)
	}
	for i, f := range got {
		if i != note && (!strings.HasPrefix(f, "event: delta\ndata: {") || !strings.HasSuffix(f, `"}`)) {
			t.Errorf("frame %d %q: not a whole frame", i, f)
		}
	}
	if total := len(got) - 1; total > (tapeHead+tapeTail)/60 {
		t.Errorf("%d frames kept of ~60 bytes each: more than the tape's bytes hold", total)
	}
	// a frame longer than the tape: only the note
	huge := sse.Event{Data: []byte("sk-secret-token" + strings.Repeat("y", 3*tapeTail) + "sk-secret-token")}
	got = play(huge).frames(redact)
	if len(got) != 1 || !strings.HasPrefix(got[0], "…[") || strings.Contains(strings.Join(got, ""), "secret") {
		t.Errorf("a huge frame: %q, want the note alone", got)
	}
}
