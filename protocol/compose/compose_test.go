package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// relayOptions vary the conforming stream.
type relayOptions struct {
	// stopAfterChunks ends the run with stopped after this many text frames (0: never).
	stopAfterChunks int
	// hideSim drops the "_sim" member from tool_start inputs, as a runtime may.
	hideSim bool
}

// relay returns the frames a conforming compose runtime sends for script: text live (never
// reset), reasoning inside thinking_start/end, argument deltas then tool_start/tool_end, timing
// marks, the terminal, a receipt and [DONE], with heartbeat comments between turns.
func relay(t testing.TB, sc *scenarios.Script, opt relayOptions) []string {
	t.Helper()
	rec := &dialecttest.Recorder{}
	w := NewWriter(rec)
	must := dialecttest.Must(t)
	usage := protocol.Usage{}
	end := func(terminal func() error) []string {
		must(terminal())
		must(w.Receipt("rct_1", "1000"))
		must(w.Done())
		return rec.Frames
	}
	must(w.Timing(MarkModelStart, 3))
	chunks := 0
	for _, turn := range sc.Turns {
		usage.InputTokens += turn.InputTokens
		usage.OutputTokens += turn.OutputTokens
		if turn.HTTPStatus != 0 {
			return end(func() error { return w.Error(turn.ErrorMessage) })
		}
		thinking := false
		for i, step := range turn.Steps {
			if thinking && step.Kind != scenarios.StepThinking {
				must(w.ThinkingEnd())
				thinking = false
			}
			switch step.Kind {
			case scenarios.StepThinking:
				if !thinking {
					must(w.ThinkingStart("Thinking..."))
					thinking = true
				}
				must(w.Reasoning(step.Text))
			case scenarios.StepText:
				must(w.Text(step.Text))
				chunks++
				if chunks == opt.stopAfterChunks {
					return end(func() error { return w.Stopped(ReasonUserStop, usage) })
				}
			case scenarios.StepToolArgs:
				call := turn.ToolCalls[step.Tool]
				must(w.ToolArgsDelta(call.ID, call.Name, step.Text, step.Tool))
			}
			if i == turn.ErrorAfterStep {
				if thinking {
					must(w.ThinkingEnd())
				}
				return end(func() error { return w.Error(turn.ErrorMessage) })
			}
		}
		if thinking {
			must(w.ThinkingEnd())
		}
		if turn.ErrorAfterStep >= len(turn.Steps) {
			return end(func() error { return w.Error(turn.ErrorMessage) })
		}
		if len(turn.ToolCalls) == 0 {
			must(w.Timing(MarkDone, 1234))
			return end(func() error { return w.DoneEvent("mock-model", usage) })
		}
		for _, call := range turn.ToolCalls {
			input := json.RawMessage(call.Arguments)
			if opt.hideSim {
				var m map[string]any
				must(json.Unmarshal(input, &m))
				delete(m, "_sim")
				b, err := json.Marshal(m)
				must(err)
				input = b
			}
			must(w.ToolStart(call.Name, input, "<invoke>"+call.Name+"</invoke>", Display{Kind: "tool", Name: call.Name, Summary: call.Name}))
		}
		relaySwarm(t, w, turn.Swarm, []string{relayRunID}) // swarm_test.go
		for _, call := range turn.ToolCalls {
			ok := call.Outcome == scenarios.OutcomeSuccess
			must(w.ToolEnd(call.Name, ok, call.Result, "done", Display{Kind: "tool", Name: call.Name, Summary: "done"}))
		}
		must(w.Ping())
	}
	t.Fatalf("script %s has no final turn", sc.Scenario)
	return nil
}

// check judges frames as a client that sent no stop request.
func check(t testing.TB, frames []string, s *protocol.Session) []protocol.Violation {
	t.Helper()
	return checkStopped(t, frames, s, false)
}

// checkStopped is check for a client that sent a stop request (stopped) before the frames: a
// stop request is known at once, unlike an abort.
func checkStopped(t testing.TB, frames []string, s *protocol.Session, stopped bool) []protocol.Violation {
	t.Helper()
	return dialecttest.Check(t, frames, s, func() protocol.Checker {
		c := NewChecker(s)
		if stopped {
			c.StopSent()
		}
		return c
	})
}

