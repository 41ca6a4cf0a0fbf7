package simcanvas

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// fixedClock makes timestamps deterministic, one millisecond apart.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond)
		return t
	}
}

const block = "agent-1"

// relay returns the frames a conforming runtime sends a canvas client for script: everything
// flows (always opted in), live chunks with a chunk_reset per intermediate turn with text.
func relay(t testing.TB, sc *scenarios.Script) []string {
	t.Helper()
	rec := &dialecttest.Recorder{}
	w := NewWriter(rec, "exec-1", "openai-all")
	w.Clock = fixedClock()
	must := dialecttest.Must(t)
	fail := func(msg string) []string {
		must(w.ExecutionError(msg, time.Second))
		must(w.Done())
		return rec.Frames
	}
	must(w.ExecutionStarted(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	must(w.BlockStarted(block, "Agent", "agent", 1))
	var budget simchat.ThinkingBudget
	for _, turn := range sc.Turns {
		if turn.HTTPStatus != 0 {
			return fail(turn.ErrorMessage)
		}
		var text strings.Builder
		for i, step := range turn.Steps {
			switch step.Kind {
			case scenarios.StepThinking:
				if piece := budget.Admit(step.Text); piece != "" {
					must(w.Thinking(block, piece))
				}
			case scenarios.StepText:
				text.WriteString(step.Text)
				must(w.Chunk(block, step.Text))
			}
			if i == turn.ErrorAfterStep {
				return fail(turn.ErrorMessage)
			}
		}
		if turn.ErrorAfterStep >= len(turn.Steps) {
			return fail(turn.ErrorMessage)
		}
		if len(turn.ToolCalls) == 0 {
			must(w.StreamDone(block))
			must(w.BlockCompleted(block, map[string]string{"content": text.String()}, time.Second))
			must(w.ExecutionCompleted(map[string]string{"content": text.String()}, 2*time.Second))
			must(w.Done())
			return rec.Frames
		}
		if text.Len() > 0 {
			must(w.ChunkReset(block))
		}
		for _, call := range turn.ToolCalls {
			must(w.ToolStart(block, call.ID, call.Name))
		}
		for _, call := range turn.ToolCalls {
			must(w.ToolEnd(block, call.ID, call.Name, call.Outcome))
		}
		for _, call := range turn.ToolCalls {
			switch {
			case call.Pause:
				must(w.ExecutionPaused(map[string]string{"content": ""}, 2*time.Second))
				must(w.Done())
				return rec.Frames
			case call.TimesOut:
				return fail(scenarios.ExecutionTimeoutResult)
			}
		}
	}
	t.Fatalf("script %s has no final turn", sc.Scenario)
	return nil
}

// check judges frames as the load generator does, with a fresh checker for s.
func check(t testing.TB, frames []string, s *protocol.Session) []protocol.Violation {
	t.Helper()
	return dialecttest.Check(t, frames, s, func() protocol.Checker { return NewChecker(s) })
}

func TestConformingStreamsHaveNoViolations(t *testing.T) {
	t.Parallel()
	dialecttest.EachScript(t, func(sc *scenarios.Script, label string) {
		dialecttest.NoViolations(t, label, relay(t, sc), func(frames []string, aborted bool) []protocol.Violation {
			s := dialecttest.Session(sc)
			s.Aborted = aborted
			return check(t, frames, s)
		})
	})
}

// wrap wraps data the way the writer does, with the given event id.
func wrap(typ string, eventID int, data string) string {
	return `data: {"type":"` + typ + `","timestamp":"2026-01-02T03:04:05Z","executionId":"exec-1","workflowId":"openai-all","eventId":` +
		itoa(eventID) + `,"data":` + data + "}\n\n"
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestBrokenStreamsReportTheirRule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		scenario string
		aborted  bool
		edit     func(t *testing.T, f []string) []string
		want     []protocol.Rule
	}{
		// The final turn's text is retracted again.
		{"reset in final turn", "preamble-tool", false, func(t *testing.T, f []string) []string {
			final := dialecttest.Script(t, "preamble-tool", 1).Expected().FinalText()
			return dialecttest.Insert(f, dialecttest.Index(t, f, TypeStreamDone, 0), wrap(TypeChunkReset, 900, `{"blockId":"agent-1"}`),
				wrap(TypeChunk, 901, `{"blockId":"agent-1","chunk":`+string(jsonwire.AppendString(nil, final))+`}`))
		}, []protocol.Rule{protocol.RResetScope}},
		// The same without re-sending the text: the answer is gone.
		{"reset in final turn, not re-sent", "preamble-tool", false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.Index(t, f, TypeStreamDone, 0), wrap(TypeChunkReset, 900, `{"blockId":"agent-1"}`))
		}, []protocol.Rule{protocol.RResetScope, protocol.RConverge}},
		// The preamble is never retracted.
		{"missing reset", "preamble-tool", false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, TypeChunkReset, 0))
		}, []protocol.Rule{protocol.RConverge}},
		// Thinking text sent as a chunk.
		{"thinking leaked into chunk", "thinking-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeThinking, 0)
			return dialecttest.Replace(f, i, strings.Replace(strings.Replace(f[i], TypeThinking, TypeChunk, 1), `"text":`, `"chunk":`, 1))
		}, []protocol.Rule{protocol.RNoThinkingAnswer}},
		// A tool never settles.
		{"tool end dropped", "preamble-tool", false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"phase":"end"`, 0))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// Two terminals.
		{"double terminal", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeExecutionCompleted, 0)
			return dialecttest.Insert(f, i+1, wrap(TypeExecutionError, 10_000, `{"error":"late","duration":1}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// The stream ends without [DONE].
		{"missing done", "plain-answer", false, func(t *testing.T, f []string) []string {
			return f[:len(f)-1]
		}, []protocol.Rule{protocol.RTerminal}},
		// A frame after [DONE].
		{"frame after done", "plain-answer", false, func(t *testing.T, f []string) []string {
			return append(append([]string(nil), f...), wrap(TypeChunk, 10_000, `{"blockId":"agent-1","chunk":"late"}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// A completed execution though the provider fails.
		{"completed instead of error", "provider-error-midstream", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeExecutionError, 0)
			done := strings.Replace(f[i], `"error":"upstream model crashed (scripted)"`, `"success":true,"output":{}`, 1)
			return dialecttest.Replace(f, i, strings.Replace(done, TypeExecutionError, TypeExecutionCompleted, 1))
		}, []protocol.Rule{protocol.RTerminal}},
		// A cancelled execution the client never asked for.
		{"cancelled without abort", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeExecutionCompleted, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], TypeExecutionCompleted, TypeExecutionCancelled, 1))
		}, []protocol.Rule{protocol.RTerminal}},
		// An aborting client may see the execution cancelled before it leaves.
		{"cancelled after abort", "abort-mid-answer", true, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeChunk, 3)
			return append(f[:i+1:i+1], wrap(TypeExecutionCancelled, 10_000, `{"duration":12}`), "data: [DONE]\n\n")
		}, nil},
		// The chat wire's quoted end marker.
		{"quoted done", "plain-answer", false, func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, len(f)-1, "data: \"[DONE]\"\n\n")
		}, []protocol.Rule{protocol.RFraming}},
		// eventId going backwards.
		{"eventId not increasing", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeChunk, 2)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"eventId":`, `"eventId":-`, 1))
		}, []protocol.Rule{protocol.RFraming}},
		// Thinking in "data" instead of "text".
		{"thinking field", "thinking-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeThinking, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"text":`, `"data":`, 1))
		}, []protocol.Rule{protocol.RFraming}},
		// An empty chunk (in place of block:started, keeping the eventId order): it adds no
		// text, and the canvas protocol does not forbid it.
		{"empty chunk", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeBlockStarted, 0)
			return dialecttest.Replace(f, i, strings.Replace(strings.Replace(f[i], TypeBlockStarted, TypeChunk, 1), `"blockName":`, `"chunk":"","blockName":`, 1))
		}, nil},
		// A chunk frame with no chunk at all does not decode as the dialect says.
		{"chunk without chunk", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeBlockStarted, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], TypeBlockStarted, TypeChunk, 1))
		}, []protocol.Rule{protocol.RFraming}},
		// Not JSON.
		{"garbage frame", "plain-answer", false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 2, "data: {\"type\":\n\n")
		}, []protocol.Rule{protocol.RFraming}},
		// An unknown event type.
		{"unknown type", "plain-answer", false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeChunk, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], TypeChunk, "stream:sparkle", 1))
		}, []protocol.Rule{protocol.RFraming, protocol.RConverge}},
		// An aborted stream whose text so far is wrong.
		{"aborted with wrong text", "abort-mid-answer", true, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, TypeChunk, 1)
			return dialecttest.Replace(f[:i+1], i, strings.Replace(f[i], `"chunk":"`, `"chunk":"WRONG`, 1))
		}, []protocol.Rule{protocol.RConverge}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := dialecttest.Script(t, tc.scenario, 1)
			frames := tc.edit(t, relay(t, sc))
			if tc.name != "eventId not increasing" {
				frames = renumber(frames)
			}
			s := dialecttest.Session(sc)
			s.Aborted = tc.aborted
			dialecttest.WantRules(t, check(t, frames, s), tc.want, frames)
		})
	}
}

