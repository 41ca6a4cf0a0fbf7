package simcanvas

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
	}{
		// An e-mail address.
		{"write to jane.doe@example.com today", "write to " + RedactedEmail + " today"},
		// A subdomain and a plus tag.
		{"ops+alerts@mail.corp.example.org", RedactedEmail},
		// An international phone number with spaces, and one with hyphens.
		{"call +1 415 555 0134.", "call " + RedactedPhone + "."},
		{"or +49-30-1234-5678", "or " + RedactedPhone},
		// A US social security number.
		{"SSN 078-05-1120;", "SSN " + RedactedSSN + ";"},
		// Every kind in one text.
		{"a@b.io +441234567890 123-45-6789", RedactedEmail + " " + RedactedPhone + " " + RedactedSSN},
		// Text without PII is unchanged: numbers without a "+", tool ids, a bare "@".
		{"call_1234567890 costs 415 555 0134 units @ noon", "call_1234567890 costs 415 555 0134 units @ noon"},
		// Too few digits for a phone number.
		{"+1 234 567", "+1 234 567"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if HasPII(tc.in) != (tc.in != tc.want) {
			t.Errorf("HasPII(%q) = %v", tc.in, HasPII(tc.in))
		}
	}
}

// frameLog keeps every frame a Writer writes, one per Write call.
type frameLog struct{ frames [][]byte }

func (l *frameLog) Write(p []byte) (int, error) {
	l.frames = append(l.frames, bytes.Clone(p))
	return len(p), nil
}