func TestConformingStreamsHaveNoViolations(t *testing.T) {
	t.Parallel()
	dialecttest.EachScript(t, func(sc *scenarios.Script, label string) {
		if sc.Expected().EndsByTool() {
			return // a Sim pause or execution timeout: compose has no such terminal
		}
		for _, opt := range []relayOptions{{}, {hideSim: true}} {
			dialecttest.NoViolations(t, fmt.Sprintf("%s %+v", label, opt), relay(t, sc, opt), func(frames []string, aborted bool) []protocol.Violation {
				s := dialecttest.Session(sc)
				s.Aborted = aborted
				return check(t, frames, s)
			})
		}
		// A stop request honoured mid-answer ends with stopped; one that came too late (the
		// run finished first) legitimately ends with done.
		for _, stopAt := range []int{3, 1 << 20} {
			frames := relay(t, sc, relayOptions{stopAfterChunks: stopAt})
			if vs := checkStopped(t, frames, dialecttest.Session(sc), true); len(vs) != 0 {
				t.Errorf("%s stopped after %d chunks: unexpected violations %v\nframes:\n%s", label, stopAt, vs, strings.Join(frames, ""))
			}
		}
	})
}

const (
	text       = `"choices"`
	toolStart  = `"type":"tool_start"`
	toolEnd    = `"type":"tool_end"`
	argsDelta  = `"type":"tool_args_delta"`
	reasoning  = `"type":"reasoning_delta"`
	doneEvent  = `"type":"done"`
	errorEvent = `"type":"error"`
	receipt    = "event: receipt"
)