var eventIDField = regexp.MustCompile(`"eventId":-?[0-9]+`)

// renumber gives edited frames consecutive event ids again, so an edit breaks only its rule.
func renumber(frames []string) []string {
	out := make([]string, len(frames))
	for i, f := range frames {
		out[i] = eventIDField.ReplaceAllString(f, `"eventId":`+itoa(i+1))
	}
	return out
}

func TestWriterGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf, "exec-1", "wf-1")
	w.Clock = fixedClock()
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, err := range []error{
		w.ExecutionStarted(start),
		w.BlockStarted("agent-1", "Agent", "agent", 1),
		w.Thinking("agent-1", "Let me think…"),
		w.Chunk("agent-1", "Hel"),
		w.Chunk("agent-1", ""),
		w.Chunk("agent-1", "lo \"there\"\n"),
		w.ChunkReset("agent-1"),
		w.ToolStart("agent-1", "call_1", "search"),
		w.ToolEnd("agent-1", "call_1", "search", scenarios.OutcomeCancelled),
		w.StreamDone("agent-1"),
		w.BlockCompleted("agent-1", map[string]string{"content": "Hello"}, 1500*time.Millisecond),
		w.ExecutionCompleted(map[string]string{"content": "Hello"}, 2*time.Second),
		w.ExecutionError("Model timed out", 3*time.Second),
		w.ExecutionCancelled(4 * time.Second),
		w.Raw([]byte(`{"broken"`)),
		w.Done(),
	} {
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if w.EventID() != 13 {
		t.Errorf("EventID = %d, want 13 envelopes", w.EventID())
	}
	golden.Check(t, "testdata/writer.golden", buf.Bytes())
}

func TestRequestAndHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	bodies := make(chan RequestBody, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b RequestBody
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			t.Errorf("body: %v", err)
		}
		got <- r
		bodies <- b
		SetResponseHeaders(w.Header())
	}))
	t.Cleanup(srv.Close)
	d, err := New().Configure("anthropic-none", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &protocol.Session{ID: "s1", Target: "anthropic-none", Input: "hello"}
	req, err := d.NewRequest(context.Background(), srv.URL+"/", s)
	resp := dialecttest.Do(t, srv.Client(), req, err)
	r, b := <-got, <-bodies
	if r.Method != http.MethodPost || r.URL.Path != "/api/workflows/anthropic-none/execute" || r.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("request %s %s Accept %q", r.Method, r.URL.Path, r.Header.Get("Accept"))
	}
	if b.Input == nil || *b.Input != "hello" || !b.Stream {
		t.Errorf("body %+v, want input and stream true", b)
	}
	if vs := d.CheckHeaders(resp.Header, s); len(vs) != 0 {
		t.Errorf("header violations %v", vs)
	}
	if vs := d.CheckHeaders(http.Header{"Content-Type": {"text/plain"}}, s); len(vs) != 1 || vs[0].Rule != protocol.RHeaders {
		t.Errorf("text/plain: violations %v, want one R-headers", vs)
	}
}

func FuzzChecker(f *testing.F) {
	sc := dialecttest.Script(f, "preamble-tool", 1)
	f.Add([]byte(strings.Join(relay(f, sc), "")), false)
	f.Add([]byte("data: {\"type\":\"stream:tool\",\"eventId\":1,\"data\":{\"phase\":\"end\"}}\n\ndata: [DONE]\n\ndata: x\n\n"), true)
	f.Add([]byte("data: {\"type\":\"stream:chunk\",\"data\":[1]}\n\ndata: {\"data\":null}\n\n"), false)
	exp := sc.Expected()
	f.Fuzz(func(t *testing.T, stream []byte, aborted bool) {
		c := NewChecker(&protocol.Session{Expected: exp, Aborted: aborted})
		dialecttest.Judge(t, stream, c, nil)
	})
}

