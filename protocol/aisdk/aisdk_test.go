package aisdk

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// session is the protocol.Session the load generator would build for sc at seed.
func session(sc *scenarios.Scenario, seed uint64) *protocol.Session {
	id := "t-" + sc.Name
	return &protocol.Session{
		ID:       id,
		Input:    scenarios.Directive{Scenario: sc.Name, Seed: seed, Session: id}.String() + " " + sc.Prompt,
		Expected: sc.Render(seed).Expected(),
	}
}

// play drives one stream of s through d against the route at baseURL as the load generator
// does, and returns every violation, headers included.
func play(t *testing.T, d *Dialect, baseURL string, s *protocol.Session) []protocol.Violation {
	t.Helper()
	v, _ := playCounting(t, d, baseURL, s)
	return v
}

// playCounting is play that also sums the observations' token counts.
func playCounting(t *testing.T, d *Dialect, baseURL string, s *protocol.Session) ([]protocol.Violation, int) {
	t.Helper()
	tokens := 0
	req, err := d.NewRequest(context.Background(), baseURL, s)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d: %s", resp.StatusCode, body)
	}
	v := d.CheckHeaders(resp.Header, s)
	c := d.NewChecker(s)
	dec := sse.NewDecoder(resp.Body)
	var ev sse.Event
	var streamErr error
	for {
		if err := dec.Next(&ev); err != nil {
			if !errors.Is(err, io.EOF) {
				streamErr = err
			}
			break
		}
		tokens += c.Observe(&ev).Tokens
	}
	return append(v, c.Finish(streamErr)...), tokens
}

// TestLibraryPasses: every embedded scenario, streamed as a streamText route streams it, has no
// violation, against the script and without it, and with reasoning forwarded or not.
func TestLibraryPasses(t *testing.T) {
	t.Parallel()
	lib := scenarios.Embedded()
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		if sc.Render(1).Expected().EndsByTool() {
			continue // a Sim pause or execution timeout: no streamText route scripts them
		}
		for _, seed := range []uint64{1, 7} {
			for _, tc := range []struct {
				name string
				b    breakage
				opts Options
			}{
				// The interop route: @ai-sdk/openai's chat model drops reasoning_content.
				{"no reasoning", breakNone, Options{NoReasoning: true}},
				// A route on a provider adapter that forwards reasoning.
				{"reasoning", breakReasoning, Options{}},
				// Structure only.
				{"no ground truth", breakNone, Options{NoGroundTruth: true}},
			} {
				srv, _ := route(t, sc, seed, tc.b)
				v, tokens := playCounting(t, New(tc.opts), srv.URL, session(sc, seed))
				if len(v) != 0 {
					t.Errorf("%s seed %d, %s: %v", name, seed, tc.name, v)
				}
				// Every scripted thinking and text token is counted once (token metrics),
				// when the route forwards reasoning.
				if want := scriptedTokens(sc.Render(seed)); tc.b == breakReasoning && tokens != want {
					t.Errorf("%s seed %d, %s: observations counted %d tokens, the script streams %d", name, seed, tc.name, tokens, want)
				}
			}
		}
	}
}