func TestBrokenStreamsReportTheirRule(t *testing.T) {
	t.Parallel()
	stopped := relayOptions{stopAfterChunks: 5}
	cases := []struct {
		name     string
		scenario string
		opt      relayOptions
		stopped  bool
		aborted  bool
		edit     func(t *testing.T, f []string) []string
		want     []protocol.Rule
	}{
		// One text delta altered.
		{"wrong text", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, dialecttest.Index(t, f, text, 2), dialecttest.Raw(`{"choices":[{"delta":{"content":" WRONG"}}]}`))
		}, []protocol.Rule{RAnswer}},
		// A text delta lost: the answer ends short.
		{"text missing", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, len(f)-5) // the last text delta before timing, done, receipt, [DONE]
		}, []protocol.Rule{RAnswer}},
		// Thinking text streamed as answer text.
		{"reasoning as text", "thinking-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, reasoning, 0)
			var d struct{ Delta string }
			if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(f[i]), "data: ")), &d); err != nil {
				t.Fatal(err)
			}
			return dialecttest.Insert(f, dialecttest.Index(t, f, text, 0), dialecttest.Raw(`{"choices":[{"delta":{"content":`+string(jsonwire.AppendString(nil, d.Delta))+`}}]}`))
		}, []protocol.Rule{RAnswer}},
		// A piece of the arguments altered.
		{"wrong args", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, argsDelta, 0)
			return dialecttest.Insert(f, i+1, dialecttest.Raw(`{"type":"tool_args_delta","id":"`+dialecttest.Script(t, "preamble-tool", 1).Turns[0].ToolCalls[0].ID+`","toolName":"get_weather","argsDelta":" ","index":0}`),
				dialecttest.Raw(`{"type":"tool_args_delta","id":"`+dialecttest.Script(t, "preamble-tool", 1).Turns[0].ToolCalls[0].ID+`","toolName":"get_weather","argsDelta":"x","index":0}`))
		}, []protocol.Rule{RArgs}},
		// tool_start input differs from the streamed arguments.
		{"input differs", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, toolStart, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"city":"Paris"`, `"city":"Lyon"`, 1))
		}, []protocol.Rule{RArgs}},
		// No argument deltas at all for a scripted call.
		{"args missing", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			var out []string
			for _, fr := range f {
				if !strings.Contains(fr, argsDelta) {
					out = append(out, fr)
				}
			}
			return out
		}, []protocol.Rule{RArgs}},
		// A tool never settles.
		{"tool end dropped", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, toolEnd, 0))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// A tool_end names another tool.
		{"tool end wrong name", "preamble-tool", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, toolEnd, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"toolName":"get_weather"`, `"toolName":"other"`, 1))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// A failed tool reported as a success.
		{"tool outcome wrong", "tool-error", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, toolEnd, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"failed":true`, `"failed":false`, 1))
		}, []protocol.Rule{protocol.RToolLifecycle}},
		// thinking_end lost.
		{"thinking unbalanced", "thinking-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"type":"thinking_end"`, 0))
		}, []protocol.Rule{RThinking}},
		// Two thinking_start in a row.
		{"thinking started twice", "thinking-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"thinking_start"`, 0)
			return dialecttest.Insert(f, i+1, f[i])
		}, []protocol.Rule{RThinking}},
		// Reasoning text altered.
		{"reasoning altered", "thinking-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, dialecttest.Index(t, f, reasoning, 1), dialecttest.Raw(`{"type":"reasoning_delta","delta":" bogus"}`))
		}, []protocol.Rule{RThinking}},
		// stopped then done (runtime fault double-terminal).
		{"stopped then done", "stop-mid-answer", stopped, true, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.Index(t, f, receipt, 0), dialecttest.Raw(`{"type":"done","model":"m","usage":{}}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// done although the stop request was honoured mid-answer.
		{"done after stop", "stop-mid-answer", stopped, true, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"type":"stopped"`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"type":"done","model":"m","usage":{}}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// stopped without any stop request.
		{"stopped unasked", "plain-answer", relayOptions{stopAfterChunks: 3}, false, false, nil, []protocol.Rule{protocol.RTerminal}},
		// done although the provider fails.
		{"done instead of error", "provider-error-midstream", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, dialecttest.Index(t, f, errorEvent, 0), dialecttest.Raw(`{"type":"done","model":"m","usage":{}}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// Two receipts.
		{"two receipts", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, receipt, 0)
			return dialecttest.Insert(f, i, f[i])
		}, []protocol.Rule{protocol.RTerminal}},
		// A receipt before the terminal.
		{"receipt first", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			r := f[dialecttest.Index(t, f, receipt, 0)]
			f = dialecttest.Remove(f, dialecttest.Index(t, f, receipt, 0))
			return dialecttest.Insert(f, 1, r)
		}, []protocol.Rule{protocol.RTerminal}},
		// Text after the terminal.
		{"text after terminal", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.Index(t, f, doneEvent, 0)+1, dialecttest.Raw(`{"choices":[{"delta":{"content":""}}]}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// The stream ends without [DONE] (runtime fault missing-done).
		{"missing done", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return f[:len(f)-1]
		}, []protocol.Rule{protocol.RTerminal}},
		// Something after [DONE].
		{"frame after done", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return append(append([]string(nil), f...), dialecttest.Raw(`{"type":"timing","mark":"done","elapsedMs":1}`))
		}, []protocol.Rule{protocol.RTerminal}},
		// Not JSON.
		{"garbage frame", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"choices":[`))
		}, []protocol.Rule{protocol.RFraming}},
		// A type the protocol does not have.
		{"unknown type", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, dialecttest.Raw(`{"type":"sparkle"}`))
		}, []protocol.Rule{protocol.RFraming}},
		// A named event other than the receipt.
		{"unknown named event", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1, "event: surprise\ndata: {}\n\n")
		}, []protocol.Rule{protocol.RFraming}},
		// The seed's other event families are accepted as they are (a task of a plan this stream
		// never proposed, a conclave write without a version; plan.go's rules: plan_test.go;
		// swarm frames are judged: swarm_test.go).
		{"seed events", "plain-answer", relayOptions{}, false, false, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, 1,
				dialecttest.Raw(`{"type":"trace","source":"model","stage":"execute"}`),
				dialecttest.Raw(`{"type":"conclave","action":"write","key":"plan.md"}`),
				dialecttest.Raw(`{"type":"task.heartbeat","taskId":"t1"}`))
		}, nil},
		// An aborted stream whose text so far is wrong.
		{"aborted with wrong text", "abort-mid-answer", relayOptions{}, false, true, func(t *testing.T, f []string) []string {
			return []string{f[0], dialecttest.Raw(`{"choices":[{"delta":{"content":"WRONG"}}]}`)}
		}, []protocol.Rule{RAnswer}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantEdited(t, tc.scenario, tc.opt, tc.edit, func(s *protocol.Session) { s.Aborted = tc.aborted }, tc.stopped, tc.want)
		})
	}
}

// wantEdited judges scenario's conforming stream (relayed with opt), edited by edit when set,
// against its session set up by setup: exactly want breaks.
func wantEdited(t *testing.T, scenario string, opt relayOptions, edit func(*testing.T, []string) []string, setup func(*protocol.Session), stopped bool, want []protocol.Rule) {
	sc := dialecttest.Script(t, scenario, 1)
	frames := relay(t, sc, opt)
	if edit != nil {
		frames = edit(t, frames)
	}
	s := dialecttest.Session(sc)
	setup(s)
	dialecttest.WantRules(t, checkStopped(t, frames, s, stopped), want, frames)
}

func TestWriterGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	display := Display{Kind: "search", Name: "general", Summary: "latest bitcoin news"}
	for i, err := range []error{
		w.Timing(MarkModelStart, 497),
		w.ThinkingStart("Thinking..."),
		w.Reasoning("Let me think…"),
		w.ThinkingEnd(),
		w.Text("Hel"),
		w.Text(""),
		w.Text("lo \"there\"\n"),
		w.ToolArgsDelta("call_1", "search_call", `{"query":"bit`, 0),
		w.ToolArgsDelta("call_1", "search_call", `coin"}`, 0),
		w.ToolStart("search_call", json.RawMessage("{\n  \"query\": \"bitcoin\"\n}"), "<invoke>search_call</invoke>", display),
		w.ToolEnd("search_call", false, "timeout", "Search failed", display),
		w.Ping(),
		w.DoneEvent("gpt-4o", protocol.Usage{InputTokens: 352, OutputTokens: 207}),
		w.Stopped(ReasonUserStop, protocol.Usage{InputTokens: 100, OutputTokens: 50}),
		w.Error("Model timed out"),
		w.Receipt("rct_1", "1000000"),
		w.Raw([]byte("{\"type\":\"done\"")),
		w.Done(),
	} {
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	if err := w.ToolStart("x", json.RawMessage(`{"broken"`), "", Display{}); err == nil {
		t.Error("ToolStart with invalid input JSON succeeded")
	}
	golden.Check(t, "testdata/writer.golden", buf.Bytes())
}

func TestRequestsAndHeaders(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, path string
		body         map[string]string
	}
	got := make(chan seen, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("%s body: %v", r.URL.Path, err)
		}
		got <- seen{r.Method, r.URL.Path, body}
		SetResponseHeaders(w.Header(), "run-42")
	}))
	t.Cleanup(srv.Close)
	d := NewClient()
	s := &protocol.Session{ID: "s1", Target: "agent-7", Input: "hello"}
	req, err := d.NewRequest(context.Background(), srv.URL, s)
	resp := dialecttest.Do(t, srv.Client(), req, err)
	r := <-got
	if r.method != http.MethodPost || r.path != "/agent/agent-7/stream" || r.body["message"] != "hello" || r.body["threadId"] != "s1" {
		t.Errorf("stream request %+v", r)
	}
	if vs := d.CheckHeaders(resp.Header, s); len(vs) != 0 {
		t.Errorf("header violations %v", vs)
	}
	stop, err := d.NewStopRequest(context.Background(), srv.URL, s, resp)
	dialecttest.Do(t, srv.Client(), stop, err)
	if r := <-got; r.method != http.MethodPost || r.path != "/agent/agent-7/runs/run-42/stop" {
		t.Errorf("stop request %+v", r)
	}
	// Without the run id header there is nothing to stop, and the headers are judged wrong.
	bare := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}}
	if _, err := d.NewStopRequest(context.Background(), srv.URL, s, bare); err == nil || !strings.Contains(err.Error(), RunIDHeader) {
		t.Errorf("stop without run id: err %v, want one naming %s", err, RunIDHeader)
	}
	if vs := d.CheckHeaders(bare.Header, s); len(vs) != 1 || vs[0].Rule != protocol.RHeaders {
		t.Errorf("missing run id: violations %v, want one R-headers", vs)
	}
}

