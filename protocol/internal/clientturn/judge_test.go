package clientturn

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestOutputTextIsBounded: without ground truth a judge keeps a turn's text for the tokenizer,
// its first protocol.MaxOutputText bytes however much the target sends, and counts every byte;
// a conversation turn's answer, which the next turn's history carries, at protocol.MaxAnswerText.
func TestOutputTextIsBounded(t *testing.T) {
	t.Parallel()
	s := protocol.Session{NoGroundTruth: true, Endpoint: &protocol.EndpointRequest{Conversation: true}}
	j := NewJudge(&s, &Rules{})
	var v protocol.Violations
	frame := []byte(strings.Repeat("0123456789", 5400)) // 54,000 bytes
	const frames = 60                                   // 3.24 MB in all
	for i := range frames {
		if i%2 == 0 {
			j.Text(&v, frame)
		} else {
			j.Thinking(&v, frame)
		}
	}
	kept, total := j.OutputText()
	if len(kept) != protocol.MaxOutputText || total != frames*int64(len(frame)) {
		t.Errorf("kept %d bytes of %d, want %d of %d", len(kept), total, protocol.MaxOutputText, frames*len(frame))
	}
	if n := len(j.Answer()); n != protocol.MaxAnswerText {
		t.Errorf("the answer kept for the next turn is %d bytes, want at most %d", n, protocol.MaxAnswerText)
	}
}