// TestBreakages: each breakage of the test route makes its rule fail and nothing unrelated;
// without ground truth only the structural rules remain.
func TestBreakages(t *testing.T) {
	t.Parallel()
	lib := scenarios.Embedded()
	for _, tc := range []struct {
		b        breakage
		scenario string
		opts     Options
		want     []protocol.Rule
		// structural is what remains with NoGroundTruth.
		structural []protocol.Rule
	}{
		// The stream marker header missing.
		{breakHeader, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{protocol.RHeaders}, []protocol.Rule{protocol.RHeaders}},
		// A text-delta before its text-start.
		{breakDeltaBeforeStart, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{RParts}, []protocol.Rule{RParts}},
		// A text-end repeated.
		{breakClosedTwice, "preamble-tool", Options{NoReasoning: true}, []protocol.Rule{RParts}, []protocol.Rule{RParts}},
		// A text part never ended.
		{breakUnclosed, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{RParts}, []protocol.Rule{RParts}},
		// A tool-input-delta before its tool-input-start.
		{breakToolDeltaFirst, "preamble-tool", Options{NoReasoning: true}, []protocol.Rule{RParts}, []protocol.Rule{RParts}},
		// tool-input-available with an input the deltas did not assemble (and not the script's).
		{breakInputVsDeltas, "preamble-tool", Options{NoReasoning: true}, []protocol.Rule{RParts, RTool}, []protocol.Rule{RParts}},
		// Deltas and input agree with each other but not with the script.
		{breakToolInput, "parallel-tools", Options{NoReasoning: true}, []protocol.Rule{RTool}, nil},
		// A tool scripted to fail settles as a success.
		{breakToolOutcome, "tool-error", Options{NoReasoning: true}, []protocol.Rule{RTool}, nil},
		// A text delta that is not the script's.
		{breakText, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{RText}, nil},
		// Reasoning forwarded to a dialect told the route sends none.
		{breakReasoning, "thinking-answer", Options{NoReasoning: true}, []protocol.Rule{RText}, nil},
		// Reasoning expected (the default) but not forwarded: incomplete.
		{breakNone, "thinking-answer", Options{}, []protocol.Rule{RText}, nil},
		// finish twice.
		{breakTwoTerminals, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{protocol.RTerminal}, []protocol.Rule{protocol.RTerminal}},
		// No [DONE] at the end.
		{breakMissingDone, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{protocol.RTerminal}, []protocol.Rule{protocol.RTerminal}},
		// A route that does not run the tool loop: R-terminal alone, not the missing turns.
		{breakStopLoop, "tool-chain", Options{NoReasoning: true}, []protocol.Rule{protocol.RTerminal}, nil},
		// A part type the SDK's schema does not have.
		{breakUnknownType, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{protocol.RFraming}, []protocol.Rule{protocol.RFraming}},
		// A part that is not JSON.
		{breakNotJSON, "plain-answer", Options{NoReasoning: true}, []protocol.Rule{protocol.RFraming}, []protocol.Rule{protocol.RFraming}},
		// data-*, custom, message-metadata and source parts are allowed.
		{breakExtraParts, "preamble-tool", Options{NoReasoning: true}, nil, nil},
	} {
		sc, ok := lib.Get(tc.scenario)
		if !ok {
			t.Fatalf("no scenario %s", tc.scenario)
		}
		srv, ok := route(t, sc, 3, tc.b)
		if !ok {
			t.Fatalf("%s: scenario %s has nothing to break", tc.b, tc.scenario)
		}
		v := play(t, New(tc.opts), srv.URL, session(sc, 3))
		if got := dialecttest.SortedRules(v); !slices.Equal(got, sortedRules(tc.want)) {
			t.Errorf("%s on %s: rules %v, want %v (%v)", tc.b, tc.scenario, got, tc.want, v)
		}
		tc.opts.NoGroundTruth = true
		v = play(t, New(tc.opts), srv.URL, session(sc, 3))
		if got := dialecttest.SortedRules(v); !slices.Equal(got, sortedRules(tc.structural)) {
			t.Errorf("%s on %s without ground truth: rules %v, want %v (%v)", tc.b, tc.scenario, got, tc.structural, v)
		}
	}
}

func sortedRules(r []protocol.Rule) []protocol.Rule {
	r = slices.Clone(r)
	slices.Sort(r)
	return r
}

// observeAll feeds frames (data payloads) to a checker for s and returns Finish's verdict.
func observeAll(s *protocol.Session, opts Options, frames []string, aborted bool) []protocol.Violation {
	c := NewChecker(s, opts)
	for _, f := range frames {
		c.Observe(&sse.Event{Data: []byte(f)})
	}
	s.Aborted = aborted
	return c.Finish(nil)
}

