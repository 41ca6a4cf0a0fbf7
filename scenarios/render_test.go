package scenarios

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// handBuilt is a two-turn scenario built in code, independent of the YAML parser.
func handBuilt() *Scenario {
	return &Scenario{
		Name:   "hand-built",
		Timing: Timing{TimeToFirstToken: Constant(100 * time.Millisecond), InterToken: Constant(10 * time.Millisecond)},
		Turns: []Turn{
			{Text: Text{Literal: "Let me look  that up."}, ToolCalls: []ToolCall{{Name: "search", Duration: Constant(300 * time.Millisecond)}}},
			{Thinking: Text{Tokens: 5}, Text: Text{Tokens: 7}},
		},
	}
}

func TestRenderHandBuilt(t *testing.T) {
	t.Parallel()
	s := handBuilt()
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	script := s.Render(42)
	if len(script.Turns) != 2 {
		t.Fatalf("got %d turns, want 2", len(script.Turns))
	}
	first := script.Turns[0]
	// Literal tokens: "Let", " me", " look", "  that", " up." then the tool-argument pieces.
	wantText := []string{"Let", " me", " look", "  that", " up."}
	for i, w := range wantText {
		if first.Steps[i].Kind != StepText || first.Steps[i].Text != w {
			t.Fatalf("step %d = %v %q, want text %q", i, first.Steps[i].Kind, first.Steps[i].Text, w)
		}
		if want := 100*time.Millisecond + time.Duration(i)*10*time.Millisecond; first.Steps[i].At != want {
			t.Errorf("step %d at %v, want %v", i, first.Steps[i].At, want)
		}
	}
	if len(first.ToolCalls) != 1 || !strings.HasPrefix(first.ToolCalls[0].ID, "call_") || len(first.ToolCalls[0].ID) != 29 {
		t.Fatalf("tool calls = %+v, want one with a call_ + 24 hex id", first.ToolCalls)
	}
	var args strings.Builder
	for _, st := range first.Steps[len(wantText):] {
		if st.Kind != StepToolArgs {
			t.Fatalf("step after text is %v, want tool-args", st.Kind)
		}
		args.WriteString(st.Text)
	}
	if args.String() != first.ToolCalls[0].Arguments {
		t.Errorf("streamed args %q != tool arguments %q", args.String(), first.ToolCalls[0].Arguments)
	}
	if !strings.Contains(args.String(), `"_sim":{"ms":300,"outcome":"success"`) {
		t.Errorf("arguments %q lack the _sim directive", args.String())
	}
	if first.OutputTokens != len(first.Steps) || first.InputTokens != 20 || script.Turns[1].InputTokens != 30 {
		t.Errorf("usage = in %d/%d out %d, want 20/30 and %d", first.InputTokens, script.Turns[1].InputTokens, first.OutputTokens, len(first.Steps))
	}
	exp := script.Expected()
	if exp.FailedTurn != -1 || exp.ProviderError != "" || !exp.Turns[1].Final || exp.Turns[0].Final {
		t.Errorf("expected = %+v", exp)
	}
	if exp.Turns[0].Text != "Let me look  that up." {
		t.Errorf("turn 0 text = %q", exp.Turns[0].Text)
	}
	if !reflect.DeepEqual(s.Render(42), script) {
		t.Error("rendering the same seed twice differs")
	}
}

// testSeeds are the seeds every library scenario is checked with.
var testSeeds = []uint64{0, 1, 2, 42, 1 << 63, 0xdeadbeef}

