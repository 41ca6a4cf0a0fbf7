package scenarios

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// swarmHeader is a scenario whose first turn delegates; cases append its children.
const swarmHeader = validHeader + "turns:\n  - text: go\n    swarm:\n"

// TestSwarmValidation: every swarm problem is reported with the field path and what was expected.
func TestSwarmValidation(t *testing.T) {
	t.Parallel()
	const answer = "  - text: done\n"
	for _, tc := range []struct {
		name, yaml, path, want string
	}{
		// A child needs a name: its runKey.
		{"no name", swarmHeader + "      - text: hi\n" + answer, "turns[0].swarm[0].name", "missing"},
		// Names are runKeys: unique in the whole tree.
		{"duplicate name", swarmHeader + "      - {name: a, text: hi, swarm: [{name: a, text: ho}]}\n" + answer, "turns[0].swarm[0].swarm[0].name", "also the name of turns[0].swarm[0]"},
		// No whitespace in a runKey.
		{"name with space", swarmHeader + "      - {name: \"a b\", text: hi}\n" + answer, "turns[0].swarm[0].name", "whitespace"},
		// A child must say something.
		{"no text", swarmHeader + "      - {name: a}\n" + answer, "turns[0].swarm[0].text", "missing"},
		// Outcomes are done or error.
		{"bad outcome", swarmHeader + "      - {name: a, text: hi, outcome: crashed}\n" + answer, "turns[0].swarm[0].outcome", "expected done or error"},
		// An error message only for a failing child.
		{"error on done", swarmHeader + "      - {name: a, text: hi, error: oops}\n" + answer, "turns[0].swarm[0].error", "only with outcome: error"},
		// Child tool calls are validated like any.
		{"child tool without name", swarmHeader + "      - {name: a, text: hi, toolCalls: [{duration: 1ms}]}\n" + answer, "turns[0].swarm[0].toolCalls[0].name", "missing"},
		// The delegation's tool name is reserved.
		{"reserved tool", swarmHeader + "      - {name: a, text: hi, toolCalls: [{name: delegate_agents}]}\n" + answer, "turns[0].swarm[0].toolCalls[0].name", "reserved"},
		// A bad delay distribution.
		{"bad delay", swarmHeader + "      - {name: a, text: hi, delay: {kind: uniform, min: 2ms, max: 1ms}}\n" + answer, "turns[0].swarm[0].delay.max", "below min"},
		// A swarm ends its turn like a tool call: an answer must follow.
		{"last turn swarm", swarmHeader + "      - {name: a, text: hi}\n", "turns[0].swarm", "expected a later turn"},
		// Depth is bounded.
		{"too deep", swarmHeader + "      - {name: a, text: x, swarm: [{name: b, text: x, swarm: [{name: c, text: x, swarm: [{name: d, text: x, swarm: [{name: e, text: x}]}]}]}]}\n" + answer,
			"turns[0].swarm[0].swarm[0].swarm[0].swarm[0].swarm", "at most 4 levels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("swarm.yaml", []byte(tc.yaml))
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FieldError", err)
			}
			if fe.Path != tc.path || !strings.Contains(fe.Problem, tc.want) {
				t.Errorf("got %s: %s; want %s: …%s…", fe.Path, fe.Problem, tc.path, tc.want)
			}
		})
	}
	// A swarm turn ends in tool calls for the turn structure, and makes duringTool reachable.
	ok := swarmHeader + "      - {name: a, text: hi}\n  - text: done\nclient:\n  stop: {duringTool: true}\n"
	if _, err := Parse("ok.yaml", []byte(ok)); err != nil {
		t.Errorf("a valid swarm scenario: %v", err)
	}
}

// TestSwarmRender: children render deterministically and apart from the root conversation;
// the delegation lists them; Script.Child finds each script by its path; Expected lists every
// child, parents first, with its chain, text, tools and outcome.
func TestSwarmRender(t *testing.T) {
	t.Parallel()
	sc, _ := Embedded().Get("swarm-depth2")
	a, b := sc.Render(9), sc.Render(9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two renders of one seed differ")
	}
	// Removing the swarm changes nothing else of the root conversation's first turn's text.
	plain := *sc
	plain.Turns = append([]Turn(nil), sc.Turns...)
	plain.Turns[0].Swarm = nil
	plain.Turns[0].ToolCalls = []ToolCall{{Name: "x"}}
	if got, want := plain.Render(9).Expected().Turns[0].Text, a.Expected().Turns[0].Text; got != want {
		t.Errorf("the swarm changed the root turn's text: %q vs %q", got, want)
	}
	turn := a.Turns[0]
	delegate := turn.ToolCalls[len(turn.ToolCalls)-1]
	if delegate.Name != DelegateTool || !strings.Contains(delegate.Arguments, `"_swarm":[{"name":"researcher-a","path":"0.0"}`) {
		t.Errorf("delegation %s %s", delegate.Name, delegate.Arguments)
	}
	exp := a.Expected()
	var names []string
	for _, c := range exp.Children {
		names = append(names, c.Name)
	}
	if want := []string{"researcher-a", "analyst-a1", "researcher-b"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("children %v, want %v", names, want)
	}
	a1 := exp.Children[1]
	if a1.Depth != 2 || a1.Parent != "researcher-a" || !reflect.DeepEqual(a1.Chain, []string{"researcher-a", "analyst-a1"}) || a1.Path != "0.0.0" {
		t.Errorf("analyst-a1: %+v", a1)
	}
	if got := exp.Children[0].Tools; !reflect.DeepEqual(got, []string{"web_search", DelegateTool}) {
		t.Errorf("researcher-a tools %v", got)
	}
	for _, c := range exp.Children {
		child, ok := a.Child(c.Path)
		if !ok {
			t.Fatalf("no script at %s", c.Path)
		}
		var text strings.Builder
		for _, st := range child.Turns {
			for _, step := range st.Steps {
				if step.Kind == StepText {
					text.WriteString(step.Text)
				}
			}
		}
		if text.String() != c.Text || c.Text == "" {
			t.Errorf("%s: script text %q, expected %q", c.Path, text.String(), c.Text)
		}
	}
	if _, ok := a.Child("0.7"); ok {
		t.Error("found a child that does not exist")
	}
	// A failing child's last turn ends in the provider error carrying its message.
	fail, _ := Embedded().Get("swarm-child-error")
	w, _ := fail.Render(1).Child("0.1")
	if last := w.Turns[len(w.Turns)-1]; last.ErrorAfterStep != len(last.Steps)-1 || last.ErrorMessage != "windows runner unavailable" {
		t.Errorf("failing child's turn: error after %d of %d steps, %q", last.ErrorAfterStep, len(last.Steps), last.ErrorMessage)
	}
}