// TestPartRules: the cases of R-aisdk-parts, R-terminal and R-framing the route's breakages do
// not reach, each with the rule it breaks (nil: allowed).
func TestPartRules(t *testing.T) {
	t.Parallel()
	exp := dialecttest.Script(t, "plain-answer", 1).Expected()
	text := exp.Turns[0].Text
	cut := strings.IndexByte(text, ' ') + 1 // a piece boundary on a rune boundary
	start, end := part("type", "finish"), "[DONE]"
	for _, tc := range []struct {
		name   string
		frames []string
		want   protocol.Rule
	}{
		// The whole answer in one part, without start or steps (a createUIMessageStream route).
		{"minimal", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, ""},
		// An id reused after its part ended (providers number parts per step).
		{"id reused after end", []string{part("type", "text-start", "id", "0"), part("type", "text-delta", "id", "0", "delta", text[:cut]), part("type", "text-end", "id", "0"),
			part("type", "text-start", "id", "0"), part("type", "text-delta", "id", "0", "delta", text[cut:]), part("type", "text-end", "id", "0"), start, end}, ""},
		// An id opened again while open.
		{"reopened", []string{part("type", "text-start", "id", "a"), part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, RParts},
		// start not first.
		{"late start", []string{part("type", "text-start", "id", "a"), part("type", "start"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, RParts},
		// finish-step without start-step.
		{"finish-step alone", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), part("type", "finish-step"), start, end}, RParts},
		// A tool output for a call whose input never came.
		{"output without input", []string{part("type", "tool-output-available", "toolCallId", "c1", "output", "x"), part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, RParts},
		// A text delta without a delta field.
		{"delta missing", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, protocol.RFraming},
		// Content after finish.
		{"after finish", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, part("type", "text-start", "id", "b"), end}, protocol.RTerminal},
		// finish then abort: two terminals.
		{"finish then abort", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, part("type", "abort"), end}, protocol.RTerminal},
		// An error part although the script does not fail: the session's in_band_error outcome
		// (Observation.Error), not a violation (TestUnscriptedErrorIsTheOutcome).
		{"unscripted error", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), part("type", "error", "errorText", "boom"), start, end}, ""},
		// The JSON string "[DONE]" instead of the raw marker.
		{"quoted done", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, `"[DONE]"`}, protocol.RFraming},
		// reset-step discards the step: the retried step's text is judged from the step start.
		{"reset-step", []string{part("type", "start-step"), part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text[:cut]), part("type", "reset-step"),
			part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), part("type", "finish-step"), start, end}, ""},
		// reset-step without steps rewinds to the start of the stream.
		{"reset-step without steps", []string{part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text[:cut]), part("type", "reset-step"),
			part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text), part("type", "text-end", "id", "a"), start, end}, ""},
		// After reset-step the retried step must still be the script's.
		{"reset-step then wrong", []string{part("type", "start-step"), part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", text[:cut]), part("type", "reset-step"),
			part("type", "text-start", "id", "a"), part("type", "text-delta", "id", "a", "delta", "x"+text), part("type", "text-end", "id", "a"), part("type", "finish-step"), start, end}, RText},
	} {
		v := observeAll(&protocol.Session{Expected: exp}, Options{NoReasoning: true}, tc.frames, false)
		var want []protocol.Rule
		if tc.want != "" {
			want = []protocol.Rule{tc.want}
		}
		if got := dialecttest.SortedRules(v); !slices.Equal(got, want) {
			t.Errorf("%s: rules %v, want %v (%v)", tc.name, got, want, v)
		}
	}
}

