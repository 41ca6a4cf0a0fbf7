package simcanvas

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/simchat"
)

// terminal writes a canvas terminal frame that continues a stream (its eventId after every
// relayed frame), then [DONE].
func terminal(t *testing.T, write func(w *Writer) error) []string {
	t.Helper()
	rec := &dialecttest.Recorder{}
	w := NewWriter(rec, "exec-1", "openai-all")
	w.Clock = fixedClock()
	w.eventID = 1_000_000
	if err := write(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Done(); err != nil {
		t.Fatal(err)
	}
	return rec.Frames
}

// cancelledAt is the stream a client that cancelled after the first tool start sees, ending
// with the terminal write writes.
func cancelledAt(t *testing.T, f []string, write func(w *Writer) error) []string {
	cut := append([]string(nil), f[:dialecttest.Index(t, f, `"phase":"start"`, 0)+1]...)
	return append(cut, terminal(t, write)...)
}

// TestSeedRules: each Sim seed rule fails on a broken canvas stream (and only that rule), and a
// conforming stream of the same kind passes.
func TestSeedRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		scenario string
		nothink  bool // the client knows the workflow's model has no thinking
		stopped  bool // the client cancelled the execution (StopSent, Aborted)
		edit     func(t *testing.T, f []string) []string
		want     []protocol.Rule
	}{
		// The conforming paused execution.
		{"paused", "paused-for-input", false, false, nil, nil},
		// A paused execution reported as completed.
		{"paused reported as completed", "paused-for-input", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"status":"paused"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"status":"paused",`, "", 1))
		}, []protocol.Rule{protocol.RPaused}},
		// A completed execution reported as paused.
		{"paused though never scripted", "plain-answer", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"execution:completed"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"success":true,`, `"success":true,"status":"paused",`, 1))
		}, []protocol.Rule{protocol.RPaused}},
		// The preamble persisted in the block's output.
		{"preamble in block output", "preamble-tool", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"block:completed"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"content":"`, `"content":"Let me check the current weather in Paris for you.`, 1))
		}, []protocol.Rule{protocol.RFinalOutput}},
		// The conforming stream of a thinking workflow with thinking.
		{"thinking", "thinking-answer", false, false, nil, nil},
		// stream:thinking from a model without thinking.
		{"thinking from nothink model", "thinking-answer", true, false, nil, []protocol.Rule{protocol.RThinkingCapability}},
		// Without thinking frames the nothink workflow passes.
		{"nothink", "plain-answer", true, false, nil, nil},
		// The execution timeout fails the execution, naming it.
		{"timeout", "execution-timeout", false, false, nil, nil},
		// The timeout reported as a cancel (no cancel was sent): the rule alone, not R-terminal.
		{"timeout as cancelled", "execution-timeout", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"execution:error"`, 0)
			return append(f[:i:i], terminal(t, func(w *Writer) error { return w.ExecutionCancelled(time.Second) })...)
		}, []protocol.Rule{protocol.RCancelNotTimeout}},
		// The timeout's error that does not say so.
		{"timeout error unnamed", "execution-timeout", false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"execution:error"`, 0)
			return append(f[:i:i], terminal(t, func(w *Writer) error { return w.ExecutionError("something failed", time.Second) })...)
		}, []protocol.Rule{protocol.RCancelNotTimeout}},
		// A user cancel ends execution:cancelled.
		{"cancel", "stop-during-tool", false, true, func(t *testing.T, f []string) []string {
			return cancelledAt(t, f, func(w *Writer) error { return w.ExecutionCancelled(time.Second) })
		}, nil},
		// A user cancel reported as the execution timeout.
		{"cancel as timeout", "stop-during-tool", false, true, func(t *testing.T, f []string) []string {
			return cancelledAt(t, f, func(w *Writer) error { return w.ExecutionError("Execution timed out", time.Second) })
		}, []protocol.Rule{protocol.RCancelNotTimeout}},
		// The capped thinking passes; one more frame crosses the cap (a copy of the last one, so
		// its eventId repeats: R-framing as well).
		{"thinking at the cap", "thinking-over-cap", false, false, nil, nil},
		{"thinking over the cap", "thinking-over-cap", false, false, func(t *testing.T, f []string) []string {
			at := dialecttest.LastIndex(t, f, `"type":"stream:thinking"`)
			more := strings.Replace(f[at], `"text":"`, `"text":"more `, 1)
			return dialecttest.Insert(f, at+1, more)
		}, []protocol.Rule{protocol.RThinkingCap, protocol.RFraming}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := dialecttest.Script(t, tc.scenario, 1)
			frames := relay(t, sc)
			if tc.edit != nil {
				frames = tc.edit(t, frames)
			}
			s := dialecttest.Session(sc)
			s.Aborted = tc.stopped
			vs := dialecttest.Check(t, frames, s, func() protocol.Checker {
				c := NewChecker(s)
				c.noModelThinking = tc.nothink
				if tc.stopped {
					c.StopSent()
				}
				return c
			})
			dialecttest.WantRules(t, vs, tc.want, frames)
		})
	}
}

// TestCancelRequest: the client is a Stopper whose request names the execution of the
// response's X-Execution-Id, on the default or a configured path; without the header it is an
// error naming it.
func TestCancelRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts protocol.Options
		want string
	}{
		// The default route.
		{nil, "http://rt/api/workflows/wf-nothink-1/executions/exec_A/cancel"},
		// A runtime with its own route.
		{protocol.Options{"cancelPath": "/x/{workflow}/{execution}"}, "http://rt/x/wf-nothink-1/exec_A"},
	} {
		c, err := New().Configure("wf-nothink-1", tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.Sees(protocol.FrameThinking) {
			t.Error("a nothink workflow's client expects stream:thinking")
		}
		resp := &http.Response{Header: http.Header{ExecutionIDHeader: {"exec_A"}}}
		req, err := c.(protocol.Stopper).NewStopRequest(t.Context(), "http://rt", &protocol.Session{ID: "s", Target: "wf-nothink-1"}, resp)
		if err != nil || req.URL.String() != tc.want || req.Method != http.MethodPost {
			t.Errorf("cancel request %v %v, want POST %s", req, err, tc.want)
		}
		if _, err := c.(protocol.Stopper).NewStopRequest(t.Context(), "http://rt", &protocol.Session{ID: "s", Target: "wf-nothink-1"}, &http.Response{Header: http.Header{}}); err == nil || !strings.Contains(err.Error(), ExecutionIDHeader) {
			t.Errorf("without the header: %v", err)
		}
	}
	if _, err := New().Configure("wf", protocol.Options{"cancelPath": "/x/{nope}"}); err == nil || !strings.Contains(err.Error(), "cancelPath") {
		t.Errorf("bad cancelPath: %v", err)
	}
}

// TestThinkingCapCountsUTF16Units: R-thinking-cap counts stream:thinking text as Sim does, in
// UTF-16 code units (JavaScript string length), not bytes. The scripted thinking capped at
// 524,288 units holds multi-byte words, so it is more bytes than that, and passes; one unit
// more ("é", two bytes) fails.
func TestThinkingCapCountsUTF16Units(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "thinking-over-cap", 7)
	frames := relay(t, sc)
	var thinking strings.Builder
	for _, ev := range dialecttest.DecodeAll(t, frames) {
		var env struct {
			Type string `json:"type"`
			Data struct {
				Text string `json:"text"`
			} `json:"data"`
		}
		if json.Unmarshal(ev.Data, &env) == nil && env.Type == TypeThinking {
			thinking.WriteString(env.Data.Text)
		}
	}
	if units := simchat.UTF16Len(thinking.String()); units != simchat.ThinkingCapUnits || thinking.Len() <= units {
		t.Fatalf("relayed %d bytes = %d UTF-16 units of thinking, want %d units in more bytes", thinking.Len(), units, simchat.ThinkingCapUnits)
	}
	judge := func(frames []string) []protocol.Violation {
		s := dialecttest.Session(sc)
		return dialecttest.Check(t, frames, s, func() protocol.Checker { return NewChecker(s) })
	}
	dialecttest.WantRules(t, judge(frames), nil, frames[:3])
	at := dialecttest.LastIndex(t, frames, `"type":"stream:thinking"`)
	more := dialecttest.Replace(frames, at, strings.Replace(frames[at], `"text":"`, `"text":"é`, 1))
	dialecttest.WantRules(t, judge(more), []protocol.Rule{protocol.RThinkingCap}, more[:3])
}
