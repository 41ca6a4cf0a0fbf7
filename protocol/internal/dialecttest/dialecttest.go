// Package dialecttest is the test kit of the SSE client dialects whose checkers are judged on
// the frames of a reference relay (protocol/compose, protocol/simcanvas, protocol/simchat):
// scripts and sessions from the embedded library, a recorder that keeps each write as one
// frame, edits that break a conforming frame sequence, feeding frames to a checker as the load
// generator does (the abort learned only at Finish), the verdict a broken stream must reach,
// and the comparison of a checker's fast path with its general path. Each dialect keeps its
// relay, its tables and its own assertions. Its neighbours play other levels: wiretest drives the
// provider wires' writers and streams, clienttest whole sessions of the provider-wire clients
// over HTTP against the mock; this kit judges frames in process, with no server. Only tests
// import it.
package dialecttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// Script renders the embedded scenario name at seed.
func Script(t testing.TB, name string, seed uint64) *scenarios.Script {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(name)
	if !ok {
		t.Fatalf("no embedded scenario %q", name)
	}
	return sc.Render(seed)
}

// Session is a session that expects sc's ground truth.
func Session(sc *scenarios.Script) *protocol.Session {
	return &protocol.Session{ID: "s1", Target: "openai-all", Input: "hi", Expected: sc.Expected()}
}

// EachScript calls fn with every scenario of the embedded library rendered at seeds 1, 7 and
// 42, and a label naming scenario and seed for failures.
func EachScript(t testing.TB, fn func(sc *scenarios.Script, label string)) {
	t.Helper()
	for _, name := range scenarios.Embedded().Names() {
		for _, seed := range []uint64{1, 7, 42} {
			sc := Script(t, name, seed)
			if sc.Plan != nil {
				// A plan waits for a client's decision: no relay of the script alone plays it
				// (protocol/compose TestPlanRules and loadgen TestPlanApprovalClean do).
				continue
			}
			fn(sc, fmt.Sprintf("%s seed %d", name, seed))
		}
	}
}

// Recorder keeps every Write as one frame: the dialects' writers write one frame per call.
type Recorder struct{ Frames []string }

// Write records p as one frame.
func (r *Recorder) Write(p []byte) (int, error) {
	r.Frames = append(r.Frames, string(p))
	return len(p), nil
}

// Check feeds frames through the SSE decoder into the checker newChecker returns for s and
// returns its verdict. The client learns it aborted only when the stream is over, as the load
// generator does: s.Aborted is false while the checker is made and observes, and restored
// before Finish, so a checker that reads the flag early is caught. Events share the decoder's
// buffer, as at load, so a checker that keeps a frame's bytes without copying them is caught too.
func Check(t testing.TB, frames []string, s *protocol.Session, newChecker func() protocol.Checker) []protocol.Violation {
	t.Helper()
	aborted := s.Aborted
	s.Aborted = false
	c := newChecker()
	dec := sse.NewDecoder(strings.NewReader(strings.Join(frames, "")))
	var ev sse.Event
	for {
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			s.Aborted = aborted
			return c.Finish(nil)
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		c.Observe(&ev)
	}
}

// DecodeAll decodes frames into SSE events, each with its own copy of the data.
func DecodeAll(t testing.TB, frames []string) []sse.Event {
	t.Helper()
	dec := sse.NewDecoder(strings.NewReader(strings.Join(frames, "")))
	var out []sse.Event
	for {
		var ev sse.Event
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		ev.Data = bytes.Clone(ev.Data)
		out = append(out, ev)
	}
}

// NoViolations fails t when conforming frames break a rule, judged whole and, as an aborting
// client sees them, cut after the first frame and after half of them. judge gets the frames
// and whether the client aborted; label names the stream in failures.
func NoViolations(t testing.TB, label string, frames []string, judge func(frames []string, aborted bool) []protocol.Violation) {
	t.Helper()
	if vs := judge(frames, false); len(vs) != 0 {
		t.Errorf("%s: unexpected violations %v\nframes:\n%s", label, vs, strings.Join(frames, ""))
	}
	for _, cut := range []int{1, len(frames) / 2} {
		if vs := judge(frames[:cut], true); len(vs) != 0 {
			t.Errorf("%s aborted after %d frames: unexpected violations %v", label, cut, vs)
		}
	}
}