// TestToolOutputs: preliminary outputs do not settle a call; two final outputs are wrong.
func TestToolOutputs(t *testing.T) {
	t.Parallel()
	script := dialecttest.Script(t, "preamble-tool", 2)
	clean := scriptParts(script, false, false)
	i := index(clean, `"tool-output-available"`)
	for _, tc := range []struct {
		name  string
		extra string
		want  []protocol.Rule
	}{
		// A preliminary output before the final one (a tool with an async generator execute).
		{"preliminary first", strings.Replace(clean[i], `"output":`, `"preliminary":true,"output":`, 1), nil},
		// The final output twice.
		{"final twice", clean[i], []protocol.Rule{RParts}},
	} {
		frames := slices.Clone(clean)
		if tc.name == "final twice" {
			frames = slices.Insert(frames, i+1, tc.extra)
		} else {
			frames = slices.Insert(frames, i, tc.extra)
		}
		s := &protocol.Session{Expected: script.Expected()}
		if got := dialecttest.SortedRules(observeAll(s, Options{NoReasoning: true}, frames, false)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: rules %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAborted: a stream the client left is judged on what was seen: a prefix of the script
// passes, a wrong prefix still fails.
func TestAborted(t *testing.T) {
	t.Parallel()
	script := dialecttest.Script(t, "abort-mid-answer", 5)
	parts := scriptParts(script, false, false)
	prefix := parts[:len(parts)/2]
	if v := observeAll(&protocol.Session{Expected: script.Expected()}, Options{NoReasoning: true}, prefix, true); len(v) != 0 {
		t.Errorf("aborted prefix: %v", v)
	}
	if v := observeAll(&protocol.Session{Expected: script.Expected()}, Options{NoReasoning: true}, prefix, false); !slices.Equal(dialecttest.SortedRules(v), []protocol.Rule{protocol.RTerminal}) {
		t.Errorf("the same prefix not aborted: rules %v, want [R-terminal]", dialecttest.SortedRules(v))
	}
	wrong, _ := breakParts(slices.Clone(prefix), script, breakText)
	if got := dialecttest.SortedRules(observeAll(&protocol.Session{Expected: script.Expected()}, Options{NoReasoning: true}, wrong, true)); !slices.Equal(got, []protocol.Rule{RText}) {
		t.Errorf("aborted wrong prefix: rules %v, want [R-aisdk-text]", got)
	}
}

// TestRequestAndHeaders: the request is useChat's (checked by the test route on every stream),
// at the configured path; the headers are judged.
func TestRequestAndHeaders(t *testing.T) {
	t.Parallel()
	s := &protocol.Session{ID: "s1", Input: "[[streambench scenario=plain-answer seed=1]] hi \"there\""}
	req, err := New(Options{Path: "chat/x"}).NewRequest(context.Background(), "http://127.0.0.1:3000/", s)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.String() != "http://127.0.0.1:3000/chat/x" {
		t.Errorf("URL %s, want http://127.0.0.1:3000/chat/x", req.URL)
	}
	if err := checkBuiltRequest(req); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		n    int
	}{
		// What toUIMessageStreamResponse sends.
		{"sdk", http.Header{"Content-Type": {"text/event-stream"}, StreamHeader: {"v1"}}, 0},
		// A parameter on the content type is fine.
		{"charset", http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, StreamHeader: {"v1"}}, 0},
		// Another version of the stream.
		{"v2", http.Header{"Content-Type": {"text/event-stream"}, StreamHeader: {"v2"}}, 1},
		// A plain text stream (toTextStreamResponse).
		{"text stream", http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, 2},
	} {
		if got := New(Options{}).CheckHeaders(tc.h, s); len(got) != tc.n {
			t.Errorf("%s: %v, want %d violations", tc.name, got, tc.n)
		}
	}
}

// checkBuiltRequest runs the test route's request check on a built request (whose path is
// checked by the caller).
func checkBuiltRequest(req *http.Request) error {
	body, err := req.GetBody()
	if err != nil {
		return err
	}
	r := req.Clone(context.Background())
	r.Body = body
	r.URL.Path = DefaultPath
	return checkChatRequest(r)
}

// scriptedTokens is the thinking and text tokens of every turn the script streams.
func scriptedTokens(script *scenarios.Script) int {
	n := 0
	for _, turn := range script.Turns {
		for _, st := range turn.Steps {
			if st.Kind == scenarios.StepThinking || st.Kind == scenarios.StepText {
				n += st.Tokens
			}
		}
	}
	return n
}
