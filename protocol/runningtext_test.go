package protocol

import (
	"strings"
	"testing"
)

// TestRunningText: the text appended in pieces equals its whole copy and nothing else, its head
// is bounded, and the first difference is found within the head.
func TestRunningText(t *testing.T) {
	t.Parallel()
	whole := strings.Repeat("0123456789", 1000)
	var rt RunningText
	for i := 0; i < len(whole); i += 7 {
		rt.Append([]byte(whole[i:min(i+7, len(whole))]))
	}
	if !rt.Equal([]byte(whole)) || rt.Len() != len(whole) || len(rt.Head()) != MaxRunningHead {
		t.Fatalf("equal %v len %d head %d", rt.Equal([]byte(whole)), rt.Len(), len(rt.Head()))
	}
	changed := []byte(whole)
	changed[len(changed)-1] = 'x'
	if rt.Equal(changed) || rt.Equal([]byte(whole[1:])) {
		t.Error("a different text is equal")
	}
	if d := rt.FirstDiff(changed); d != ", after the first 4096 bytes" {
		t.Errorf("late difference: %q", d)
	}
	changed[5] = 'x'
	if d := rt.FirstDiff(changed); d != ", first differing at byte 5" {
		t.Errorf("early difference: %q", d)
	}
	var empty RunningText
	if !empty.Equal(nil) || empty.Equal([]byte("a")) {
		t.Error("empty text")
	}
}
