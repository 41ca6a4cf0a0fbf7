package simchat

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
)

// TestSeedRules: each Sim seed rule fails on a broken stream (and only that rule, unless the
// row says why another one follows), and a conforming stream of the same kind passes.
func TestSeedRules(t *testing.T) {
	t.Parallel()
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	nothink := Policy{IncludeThinking: true, IncludeToolCalls: true, NoModelThinking: true}
	tools := Policy{IncludeToolCalls: true}
	for _, tc := range []struct {
		name     string
		scenario string
		optedIn  bool
		relayPol Policy // the policy the stream is produced with
		checkPol Policy // the policy (and capability) the client assumes
		edit     edit
		want     []protocol.Rule
	}{
		// The conforming paused run: tools settled, final with status paused.
		{"paused", "paused-for-input", true, all, all, nil, nil},
		// A paused run reported as a completed one.
		{"paused reported as completed", "paused-for-input", true, all, all, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"status":"paused"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"status":"paused",`, "", 1))
		}, []protocol.Rule{protocol.RPaused}},
		// A tool still open at the paused terminal: R-paused, and R-tool-lifecycle at the end.
		{"tool open at pause", "paused-for-input", true, all, all, func(t *testing.T, f []string) []string {
			return dialecttest.Remove(f, dialecttest.Index(t, f, `"phase":"end"`, 0))
		}, []protocol.Rule{protocol.RPaused, protocol.RToolLifecycle}},
		// A legacy client sees the paused final too.
		{"paused legacy", "paused-for-input", false, Policy{}, Policy{}, nil, nil},
		// A run that completes reported as paused.
		{"paused though never scripted", "plain-answer", true, all, all, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"event":"final"`, 0)
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"success":true,`, `"success":true,"status":"paused",`, 1))
		}, []protocol.Rule{protocol.RPaused}},
		// The preamble persisted in the final output, though the chunks converge.
		{"preamble in output", "preamble-tool", true, all, all, func(t *testing.T, f []string) []string {
			exp := dialecttest.Script(t, "preamble-tool", 1).Expected()
			i := dialecttest.Index(t, f, `"event":"final"`, 0)
			final := string(jsonwire.AppendString(nil, exp.FinalText()))
			both := string(jsonwire.AppendString(nil, exp.Turns[0].Text+exp.FinalText()))
			return dialecttest.Replace(f, i, strings.Replace(f[i], `"content":`+final, `"content":`+both, 1))
		}, []protocol.Rule{protocol.RFinalOutput}},
		// A legacy client's final output is judged the same way.
		{"preamble in legacy output", "preamble-tool", false, Policy{}, Policy{}, func(t *testing.T, f []string) []string {
			i := dialecttest.Index(t, f, `"event":"final"`, 0)
			return dialecttest.Replace(f, i, dialecttest.Raw(`{"event":"final","data":{"success":true,"output":{"content":"Let me check"}}}`))
		}, []protocol.Rule{protocol.RFinalOutput}},
		// A model without thinking: no thinking frames is right, whatever the policy.
		{"nothink", "thinking-answer", true, tools, nothink, nil, nil},
		// Thinking from it is capability's finding, not the gate's.
		{"thinking from nothink model", "thinking-answer", true, all, nothink, nil, []protocol.Rule{protocol.RThinkingCapability}},
		// Without the policy it stays the gate's finding.
		{"thinking without policy", "thinking-answer", true, all, Policy{NoModelThinking: true}, nil, []protocol.Rule{RThinkingGate}},
		// The execution timeout: the error must name it.
		{"timeout", "execution-timeout", true, all, all, nil, nil},
		// The timeout reported as a cancel.
		{"timeout as cancel", "execution-timeout", true, all, all, func(t *testing.T, f []string) []string {
			return dialecttest.Replace(f, dialecttest.Index(t, f, `"event":"error"`, 0), dialecttest.Raw(`{"event":"error","error":"Execution cancelled"}`))
		}, []protocol.Rule{protocol.RCancelNotTimeout}},
		// The capped thinking passes.
		{"thinking at the cap", "thinking-over-cap", true, all, all, nil, nil},
		// One more thinking frame crosses the cap.
		{"thinking over the cap", "thinking-over-cap", true, all, all, func(t *testing.T, f []string) []string {
			return dialecttest.Insert(f, dialecttest.LastIndex(t, f, `"event":"thinking"`)+1, dialecttest.Raw(`{"blockId":"b1","event":"thinking","data":" more"}`))
		}, []protocol.Rule{protocol.RThinkingCap}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantEdited(t, tc.scenario, tc.optedIn, tc.relayPol, tc.checkPol, false, tc.edit, tc.want)
		})
	}
}

// TestCapThinkingAndSlugs: the cap counts UTF-16 code units and cuts on a rune boundary across
// parts, and the capability is read from the slug's nothink part.
func TestCapThinkingAndSlugs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		parts []string
		limit int
		want  []string
	}{
		// Under the cap: unchanged.
		{[]string{"ab", "cd"}, 10, []string{"ab", "cd"}},
		// Cut in the second part; the rest is empty.
		{[]string{"ab", "cd", "ef"}, 3, []string{"ab", "c", ""}},
		// The limit is in UTF-16 code units: "é" is two bytes and one unit, "日" three bytes
		// and one unit.
		{[]string{"aé", "日b"}, 3, []string{"aé", "日"}},
		// An astral rune is two units and is never split: with one unit left it stays out.
		{[]string{"a😀"}, 2, []string{"a"}},
		{[]string{"a😀"}, 3, []string{"a😀"}},
	} {
		if got := CapThinking(tc.parts, tc.limit); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("CapThinking(%q, %d) = %q, want %q", tc.parts, tc.limit, got, tc.want)
		}
	}
	var b ThinkingBudget
	if got := b.Admit(strings.Repeat("x", ThinkingCapUnits-1) + "😀"); len(got) != ThinkingCapUnits-1 {
		t.Errorf("budget admitted %d bytes across an astral rune (2 UTF-16 units) at the cap, want %d", len(got), ThinkingCapUnits-1)
	}
	if got := b.Admit("é"); got != "é" {
		t.Errorf("budget with 1 UTF-16 unit left admitted %q, want é (2 bytes, 1 unit)", got)
	}
	if got := b.Admit("z"); got != "" {
		t.Errorf("budget at the cap admitted %q", got)
	}
	for slug, want := range map[string]bool{"openai-nothink-all": false, "nothink": false, "openai-all": true, "nothinking-all": true} {
		if got := ModelThinksForSlug(slug); got != want {
			t.Errorf("ModelThinksForSlug(%q) = %v, want %v", slug, got, want)
		}
	}
	c, err := New().Configure("openai-nothink-all", protocol.Options{"optedIn": true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sees(protocol.FrameThinking) {
		t.Error("an opted-in client of a nothink deployment expects thinking frames")
	}
	if c, _ = New().Configure("openai-nothink-all", protocol.Options{"optedIn": true, "modelThinking": true}); !c.Sees(protocol.FrameThinking) {
		t.Error("modelThinking: true does not override the slug")
	}
}

// TestThinkingCapInUTF16Units: R-thinking-cap counts what Sim counts, JavaScript string
// length (UTF-16 code units), not bytes. Thinking of exactly 524,288 units in multi-byte
// characters (far more bytes) passes, and one unit more fails; so does the scripted thinking
// capped the way Sim caps it, on the fast path and on the general one.
func TestThinkingCapInUTF16Units(t *testing.T) {
	t.Parallel()
	if got := UTF16Len("aé日😀\xff"); got != 1+1+1+2+1 {
		t.Errorf("UTF16Len = %d, want 6 (a, é, 日 one unit each, 😀 two, a bad byte one)", got)
	}
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	// Without ground truth: 64 frames of 2,048 × "é日😀" (4 units, 9 bytes), 524,288 units.
	rec := &dialecttest.Recorder{}
	w := NewWriter(rec)
	for range 64 {
		if err := w.Thinking(block, strings.Repeat("é日😀", 2048)); err != nil {
			t.Fatal(err)
		}
	}
	end := func(frames ...string) []string {
		out := append(append([]string(nil), rec.Frames...), frames...)
		return append(out, dialecttest.Raw(`{"blockId":"b1","chunk":"ok"}`), dialecttest.Raw(`{"event":"final","data":{"success":true,"output":{}}}`), dialecttest.Raw(`"[DONE]"`))
	}
	sc := dialecttest.Script(t, "plain-answer", 1)
	for _, general := range []bool{false, true} {
		judge := func(frames []string) []protocol.Violation {
			s := session(sc, true, all)
			s.NoGroundTruth = true
			return dialecttest.Check(t, frames, s.Session, func() protocol.Checker {
				c := s.checker()
				c.generalOnly = general
				return c
			})
		}
		dialecttest.WantRules(t, judge(end()), nil, nil)
		dialecttest.WantRules(t, judge(end(dialecttest.Raw(`{"blockId":"b1","event":"thinking","data":"é"}`))), []protocol.Rule{protocol.RThinkingCap}, nil)
	}
	// With ground truth: the scenario's thinking capped at 524,288 units, as Sim forwards it,
	// passes (531,523 bytes at seed 7); one unit more fails.
	sc = dialecttest.Script(t, "thinking-over-cap", 7)
	frames := relay(t, sc, true, all)
	var thinking strings.Builder
	for _, ev := range dialecttest.DecodeAll(t, frames) {
		var f frame
		if json.Unmarshal(ev.Data, &f) == nil && f.Event != nil && *f.Event == "thinking" {
			var text string
			_ = json.Unmarshal(f.Data, &text)
			thinking.WriteString(text)
		}
	}
	if units := UTF16Len(thinking.String()); units != ThinkingCapUnits || thinking.Len() <= ThinkingCapUnits {
		t.Fatalf("thinking-over-cap seed 7 relayed %d bytes = %d UTF-16 units, want %d units in more bytes", thinking.Len(), units, ThinkingCapUnits)
	}
	for _, general := range []bool{false, true} {
		judge := func(frames []string) []protocol.Violation {
			s := session(sc, true, all)
			return dialecttest.Check(t, frames, s.Session, func() protocol.Checker {
				c := s.checker()
				c.generalOnly = general
				return c
			})
		}
		dialecttest.WantRules(t, judge(frames), nil, frames[:3])
		more := dialecttest.Insert(frames, dialecttest.LastIndex(t, frames, `"event":"thinking"`)+1, dialecttest.Raw(`{"blockId":"b1","event":"thinking","data":"ü"}`))
		dialecttest.WantRules(t, judge(more), []protocol.Rule{protocol.RThinkingCap}, more[:3])
	}
}

// TestSeedRulesWithoutGroundTruth: against a target whose runs are not the script's, a run that
// does not pause where the script does, and an error that names no timeout, are no findings.
func TestSeedRulesWithoutGroundTruth(t *testing.T) {
	t.Parallel()
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	for name, terminal := range map[string]string{
		"paused-for-input":  `{"event":"final","data":{"success":true,"output":{"content":""}}}`,
		"execution-timeout": `{"event":"error","error":"boom"}`,
	} {
		sc := dialecttest.Script(t, name, 1)
		frames := relay(t, sc, true, all)
		i := dialecttest.LastIndex(t, frames, `"event":`)
		frames = dialecttest.Replace(frames, i, dialecttest.Raw(terminal))
		s := session(sc, true, all)
		s.NoGroundTruth = true
		for _, v := range check(t, frames, s) {
			if v.Rule == protocol.RPaused || v.Rule == protocol.RCancelNotTimeout {
				t.Errorf("%s without ground truth: %v", name, v)
			}
		}
		s = session(sc, true, all)
		if vs := check(t, frames, s); !slices.ContainsFunc(vs, func(v protocol.Violation) bool {
			return v.Rule == protocol.RPaused || v.Rule == protocol.RCancelNotTimeout
		}) {
			t.Errorf("%s with ground truth: %v, want the seed rule", name, vs)
		}
	}
}
