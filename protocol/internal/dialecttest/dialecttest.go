// Package dialecttest is the test kit of the dialects whose checkers are judged in process on
// a reference relay's frames: scripts, a frame recorder, edits that break a sequence, feeding
// frames as the load generator does, the verdicts, and fast paths against general ones. Only
// tests import it.
package dialecttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
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

// EachScript calls fn with every unplanned scenario at seeds 1, 7 and 42, and a label.
func EachScript(t testing.TB, fn func(sc *scenarios.Script, label string)) {
	t.Helper()
	for _, name := range scenarios.Embedded().Names() {
		for _, seed := range []uint64{1, 7, 42} {
			sc := Script(t, name, seed)
			if sc.Plan != nil {
				continue // a plan waits for a client's decision: no relay of the script plays it
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

// Feed decodes dec's stream and calls fn with every event, which shares the decoder's buffer
// as at load (so a checker that keeps a frame's bytes uncopied is caught), up to the end (nil)
// or the first decode error, which it returns.
func Feed(dec *sse.Decoder, fn func(ev *sse.Event)) error {
	var ev sse.Event
	for {
		err := dec.Next(&ev)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		fn(&ev)
	}
}

// Check feeds frames to the checker newChecker returns for s and returns its verdict. As at
// load the client learns it aborted only at the end: s.Aborted is false until Finish, so a
// checker that reads the flag early is caught.
func Check(t testing.TB, frames []string, s *protocol.Session, newChecker func() protocol.Checker) []protocol.Violation {
	t.Helper()
	aborted := s.Aborted
	s.Aborted = false
	c := newChecker()
	if err := Feed(sse.NewDecoder(strings.NewReader(strings.Join(frames, ""))), func(ev *sse.Event) { c.Observe(ev) }); err != nil {
		t.Fatalf("decode: %v", err)
	}
	s.Aborted = aborted
	return c.Finish(nil)
}

// DecodeAll decodes frames into SSE events, each with its own copy of the data.
func DecodeAll(t testing.TB, frames []string) []sse.Event {
	t.Helper()
	var out []sse.Event
	if err := Feed(sse.NewDecoder(strings.NewReader(strings.Join(frames, ""))), func(ev *sse.Event) {
		out = append(out, sse.Event{Type: ev.Type, Data: bytes.Clone(ev.Data), ID: ev.ID, Retry: ev.Retry})
	}); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return out
}

// NoViolations fails t when conforming frames break a rule, whole or cut by an aborting client.
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

// WantRules fails t unless vs are one violation of each rule of want, with short UTF-8 details.
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
	got := Rules(vs)
	slices.Sort(got)
	return slices.Equal(got, slices.Sorted(slices.Values(want)))
}

// Rules is the rule of each violation of vs, in order.
func Rules(vs []protocol.Violation) []protocol.Rule {
	out := make([]protocol.Rule, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	return out
}

// SortedRules is the distinct rules of vs, sorted.
func SortedRules(vs []protocol.Violation) []protocol.Rule {
	out := Rules(vs)
	slices.Sort(out)
	return slices.Compact(out)
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
	return slices.Insert(slices.Clone(frames), at, fs...)
}

// Remove returns frames without the frame at position at.
func Remove(frames []string, at int) []string { return slices.Delete(slices.Clone(frames), at, at+1) }

// Replace returns frames with the frame at position at replaced by f.
func Replace(frames []string, at int, f string) []string {
	out := append([]string(nil), frames...)
	out[at] = f
	return out
}

// ObserveErrors feeds frames to c and returns the Observation.Error of every error terminal.
func ObserveErrors(t testing.TB, c protocol.Checker, frames []string) []string {
	t.Helper()
	var errs []string
	for _, ev := range DecodeAll(t, frames) {
		if obs := c.Observe(&ev); obs.Error != "" {
			if obs.Kind != protocol.FrameTerminal {
				t.Errorf("Observation.Error %q on a frame of kind %d, want FrameTerminal", obs.Error, obs.Kind)
			}
			errs = append(errs, obs.Error)
		}
	}
	return errs
}

// Do sends req, built with err, with c and closes the response body; an error fails t.
func Do(t testing.TB, c *http.Client, req *http.Request, err error) *http.Response {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// Raw is one unnamed SSE frame carrying data.
func Raw(data string) string { return "data: " + data + "\n\n" }

// Judge feeds stream into c as a fuzz target does, calling each (when set) per event, fails t on
// a violation without a rule or detail, and returns c's verdict.
func Judge(t testing.TB, stream []byte, c protocol.Checker, each func(ev *sse.Event, obs protocol.Observation)) []protocol.Violation {
	t.Helper()
	_ = Feed(sse.NewDecoder(bytes.NewReader(stream)), func(ev *sse.Event) {
		if obs := c.Observe(ev); each != nil {
			each(ev, obs)
		}
	})
	vs := c.Finish(nil)
	for _, v := range vs {
		if v.Rule == "" || v.Detail == "" {
			t.Fatalf("empty violation %+v", v)
		}
	}
	return vs
}

// FastPathCorpus adds the first and last 12 frames relay sends for each of names at seed 1 (small:
// a fast fuzzer) to f's corpus, and returns their expectations by name.
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

// FastPathAgrees fails t unless fast and general (no fast path) agree, frame by frame and at end.
func FastPathAgrees(t testing.TB, stream []byte, fast, general protocol.Checker) {
	t.Helper()
	_ = Feed(sse.NewDecoder(bytes.NewReader(stream)), func(ev *sse.Event) {
		if a, b := fast.Observe(ev), general.Observe(ev); a != b {
			t.Fatalf("frame %q: fast path %+v, general path %+v", ev.Data, a, b)
		}
	})
	a, b := fast.Finish(nil), general.Finish(nil)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("verdicts differ:\nfast    %v\ngeneral %v", a, b)
	}
}

// OtherText plays conforming streams of other content than the session's script, as a target
// whose model is not the mock sends them: for every scenario (plans aside) the stream relay
// sends at seed 2, and the next scenario's, judged against a session scripted for seed 1
// (JudgeOther). A script relay returns no frames for is left out.
func OtherText(t *testing.T, rules []protocol.RuleSpec, relay func(sc *scenarios.Script) []string, judge func(frames []string, s *protocol.Session) []protocol.Violation) {
	t.Helper()
	kinds := RuleSet(t, rules)
	names := Unplanned(t)
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
			JudgeOther(t, kinds, label, strings.Join(frames, ""), other.content, func(truth bool) []protocol.Violation {
				s := Session(want)
				s.NoGroundTruth = !truth
				return judge(frames, s)
			})
		}
	}
}

// JudgeOther judges a conforming stream of other content: without ground truth no rule breaks;
// with it only content or mixed rules do, at least one when content is set.
func JudgeOther(t testing.TB, kinds *protocol.RuleSet, label, stream string, content bool, judge func(truth bool) []protocol.Violation) {
	t.Helper()
	if vs := judge(false); len(vs) != 0 {
		t.Errorf("%s without ground truth: violations %v\nstream:\n%s", label, vs, stream)
	}
	vs := judge(true)
	for _, v := range vs {
		if k := kinds.Kind(v.Rule); k != protocol.RuleContent && k != protocol.RuleMixed {
			t.Errorf("%s with ground truth: %s is a %s rule, want only content findings: %v", label, v.Rule, k, v)
		}
	}
	if content && len(vs) == 0 {
		t.Errorf("%s with ground truth: no violation, want the content findings the other text breaks", label)
	}
}

// Unplanned lists the embedded scenarios without a plan (which a relay of the script cannot play).
func Unplanned(t testing.TB) []string {
	var names []string
	for _, name := range scenarios.Embedded().Names() {
		if Script(t, name, 1).Plan == nil {
			names = append(names, name)
		}
	}
	return names
}

// RuleSet is the shared rules and a dialect's own (its package's Rules).
func RuleSet(t testing.TB, rules []protocol.RuleSpec) *protocol.RuleSet {
	t.Helper()
	set, err := protocol.NewRuleSet(protocol.SharedRules(), rules)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// Must is a relay's check of each write: it fails t on an error.
func Must(t testing.TB) func(error) {
	return func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// ErrorCase is one row of a dialect's table of in-band errors: a stream for Sc's session (ground
// truth off when NoTruth) cut by Cut (nil: not cut), the Observation.Errors it reports and the
// rules it breaks.
type ErrorCase struct {
	Name    string
	Sc      *scenarios.Script
	NoTruth bool
	Frames  []string
	Cut     error
	Errs    []string
	Want    []protocol.Rule
}

// ErrorCases judges each row with the checker newChecker makes for its session: the row's
// errors (ObserveErrors), and exactly its rules from Finish(Cut).
func ErrorCases(t *testing.T, cases []ErrorCase, newChecker func(s *protocol.Session) protocol.Checker) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			s := Session(tc.Sc)
			s.NoGroundTruth = tc.NoTruth
			c := newChecker(s)
			if errs := ObserveErrors(t, c, tc.Frames); !slices.Equal(errs, tc.Errs) {
				t.Errorf("Observation.Error %q, want %q", errs, tc.Errs)
			}
			WantRules(t, c.Finish(tc.Cut), tc.Want, tc.Frames)
		})
	}
}