// checkConsistent asserts the invariants every rendered Script holds: steps in time order and
// kind order, tool arguments streamed whole and in UTF-8-safe pieces, valid JSON with _sim, and
// an Expected that equals the concatenated steps.
func checkConsistent(t *testing.T, script *Script) {
	t.Helper()
	exp := script.Expected()
	for ti, st := range script.Turns {
		if st.HTTPStatus != 0 {
			if len(st.Steps) != 0 || ti != len(script.Turns)-1 || exp.FailedTurn != ti || len(exp.Turns) != ti || exp.ProviderError == "" {
				t.Fatalf("turn %d: HTTP %d turn inconsistent: %d steps, expected %+v", ti, st.HTTPStatus, len(st.Steps), exp)
			}
			continue
		}
		thinking, text, args, tokens := checkSteps(t, ti, st)
		if tokens != st.OutputTokens {
			t.Errorf("turn %d: OutputTokens %d, steps carry %d", ti, st.OutputTokens, tokens)
		}
		if ti >= len(exp.Turns) {
			t.Fatalf("turn %d missing from Expected (%d turns)", ti, len(exp.Turns))
		}
		et := exp.Turns[ti]
		if et.Thinking != thinking || et.Text != text {
			t.Fatalf("turn %d: Expected thinking/text differ from the steps:\n%q / %q\n%q / %q", ti, et.Thinking, et.Text, thinking, text)
		}
		failed := st.ErrorAfterStep >= 0
		if failed != (exp.FailedTurn == ti) {
			t.Fatalf("turn %d: ErrorAfterStep %d but FailedTurn %d", ti, st.ErrorAfterStep, exp.FailedTurn)
		}
		if failed {
			if st.ErrorAfterStep != len(st.Steps)-1 && !(len(st.Steps) == 0 && st.ErrorAfterStep == 0) {
				t.Errorf("turn %d: ErrorAfterStep %d with %d steps", ti, st.ErrorAfterStep, len(st.Steps))
			}
			if et.ToolCalls != nil || et.Final || exp.ProviderError == "" {
				t.Errorf("turn %d: failed turn expected %+v, provider error %q", ti, et, exp.ProviderError)
			}
			continue
		}
		if et.Final != (ti == len(script.Turns)-1 && len(st.ToolCalls) == 0) {
			t.Errorf("turn %d: Final = %v", ti, et.Final)
		}
		checkToolCalls(t, ti, st, et, args)
	}
	if exp.FailedTurn < 0 && !exp.Paused && !exp.ExecutionTimeout && !exp.Plan.EndsInError() && len(exp.Turns) > 0 && !exp.Turns[len(exp.Turns)-1].Final {
		t.Errorf("converging script has no Final turn")
	}
}

// checkSteps checks turn ti's steps (time and kind order, whole UTF-8 pieces) and returns the
// thinking, text and each tool's arguments they carry, and their tokens.
func checkSteps(t *testing.T, ti int, st ScriptTurn) (thinking, text string, args []string, tokens int) {
	t.Helper()
	var th, tx strings.Builder
	ab := make([]strings.Builder, len(st.ToolCalls))
	var prevAt time.Duration
	var prevKind StepKind
	for si, step := range st.Steps {
		if step.At < prevAt {
			t.Fatalf("turn %d step %d at %v before previous %v", ti, si, step.At, prevAt)
		}
		if step.Kind < prevKind {
			t.Fatalf("turn %d step %d: %v after %v", ti, si, step.Kind, prevKind)
		}
		if !utf8.ValidString(step.Text) || step.Text == "" || step.Tokens < 1 {
			t.Fatalf("turn %d step %d: bad piece %q (%d tokens)", ti, si, step.Text, step.Tokens)
		}
		prevAt, prevKind = step.At, step.Kind
		tokens += step.Tokens
		switch step.Kind {
		case StepThinking:
			th.WriteString(step.Text)
		case StepText:
			tx.WriteString(step.Text)
		case StepToolArgs:
			if step.Tool < 0 || step.Tool >= len(st.ToolCalls) {
				t.Fatalf("turn %d step %d: tool index %d out of range", ti, si, step.Tool)
			}
			ab[step.Tool].WriteString(step.Text)
		default:
			t.Fatalf("turn %d step %d: unknown kind %d", ti, si, step.Kind)
		}
	}
	for i := range ab {
		args = append(args, ab[i].String())
	}
	return th.String(), tx.String(), args, tokens
}

// checkToolCalls checks turn ti's tool calls against their streamed arguments and Expected.
func checkToolCalls(t *testing.T, ti int, st ScriptTurn, et ExpectedTurn, args []string) {
	t.Helper()
	for ci, call := range st.ToolCalls {
		if got := args[ci]; got != call.Arguments {
			t.Fatalf("turn %d call %d: streamed %q, want %q", ti, ci, got, call.Arguments)
		}
		if len(call.ID) != 29 || !strings.HasPrefix(call.ID, "call_") || strings.Trim(call.ID[5:], "0123456789abcdef") != "" {
			t.Errorf("turn %d call %d: id %q is not call_ + 24 lowercase hex", ti, ci, call.ID)
		}
		var decoded struct {
			Sim SimDirective `json:"_sim"`
		}
		if err := json.Unmarshal([]byte(call.Arguments), &decoded); err != nil {
			t.Fatalf("turn %d call %d: arguments %q are not JSON: %v", ti, ci, call.Arguments, err)
		}
		want := SimDirective{DurationMs: call.Duration.Milliseconds(), Outcome: call.Outcome, Result: call.Result, Pause: call.Pause, TimesOut: call.TimesOut}
		if decoded.Sim != want {
			t.Errorf("turn %d call %d: _sim = %+v, want %+v", ti, ci, decoded.Sim, want)
		}
		if !reflect.DeepEqual(et.ToolCalls[ci], call) {
			t.Errorf("turn %d call %d: Expected tool call %+v != script %+v", ti, ci, et.ToolCalls[ci], call)
		}
	}
}