// execution writes a whole single-turn execution of content as a correct runtime would, with
// SSE ids: started (1), block:started (2), one chunk per piece (unless redacted), stream:done,
// block:completed and execution:completed with output, then [DONE]. It returns the frames.
func execution(t *testing.T, pieces []string, output string, live bool) [][]byte {
	t.Helper()
	log := &frameLog{}
	w := NewWriter(log, "exec-1", "wf")
	w.IDs = true
	w.Clock = fixedClock()
	out := map[string]any{"content": output}
	for _, err := range []error{w.ExecutionStarted(time.Unix(0, 0)), w.BlockStarted(block, "Agent", "agent", 1)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	if live {
		for _, p := range pieces {
			if err := w.Chunk(block, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, err := range []error{w.StreamDone(block), w.BlockCompleted(block, out, time.Second), w.ExecutionCompleted(out, time.Second), w.Done()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return log.frames
}

// pieces splits the final text of plain-answer (seed 1) into its scripted chunks.
func plainAnswer(t *testing.T) (*protocol.Session, []string) {
	t.Helper()
	script := dialecttest.Script(t, "plain-answer", 1)
	var pieces []string
	for _, st := range script.Turns[0].Steps {
		if st.Kind == scenarios.StepText {
			pieces = append(pieces, st.Text)
		}
	}
	return &protocol.Session{ID: "s", Target: "wf", Expected: script.Expected()}, pieces
}

// observeAll feeds a byte stream to c.
func observeAll(t *testing.T, c protocol.Checker, frames [][]byte) {
	t.Helper()
	dec := sse.NewDecoder(bytes.NewReader(bytes.Join(frames, nil)))
	var ev sse.Event
	for {
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Observe(&ev)
	}
}

func TestRedactedChecker(t *testing.T) {
	t.Parallel()
	s, pieces := plainAnswer(t)
	final := s.Expected.FinalText()
	pii := &protocol.Session{ID: "s", Target: "wf", Expected: scenarios.Expected{FailedTurn: -1,
		Turns: []scenarios.ExpectedTurn{{Text: "mail jane@example.com", Final: true}}}}
	for _, tc := range []struct {
		name   string
		s      *protocol.Session
		frames [][]byte
		want   []protocol.Rule
	}{
		// The output, redacted, only with block:completed: clean.
		{"clean", s, execution(t, pieces, Redact(final), false), nil},
		// PII in the ground truth arrives redacted: clean.
		{"pii redacted", pii, execution(t, nil, "mail "+RedactedEmail, false), nil},
		// Live chunks for a redacted block.
		{"live chunks", s, execution(t, pieces, final, true), []protocol.Rule{RRedactLive}},
		// The block's output with its PII.
		{"unredacted", pii, execution(t, nil, "mail jane@example.com", false), []protocol.Rule{RRedactOutput}},
		// Redacted, but not the final text.
		{"wrong content", s, execution(t, nil, "something else", false), []protocol.Rule{RRedactOutput}},
		// No block:completed: the output never arrives.
		{"no block:completed", s, slices.Delete(execution(t, nil, final, false), 3, 4), []protocol.Rule{RRedactOutput}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New().Configure("wf-redacted", nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := c.NewChecker(tc.s)
			observeAll(t, ch, tc.frames)
			if got := dialecttest.SortedRules(ch.Finish(nil)); !slices.Equal(got, tc.want) {
				t.Errorf("rules %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRedactedClientOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target   string
		opts     protocol.Options
		redacted bool
	}{
		// The slug's suffix says so.
		{"openai-redacted", nil, true},
		// Any other workflow streams live.
		{"openai-all", nil, false},
		// The option wins over the suffix, both ways.
		{"openai-all", protocol.Options{"redacted": true}, true},
		{"openai-redacted", protocol.Options{"redacted": "false"}, false},
	} {
		c, err := New().Configure(tc.target, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := !c.Sees(protocol.FrameAnswer); got != tc.redacted {
			t.Errorf("%s %v: redacted %v, want %v", tc.target, tc.opts, got, tc.redacted)
		}
		if want := map[bool]string{true: "sim-canvas-redacted", false: "sim-canvas"}[tc.redacted]; c.Label() != want {
			t.Errorf("%s: label %q, want %q", tc.target, c.Label(), want)
		}
	}
	if _, err := New().Configure("wf", protocol.Options{"redacted": 3}); err == nil || !strings.Contains(err.Error(), "redacted") {
		t.Errorf("a bad redacted option: %v", err)
	}
	if _, err := New().Configure("wf", protocol.Options{"reconnectPath": "/x/{nope}"}); err == nil || !strings.Contains(err.Error(), "{nope}") {
		t.Errorf("a bad reconnectPath: %v", err)
	}
}

func TestReconnectChecker(t *testing.T) {
	t.Parallel()
	s, pieces := plainAnswer(t)
	all := execution(t, pieces, s.Expected.FinalText(), true)
	n := len(all)
	// all: 1 started, 2 block:started, 3..n-4 chunks, then stream:done, block:completed,
	// execution:completed (ids n-3, n-2, n-1) and [DONE] (frame n).
	first := all[:4] // dropped after two chunks: Last-Event-ID 4
	sel := func(idx ...int) [][]byte {
		var out [][]byte
		for _, i := range idx {
			out = append(out, all[i-1])
		}
		return out
	}
	rest := func(from int) []int {
		var out []int
		for i := from; i <= n; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		through string // X-Replay-Through
		resumed [][]byte
		want    []protocol.Rule
	}{
		// Chunks 5 and 6 went by while away (not replayed); the rest streams live.
		{"live after a gap", "6", sel(rest(7)...), nil},
		// The execution ended while away: the buffered events only, then [DONE].
		{"ended while away", strconv.Itoa(n - 1), sel(n-3, n-2, n-1, n), nil},
		// Buffered events the client had are sent again: allowed, not counted twice.
		{"buffered sent again", strconv.Itoa(n - 1), sel(append([]int{1, 2}, n-3, n-2, n-1, n)...), nil},
		// A chunk of the gap replayed.
		{"chunk replayed", "6", sel(rest(5)...), []protocol.Rule{RReconnectLiveOnly}},
		// The chunks of the gap replayed after an execution that ended while away.
		{"chunks replayed at the end", strconv.Itoa(n - 1), sel(rest(5)...), []protocol.Rule{RReconnectLiveOnly}},
		// The buffered events of an execution that ended while away, dropped.
		{"replay dropped", strconv.Itoa(n - 1), sel(n), []protocol.Rule{RReconnectReplay}},
		// The terminal missing although the stream went on live: the execution's fault.
		{"no terminal live", "6", sel(append(rest(7)[:len(rest(7))-2], n)...), []protocol.Rule{protocol.RTerminal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ch protocol.Checker = NewChecker(s)
			observeAll(t, ch, first)
			ch.(protocol.ReconnectObserver).Reconnected("4", http.Header{HeaderReplayThrough: {tc.through}})
			observeAll(t, ch, tc.resumed)
			if got := dialecttest.SortedRules(ch.Finish(nil)); !slices.Equal(got, tc.want) {
				t.Errorf("rules %v, want %v", got, tc.want)
			}
		})
	}
}