func BenchmarkWriterChunk(b *testing.B) {
	w := NewWriter(io.Discard, "exec-0123456789", "openai-all")
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Chunk("agent-1", " token"); err != nil {
			b.Fatal(err)
		}
	}
}

// plainChunk must agree with encoding/json whenever it takes the fast path.
func FuzzPlainChunk(f *testing.F) {
	sc := dialecttest.Script(f, "plain-answer", 1)
	for _, fr := range relay(f, sc)[2:5] {
		f.Add([]byte(strings.TrimSuffix(strings.TrimPrefix(fr, "data: "), "\n\n")))
	}
	f.Add([]byte(`{"type":"stream:chunk","timestamp":"x","executionId":"e","workflowId":"w","eventId":012,"data":{"blockId":"b","chunk":"c"}}`))
	f.Add([]byte(`{"type":"stream:chunk","timestamp":"x","executionId":"e","workflowId":"w","eventId":12,"data":{"blockId":"b","chunk":"\u00e9"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, ok := plainChunk(data)
		if !ok {
			return
		}
		var e envelope
		var p payload
		if err := json.Unmarshal(data, &e); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
		}
		if err := json.Unmarshal(e.Data, &p); err != nil {
			t.Fatalf("fast path accepted %q, its data does not decode: %v", data, err)
		}
		if e.Type != TypeChunk || e.Timestamp != string(fr.timestamp) || e.ExecutionID != string(fr.executionID) ||
			e.WorkflowID != string(fr.workflowID) || e.EventID == nil || *e.EventID != fr.eventID ||
			p.BlockID != string(fr.blockID) || p.Chunk == nil || *p.Chunk != string(fr.chunk) {
			t.Fatalf("fast path read %+v from %q, encoding/json %+v %+v", fr, data, e, p)
		}
	})
}

func TestTimestamps(t *testing.T) {
	t.Parallel()
	c := NewChecker(&protocol.Session{})
	cases := []struct {
		ts   string
		want bool
	}{
		{"2026-01-02T03:04:05Z", true},            // parsed, and its second remembered
		{"2026-01-02T03:04:05.123Z", true},        // same second: suffix check only
		{"2026-01-02T03:04:05.12x4Z", false},      // not digits: parsed, rejected
		{"2026-01-02T03:04:05.1234567891Z", true}, // parsed: time.Parse takes any fraction length
		{"2026-01-02T03:04:06.5+01:00", true},     // another zone is parsed
		{"2026-02-30T03:04:05Z", false},           // no such day
		{"yesterday", false},
		{"", false},
	}
	for _, tc := range cases {
		if got := c.validTimestamp([]byte(tc.ts)); got != tc.want {
			t.Errorf("validTimestamp(%q) = %t, want %t", tc.ts, got, tc.want)
		}
	}
}

// BenchmarkCheckerChunk measures judging one stream:chunk envelope, the checker's hot path.
func BenchmarkCheckerChunk(b *testing.B) {
	sc := dialecttest.Script(b, "long-answer", 1)
	var frames [][]byte
	for _, fr := range relay(b, sc) {
		frames = append(frames, []byte(strings.TrimSuffix(strings.TrimPrefix(fr, "data: "), "\n\n")))
	}
	chunks := 0
	for _, fr := range frames {
		if bytes.Contains(fr, []byte(TypeChunk)) {
			chunks++
		}
	}
	s := &protocol.Session{Expected: sc.Expected()}
	var ev sse.Event
	b.ReportAllocs()
	for b.Loop() {
		c := NewChecker(s)
		for _, fr := range frames {
			ev.Data = fr
			c.Observe(&ev)
		}
		if vs := c.Finish(nil); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
	_ = chunks
}

// The fast paths must reach exactly the verdict of the general path, frame by frame.
func FuzzFastPathAgrees(f *testing.F) {
	expected := dialecttest.FastPathCorpus(f, []string{"tool-chain", "thinking-answer"}, func(sc *scenarios.Script) []string {
		return relay(f, sc)
	})
	f.Fuzz(func(t *testing.T, stream []byte, name string) {
		exp, ok := expected[name]
		if !ok {
			return
		}
		s := &protocol.Session{Expected: exp}
		fast, general := NewChecker(s), NewChecker(s)
		general.generalOnly = true
		dialecttest.FastPathAgrees(t, stream, fast, general)
	})
}