// forEachScenario runs f in parallel on each scenario of the embedded library.
func forEachScenario(t *testing.T, f func(t *testing.T, s *Scenario)) {
	lib := Embedded()
	for _, name := range lib.Names() {
		s, _ := lib.Get(name)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, s)
		})
	}
}

func TestLibraryRendersConsistently(t *testing.T) {
	t.Parallel()
	forEachScenario(t, func(t *testing.T, s *Scenario) {
		for _, seed := range testSeeds {
			checkConsistent(t, s.Render(seed))
		}
	})
}

func TestRenderDeterminism(t *testing.T) {
	t.Parallel()
	forEachScenario(t, func(t *testing.T, s *Scenario) {
		a, b := s.Render(7), s.Render(7)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("same seed rendered two different scripts")
		}
		c := s.Render(8)
		if reflect.DeepEqual(a, c) {
			t.Fatal("seeds 7 and 8 rendered identical scripts")
		}
	})
	// Generated text must differ between seeds (literal text cannot).
	s, _ := Embedded().Get("plain-answer")
	if s.Render(1).Expected().FinalText() == s.Render(2).Expected().FinalText() {
		t.Error("plain-answer text is the same for seeds 1 and 2")
	}
}

func TestRenderPurposesAreIndependent(t *testing.T) {
	t.Parallel()
	a := handBuilt()
	b := handBuilt()
	b.Timing.InterToken = Dist{Kind: DistUniform, Min: time.Millisecond, Max: 90 * time.Millisecond}
	b.Turns[0].ToolCalls[0].Duration = Constant(time.Second)
	ea, eb := a.Render(5).Expected(), b.Render(5).Expected()
	if ea.AllText() != eb.AllText() || ea.AllThinking() != eb.AllThinking() {
		t.Error("changing timings changed the text")
	}
	if ea.Turns[0].ToolCalls[0].ID != eb.Turns[0].ToolCalls[0].ID {
		t.Error("changing timings changed tool ids")
	}
	// Adding a turn must not change the earlier ones.
	c := handBuilt()
	c.Turns = append([]Turn{c.Turns[0]}, c.Turns...)
	if got, want := c.Render(5).Turns[0], a.Render(5).Turns[0]; !reflect.DeepEqual(got, want) {
		t.Error("adding a turn changed turn 0")
	}
}

func TestGeneratedTextHasNonASCII(t *testing.T) {
	t.Parallel()
	s, _ := Embedded().Get("long-answer")
	text := s.Render(1).Expected().FinalText()
	if utf8.RuneCountInString(text) == len(text) {
		t.Error("2,000 generated tokens contain no multi-byte character")
	}
	if strings.HasPrefix(text, " ") || !strings.HasSuffix(text, ".") {
		t.Errorf("generated text should start with a word and end with a period: %q…%q", text[:20], text[len(text)-20:])
	}
	if got := s.Render(1).Turns[0].OutputTokens; got != 2000 {
		t.Errorf("long-answer output tokens = %d, want 2000", got)
	}
}

func TestSplitLiteralRoundTrips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},                                    // nothing to stream
		{"one", []string{"one"}},                     // a single word
		{" lead", []string{" lead"}},                 // leading whitespace stays with the word
		{"a  b\n\nc", []string{"a", "  b", "\n\nc"}}, // runs of whitespace are preserved
		{"end ", []string{"end", " "}},               // trailing whitespace is its own token
		{"日本 語", []string{"日本", " 語"}},               // multi-byte words
	}
	for _, tt := range tests {
		got := splitLiteral(tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitLiteral(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("splitLiteral(%q) does not round-trip", tt.in)
		}
	}
}