func FuzzChecker(f *testing.F) {
	sc := dialecttest.Script(f, "preamble-tool", 1)
	f.Add([]byte(strings.Join(relay(f, sc, relayOptions{}), "")), false, false)
	f.Add([]byte("data: {\"type\":\"tool_end\",\"toolName\":\"x\"}\n\nevent: receipt\ndata: 1\n\ndata: [DONE]\n\n"), true, true)
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\ndata: {\"type\":\"tool_start\",\"input\":[}\n\n"), false, true)
	exp := sc.Expected()
	f.Fuzz(func(t *testing.T, stream []byte, stopped, aborted bool) {
		c := NewChecker(&protocol.Session{Expected: exp, Aborted: aborted})
		if stopped {
			c.StopSent()
		}
		dialecttest.Judge(t, stream, c, nil)
	})
}

func BenchmarkWriterText(b *testing.B) {
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Text(" token"); err != nil {
			b.Fatal(err)
		}
	}
}

// The fast path must reach exactly the verdict of the general path, frame by frame.
func FuzzFastPathAgrees(f *testing.F) {
	expected := dialecttest.FastPathCorpus(f, []string{"tool-chain", "thinking-answer", "parallel-tools"}, func(sc *scenarios.Script) []string {
		return relay(f, sc, relayOptions{})
	})
	f.Add([]byte("data: {\"type\":\"tool_args_delta\",\"id\":\"c\",\"toolName\":\"t\",\"argsDelta\":\"{\\\"a\\u0022\",\"index\":01}\n\n"), "tool-chain")
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"a\\tb\\\"\"}}]}\n\ndata: {\"type\":\"reasoning_delta\",\"delta\":\"\\/x\"}\n\n"), "thinking-answer")
	// The real-runtime shape: id and toolName on the first delta only, then index-only pieces.
	f.Add([]byte("data: {\"type\":\"tool_args_delta\",\"id\":\"c\",\"toolName\":\"t\",\"index\":0}\n\n"+
		"data: {\"type\":\"tool_args_delta\",\"argsDelta\":\"{\\\"a\",\"index\":0}\n\n"+
		"data: {\"type\":\"tool_args_delta\",\"argsDelta\":\"\",\"index\":1}\n\n"), "parallel-tools")
	f.Fuzz(func(t *testing.T, stream []byte, name string) {
		exp, ok := expected[name]
		if !ok {
			return
		}
		for _, noTruth := range []bool{false, true} { // without ground truth the fast path takes any text
			s := &protocol.Session{Expected: exp, NoGroundTruth: noTruth}
			fast, general := NewChecker(s), NewChecker(s)
			general.generalOnly = true
			dialecttest.FastPathAgrees(t, stream, fast, general)
		}
	})
}

