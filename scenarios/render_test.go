package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"
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