func TestFaultRendering(t *testing.T) {
	t.Parallel()
	lib := Embedded()
	get := func(name string) *Scenario {
		s, ok := lib.Get(name)
		if !ok {
			t.Fatalf("library lacks %s", name)
		}
		return s
	}
	t.Run("http error first turn", func(t *testing.T) {
		script := get("provider-429").Render(3)
		exp := script.Expected()
		if len(script.Turns) != 1 || script.Turns[0].HTTPStatus != 429 || len(exp.Turns) != 0 || exp.FailedTurn != 0 {
			t.Fatalf("script %+v expected %+v", script.Turns, exp)
		}
	})
	t.Run("http error after tool turn", func(t *testing.T) {
		exp := get("provider-503-after-tool").Render(3).Expected()
		if len(exp.Turns) != 1 || exp.FailedTurn != 1 || len(exp.Turns[0].ToolCalls) != 1 || !strings.Contains(exp.ProviderError, "503") {
			t.Fatalf("expected %+v", exp)
		}
	})
	t.Run("mid-stream error", func(t *testing.T) {
		script := get("provider-error-midstream").Render(3)
		st := script.Turns[0]
		if st.OutputTokens != 40 || st.ErrorAfterStep != 39 || len(st.Steps) != 40 {
			t.Fatalf("mid-stream turn: %d tokens, error after %d of %d steps", st.OutputTokens, st.ErrorAfterStep, len(st.Steps))
		}
		exp := script.Expected()
		if exp.ProviderError != "upstream model crashed (scripted)" || exp.FailedTurn != 0 || exp.FinalText() != "" {
			t.Fatalf("expected %+v", exp)
		}
	})
	t.Run("mid-stream error inside tool arguments", func(t *testing.T) {
		s := handBuilt()
		s.Faults.MidStreamError = &MidStreamFault{Turn: 0, AfterTokens: 7}
		s.Turns = s.Turns[:1]
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		script := s.Render(1)
		checkConsistent(t, script)
		if len(script.Turns[0].ToolCalls) != 1 || script.Expected().Turns[0].ToolCalls != nil {
			t.Fatal("a tool call cut by the error must stay in the script (it streamed) but not in Expected")
		}
	})
	t.Run("stall", func(t *testing.T) {
		st := get("stall-mid-answer").Render(3).Turns[0]
		if st.StallAfterStep != 49 || st.StallFor != 2*time.Second {
			t.Fatalf("stall after %d for %v", st.StallAfterStep, st.StallFor)
		}
		if gap := st.Steps[50].At - st.Steps[49].At; gap < 2*time.Second {
			t.Errorf("gap across the stall %v, want >= 2s", gap)
		}
	})
	t.Run("tokens per frame", func(t *testing.T) {
		st := get("batched-frames").Render(3).Turns[0]
		full := 0
		for _, step := range st.Steps {
			if step.Tokens > 5 {
				t.Fatalf("step carries %d tokens, want <= 5", step.Tokens)
			}
			if step.Tokens == 5 {
				full++
			}
		}
		// 25 thinking + 150 text tokens = 35 full frames.
		if full != 35 || len(st.Steps) != 35 {
			t.Errorf("%d steps, %d full; want 35 full frames", len(st.Steps), full)
		}
	})
}

func BenchmarkRender(b *testing.B) {
	lib := Embedded()
	for _, name := range []string{"plain-answer", "tool-chain", "long-answer"} {
		s, _ := lib.Get(name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var seed uint64
			for b.Loop() {
				seed++
				_ = s.Render(seed).Expected()
			}
		})
	}
}

func TestRenderInvalidDoesNotPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Scenario)
	}{
		// Fault turns beyond the script are ignored.
		{"fault out of range", func(s *Scenario) {
			s.Faults.HTTPError = &HTTPErrorFault{Turn: 9, Status: 500}
			s.Faults.Stall = &StallFault{Turn: -1, AfterTokens: 3, Duration: time.Second}
		}},
		// Negative counts generate nothing.
		{"negative tokens", func(s *Scenario) { s.Turns[1].Text.Tokens = -5; s.Timing.TokensPerFrame = -3 }},
		// A mid-stream error before any token, on an empty turn.
		{"error on empty turn", func(s *Scenario) {
			s.Turns[1] = Turn{}
			s.Faults.MidStreamError = &MidStreamFault{Turn: 1, AfterTokens: 0}
		}},
		// Broken distributions sample something non-negative.
		{"bad dists", func(s *Scenario) {
			s.Timing.TimeToFirstToken = Dist{Kind: DistLognormal, Median: -1}
			s.Timing.InterToken = Dist{Kind: DistUniform, Min: 5, Max: 1}
		}},
		// No turns at all.
		{"no turns", func(s *Scenario) { s.Turns = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := handBuilt()
			tt.mutate(s)
			script := s.Render(1)
			_ = script.Expected()
			_ = script.EstimatedDuration()
			for _, st := range script.Turns {
				for _, step := range st.Steps {
					if step.At < 0 {
						t.Fatalf("negative At %v", step.At)
					}
				}
			}
		})
	}
}

// splitLiteral returns the tokens literalCuts finds in s.
func splitLiteral(s string) []string {
	var tokens []string
	start := 0
	for _, end := range literalCuts(s) {
		tokens = append(tokens, s[start:end])
		start = end
	}
	return tokens
}