func TestFastPathTaken(t *testing.T) {
	t.Parallel()
	sc := dialecttest.Script(t, "tool-chain", 1)
	c := NewChecker(dialecttest.Session(sc))
	cases := []struct {
		frame string
		kind  protocol.FrameKind
	}{
		{`{"type":"reasoning_delta","delta":"` + sc.Turns[0].Steps[0].Text + `"}`, protocol.FrameThinking},                   // the script's first thinking piece
		{`{"type":"tool_args_delta","id":"call_x","toolName":"search","argsDelta":"{\"q\n","index":0}`, protocol.FrameOther}, // escapes decoded
	}
	for _, tc := range cases {
		obs, ok := c.fastPath([]byte(tc.frame))
		if !ok || obs.Kind != tc.kind {
			t.Errorf("fastPath(%s) = %+v, %t; want kind %d on the fast path", tc.frame, obs, ok, tc.kind)
		}
	}
	if got := string(c.calls[0].args); got != "{\"q\n" {
		t.Errorf("args %q, want the decoded piece", got)
	}
}

// BenchmarkCheckerText measures judging one text delta, the checker's hot path.
func BenchmarkCheckerText(b *testing.B) {
	sc := dialecttest.Script(b, "long-answer", 1)
	var pieces [][]byte
	for _, st := range sc.Turns[len(sc.Turns)-1].Steps {
		if st.Kind == scenarios.StepText {
			pieces = append(pieces, []byte(`{"choices":[{"delta":{"content":`+string(jsonwire.AppendString(nil, st.Text))+`}}]}`))
		}
	}
	s := &protocol.Session{Expected: sc.Expected()}
	c := NewChecker(s)
	var ev sse.Event
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(pieces) {
			c, i = NewChecker(s), 0
		}
		ev.Data = pieces[i]
		if c.Observe(&ev).Kind != protocol.FrameAnswer {
			b.Fatal("not an answer frame")
		}
		i++
	}
}

// BenchmarkCheckerStream judges whole conforming streams (reasoning, argument deltas, tools,
// terminal, receipt) and reports the cost per frame, the figure behind the load generator's
// CPU per received frame.
func BenchmarkCheckerStream(b *testing.B) {
	for _, name := range []string{"thinking-answer", "tool-chain", "long-answer"} {
		b.Run(name, func(b *testing.B) {
			benchStream(b, dialecttest.Script(b, name, 1))
		})
	}
}

// benchStream judges sc's whole conforming stream per op and reports ns/frame and frames/stream.
func benchStream(b *testing.B, sc *scenarios.Script) {
	events := dialecttest.DecodeAll(b, relay(b, sc, relayOptions{}))
	s := dialecttest.Session(sc)
	b.ReportAllocs()
	for b.Loop() {
		c := NewChecker(s)
		for i := range events {
			c.Observe(&events[i])
		}
		if vs := c.Finish(nil); len(vs) != 0 {
			b.Fatal(vs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/frame")
	b.ReportMetric(float64(len(events)), "frames/stream")
}