// WantRules fails t unless vs break exactly the rules of want, one violation each, with
// details short enough for a report and valid UTF-8; frames are shown on failure.
func WantRules(t testing.TB, vs []protocol.Violation, want []protocol.Rule, frames []string) {
	t.Helper()
	for _, v := range vs {
		if len(v.Detail) > 280 || !utf8.ValidString(v.Detail) {
			t.Errorf("detail of %s is %d bytes or not UTF-8, want it short: %q", v.Rule, len(v.Detail), v.Detail)
		}
	}
	if !SameRules(vs, want) {
		t.Errorf("rules %v, want %v\nviolations: %v\nframes:\n%s", Rules(vs), want, vs, strings.Join(frames, ""))
	}
}

// SameRules reports whether vs are one violation of each rule of want, in any order.
func SameRules(vs []protocol.Violation, want []protocol.Rule) bool {
	if len(vs) != len(want) {
		return false
	}
	got := map[protocol.Rule]int{}
	for _, v := range vs {
		got[v.Rule]++
	}
	for _, w := range want {
		if got[w] == 0 {
			return false
		}
		got[w]--
	}
	return true
}

// Rules is the rule of each violation of vs, in order.
func Rules(vs []protocol.Violation) []protocol.Rule {
	out := make([]protocol.Rule, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

// Index is the position of the nth (from 0) frame containing sub; t fails when there is none.
func Index(t testing.TB, frames []string, sub string, nth int) int {
	t.Helper()
	seen := 0
	for i, f := range frames {
		if strings.Contains(f, sub) {
			if seen == nth {
				return i
			}
			seen++
		}
	}
	t.Fatalf("no frame #%d containing %q in:\n%s", nth, sub, strings.Join(frames, ""))
	return -1
}

// LastIndex is the position of the last frame containing sub; t fails when there is none.
func LastIndex(t testing.TB, frames []string, sub string) int {
	t.Helper()
	for i := len(frames) - 1; i >= 0; i-- {
		if strings.Contains(frames[i], sub) {
			return i
		}
	}
	t.Fatalf("no frame containing %q", sub)
	return -1
}

// The edits return a new slice and leave frames as they are, so one relay can feed many edits.

// Insert returns frames with fs inserted before position at.
func Insert(frames []string, at int, fs ...string) []string {
	out := append([]string(nil), frames[:at]...)
	out = append(out, fs...)
	return append(out, frames[at:]...)
}

// Remove returns frames without the frame at position at.
func Remove(frames []string, at int) []string {
	out := append([]string(nil), frames[:at]...)
	return append(out, frames[at+1:]...)
}

// Replace returns frames with the frame at position at replaced by f.
func Replace(frames []string, at int, f string) []string {
	out := append([]string(nil), frames...)
	out[at] = f
	return out
}

// Raw is one unnamed SSE frame carrying data.
func Raw(data string) string { return "data: " + data + "\n\n" }

// Judge feeds stream through the SSE decoder into c up to its end or first decode error, as a
// fuzz target does, calling each (when not nil) with every event and its observation, and
// fails t on a violation without a rule or a detail; it returns c's verdict.
func Judge(t testing.TB, stream []byte, c protocol.Checker, each func(ev *sse.Event, obs protocol.Observation)) []protocol.Violation {
	t.Helper()
	dec := sse.NewDecoder(bytes.NewReader(stream))
	var ev sse.Event
	for dec.Next(&ev) == nil {
		obs := c.Observe(&ev)
		if each != nil {
			each(&ev, obs)
		}
	}
	vs := c.Finish(nil)
	for _, v := range vs {
		if v.Rule == "" || v.Detail == "" {
			t.Fatalf("empty violation %+v", v)
		}
	}
	return vs
}

// FastPathCorpus adds to f's corpus, for each scenario of names at seed 1, the first and the
// last 12 frames of the stream relay sends for it (small seeds keep the fuzzer fast: it
// minimizes every new input it finds), each with the scenario's name; it returns the
// scenarios' expectations by name, for the fuzz body to build its sessions.
func FastPathCorpus(f *testing.F, names []string, relay func(sc *scenarios.Script) []string) map[string]scenarios.Expected {
	f.Helper()
	expected := map[string]scenarios.Expected{}
	for _, name := range names {
		sc := Script(f, name, 1)
		frames := relay(sc)
		f.Add([]byte(strings.Join(frames[:min(len(frames), 12)], "")), name)
		f.Add([]byte(strings.Join(frames[max(0, len(frames)-12):], "")), name)
		expected[name] = sc.Expected()
	}
	return expected
}

// FastPathAgrees fails t unless fast (a checker with its fast paths) reaches exactly the
// verdict of general (the same checker forced onto its general path) on stream, frame by
// frame and at Finish.
func FastPathAgrees(t testing.TB, stream []byte, fast, general protocol.Checker) {
	t.Helper()
	dec := sse.NewDecoder(bytes.NewReader(stream))
	var ev sse.Event
	for dec.Next(&ev) == nil {
		if a, b := fast.Observe(&ev), general.Observe(&ev); a != b {
			t.Fatalf("frame %q: fast path %+v, general path %+v", ev.Data, a, b)
		}
	}
	a, b := fast.Finish(nil), general.Finish(nil)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("verdicts differ:\nfast    %v\ngeneral %v", a, b)
	}
}

// OtherText plays conforming streams of other content than the session's script, as a target
// whose model is not the mock sends them: for every scenario of the embedded library (plans
// aside), the stream relay sends for it at seed 2 judged against a session scripted for seed
// 1, and the stream of the library's next scenario against it. judge gets the frames and the
// session (NoGroundTruth set or not). Without ground truth a stream must break no rule; with
// it, every violation must be of a content or mixed rule (a kind of protocol.SharedRules or
// of rules, the dialect's own), and a same-scenario stream whose final text differs from the
// script's must break one, so the check can fail. A script relay returns no frames for (one its dialect cannot play) is left
// out.
func OtherText(t *testing.T, rules []protocol.RuleSpec, relay func(sc *scenarios.Script) []string, judge func(frames []string, s *protocol.Session) []protocol.Violation) {
	t.Helper()
	kinds := ruleSet(t, rules)
	var names []string
	for _, name := range scenarios.Embedded().Names() {
		if Script(t, name, 1).Plan == nil {
			names = append(names, name)
		}
	}
	for i, name := range names {
		want := Script(t, name, 1)
		for _, other := range []struct {
			sc      *scenarios.Script
			content bool // the stream must break a content rule against the script
		}{
			{Script(t, name, 2), Script(t, name, 2).Expected().FinalText() != want.Expected().FinalText()},
			{Script(t, names[(i+1)%len(names)], 3), false},
		} {
			frames := relay(other.sc)
			if frames == nil {
				continue
			}
			label := fmt.Sprintf("%s seed %d judged as %s seed 1", other.sc.Scenario, other.sc.Seed, name)
			s := Session(want)
			s.NoGroundTruth = true
			if vs := judge(frames, s); len(vs) != 0 {
				t.Errorf("%s without ground truth: violations %v\nframes:\n%s", label, vs, strings.Join(frames, ""))
			}
			vs := judge(frames, Session(want))
			for _, v := range vs {
				if k := kinds.Kind(v.Rule); k != protocol.RuleContent && k != protocol.RuleMixed {
					t.Errorf("%s with ground truth: %s is a %s rule, want only content findings: %v", label, v.Rule, k, v)
				}
			}
			if other.content && len(vs) == 0 {
				t.Errorf("%s with ground truth: no violation, want the content findings the other text breaks", label)
			}
		}
	}
}

// ruleSet is the shared rules and a dialect's own (its package's Rules).
func ruleSet(t testing.TB, rules []protocol.RuleSpec) *protocol.RuleSet {
	t.Helper()
	set, err := protocol.NewRuleSet(protocol.SharedRules(), rules)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
