package scenarios

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// planScenario is a valid plan scenario: a plan turn, a task turn, the answer; edit changes it.
func planScenario(edit func(s *Scenario)) *Scenario {
	s := &Scenario{
		Name:   "p",
		Timing: Timing{TimeToFirstToken: Dist{Kind: DistConstant, Value: time.Millisecond}, InterToken: Dist{Kind: DistConstant, Value: time.Millisecond}},
		Turns: []Turn{
			{Text: Text{Literal: "planning"}, ToolCalls: []ToolCall{{Name: "propose_plan", Plan: &PlanProposal{
				PlanContent: PlanContent{Goal: "g", Tasks: []PlanTask{{ID: "a"}}},
				Revisions:   []PlanContent{{Goal: "g2", Tasks: []PlanTask{{ID: "a"}, {ID: "b"}}}},
				Decisions: []Decision{
					{Decision: DecisionChangesRequested, Reason: "more", ThinkTime: Dist{Kind: DistUniform, Min: 10 * time.Millisecond, Max: 20 * time.Millisecond}},
					{Decision: DecisionApproved, Reason: "ok"},
				},
			}}}},
			{ToolCalls: []ToolCall{{Name: "run", Events: []ComposeEvent{
				{Kind: EventTaskCompleted, TaskID: "b"},
				{Kind: EventConclave, Action: "write", Key: "k"},
				{Kind: EventConclave, Action: "list"},
				{Kind: EventTrace, Source: "model"},
				{Kind: EventAction, Action: "goal"},
			}}}},
			{Text: Text{Literal: "done"}},
		},
	}
	if edit != nil {
		edit(s)
	}
	return s
}

// TestPlanValidation: every plan and side-event mistake is a field error naming the field.
func TestPlanValidation(t *testing.T) {
	t.Parallel()
	if err := planScenario(nil).Validate(); err != nil {
		t.Fatalf("valid plan scenario: %v", err)
	}
	plan := func(s *Scenario) *PlanProposal { return s.Turns[0].ToolCalls[0].Plan }
	for _, tc := range []struct {
		name string
		edit func(s *Scenario)
		path string
		want string
	}{
		// A plan needs a goal.
		{"no goal", func(s *Scenario) { plan(s).Goal = "" }, "turns[0].toolCalls[0].plan.goal", "missing"},
		// ...and tasks, with unique ids.
		{"no tasks", func(s *Scenario) { plan(s).Tasks = nil }, "turns[0].toolCalls[0].plan.tasks", "at least one task"},
		{"duplicate task", func(s *Scenario) { plan(s).Revisions[0].Tasks[1].ID = "a" }, "turns[0].toolCalls[0].plan.revisions[0].tasks[1].id", "repeats"},
		// The client must answer somehow, even by not answering.
		{"no decisions", func(s *Scenario) { plan(s).Decisions = nil }, "turns[0].toolCalls[0].plan.decisions", "none to let the approval time out"},
		// An unknown decision.
		{"bad decision", func(s *Scenario) { plan(s).Decisions[1].Decision = "maybe" }, "turns[0].toolCalls[0].plan.decisions[1].decision", `"maybe"`},
		// changes_requested cannot be the last word.
		{"changes last", func(s *Scenario) { plan(s).Decisions = plan(s).Decisions[:1] }, "turns[0].toolCalls[0].plan.decisions[0].decision", "changes_requested is the last"},
		// approved ends the approval: nothing may follow.
		{"approved then more", func(s *Scenario) {
			plan(s).Decisions = []Decision{{Decision: DecisionApproved}, {Decision: DecisionRejected}}
		}, "turns[0].toolCalls[0].plan.decisions[0].decision", "1 decision(s) follow"},
		// More revisions than requests for changes.
		{"too many revisions", func(s *Scenario) { plan(s).Revisions = append(plan(s).Revisions, plan(s).PlanContent) }, "turns[0].toolCalls[0].plan.revisions", "at most one revision"},
		// onReject is done or error.
		{"bad onReject", func(s *Scenario) { plan(s).OnReject = "stop" }, "turns[0].toolCalls[0].plan.onReject", `"stop"`},
		// The timeout is bounded.
		{"timeout too long", func(s *Scenario) { plan(s).Timeout = time.Minute }, "turns[0].toolCalls[0].plan.timeout", "30s"},
		// A think time is a distribution like any other.
		{"bad think time", func(s *Scenario) { plan(s).Decisions[0].ThinkTime = Dist{Kind: "zipf"} }, "turns[0].toolCalls[0].plan.decisions[0].thinkTime.kind", "zipf"},
		// A plan call is alone in its turn.
		{"plan not alone", func(s *Scenario) {
			s.Turns[0].ToolCalls = append(s.Turns[0].ToolCalls, ToolCall{Name: "other"})
		}, "turns[0].toolCalls[0].plan", "alone in its turn"},
		// One plan per scenario.
		{"two plans", func(s *Scenario) { s.Turns[1].ToolCalls[0].Plan = plan(s); s.Turns[1].ToolCalls[0].Events = nil }, "turns[1].toolCalls[0].plan", "second plan"},
		// Plans and client abort/stop do not mix.
		{"plan with stop", func(s *Scenario) { s.Client.Stop = &Trigger{AfterChunks: 1} }, "turns[0].toolCalls[0].plan", "client.stop"},
		// A task event must name a task of the approved version (version 2 here).
		{"unknown task", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[0].TaskID = "z" }, "turns[1].toolCalls[0].events[0].taskId", `"z" is not a task`},
		// ...and come after the approval.
		{"task before approval", func(s *Scenario) { plan(s).Decisions[1].Decision = DecisionRejected }, "turns[1].toolCalls[0].events[0].taskId", "no plan was approved"},
		// A task event needs its id.
		{"task without id", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[0].TaskID = "" }, "turns[1].toolCalls[0].events[0].taskId", "missing"},
		// Conclave actions are the seed's four; a write needs a key.
		{"bad conclave action", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[1].Action = "append" }, "turns[1].toolCalls[0].events[1].action", `"append"`},
		{"conclave without key", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[1].Key = "" }, "turns[1].toolCalls[0].events[1].key", "missing"},
		// Trace sources are the seed's list.
		{"bad trace source", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[3].Source = "runtime" }, "turns[1].toolCalls[0].events[3].source", `"runtime"`},
		// An action needs its name.
		{"action without name", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[4].Action = "" }, "turns[1].toolCalls[0].events[4].action", "missing"},
		// Unknown event kinds.
		{"bad kind", func(s *Scenario) { s.Turns[1].ToolCalls[0].Events[0].Kind = "task.started" }, "turns[1].toolCalls[0].events[0].kind", `"task.started"`},
		// _compose is streambench's.
		{"reserved _compose", func(s *Scenario) { s.Turns[1].ToolCalls[0].Arguments = map[string]any{"_compose": 1} }, "turns[1].toolCalls[0].arguments._compose", "reserved"},
		// A plan that ends the run in error is the last turn that plays.
		{"turn after a failing plan", func(s *Scenario) { plan(s).Decisions[1] = Decision{Decision: DecisionNone} }, "turns[1]", "unreachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := planScenario(tc.edit).Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *FieldError
			found := false
			for _, e := range flattenErrors(err) {
				if errors.As(e, &fe) && fe.Path == tc.path && strings.Contains(fe.Problem, tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("want a problem at %s containing %q, got: %v", tc.path, tc.want, err)
			}
		})
	}
	// A plan that ends the run in error may be the last turn.
	last := planScenario(func(s *Scenario) {
		s.Turns[0].ToolCalls[0].Plan.Decisions = []Decision{{Decision: DecisionRejected}}
		s.Turns[0].ToolCalls[0].Plan.Revisions = nil
		s.Turns[0].ToolCalls[0].Plan.OnReject = OnRejectError
		s.Turns = s.Turns[:1]
	})
	if err := last.Validate(); err != nil {
		t.Errorf("a rejected plan (onReject error) in the last turn: %v", err)
	}
}

// flattenErrors unwraps a joined error into its parts.
func flattenErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestPlanRender: the plan's ground truth has one version per decision (the revision after
// changes_requested), the decisions with their think times sampled deterministically, the
// outcome; the runtime's part travels as _compose in the call's arguments, without the
// decisions.
func TestPlanRender(t *testing.T) {
	t.Parallel()
	sc := planScenario(nil).Render(5)
	p := sc.Plan
	if p == nil || p.Turn != 0 || p.Call != 0 || p.Outcome != PlanApproved || len(p.Versions) != 2 || p.Versions[1].Goal != "g2" {
		t.Fatalf("plan %+v", p)
	}
	if d := p.Decisions[0]; d.Decision != DecisionChangesRequested || d.ThinkTime < 10*time.Millisecond || d.ThinkTime > 20*time.Millisecond {
		t.Errorf("decision 0 %+v", d)
	}
	if got := p.ApprovedTasks(); strings.Join(got, ",") != "a,b" {
		t.Errorf("approved tasks %v, want the revision's a,b", got)
	}
	if p.Timeout != DefaultApprovalTimeout || p.OnReject != OnRejectDone || p.EndsInError() {
		t.Errorf("defaults %+v", p)
	}
	var args struct {
		Compose ComposeDirective `json:"_compose"`
	}
	if err := json.Unmarshal([]byte(sc.Turns[0].ToolCalls[0].Arguments), &args); err != nil {
		t.Fatal(err)
	}
	if d := args.Compose.Plan; d == nil || len(d.Versions) != 2 || d.TimeoutMs != DefaultApprovalTimeout.Milliseconds() || d.OnReject != OnRejectDone {
		t.Errorf("_compose.plan %+v", args.Compose.Plan)
	}
	if strings.Contains(sc.Turns[0].ToolCalls[0].Arguments, "decisions") {
		t.Errorf("the client's decisions leaked into the arguments: %s", sc.Turns[0].ToolCalls[0].Arguments)
	}
	if err := json.Unmarshal([]byte(sc.Turns[1].ToolCalls[0].Arguments), &args); err != nil || len(args.Compose.Events) != 5 {
		t.Errorf("_compose.events %+v (%v)", args.Compose.Events, err)
	}
	exp := sc.Expected()
	if exp.Plan != p || len(exp.Turns) != 3 || !exp.Turns[2].Final {
		t.Errorf("expected %d turns, plan %v", len(exp.Turns), exp.Plan)
	}

	if again := planScenario(nil).Render(5); again.Plan.Decisions[0] != p.Decisions[0] {
		t.Errorf("think time not deterministic: %v vs %v", again.Plan.Decisions[0], p.Decisions[0])
	}
}

// TestPlanRenderEndsInError: a plan that ends in error cuts the ground truth after its turn
// and makes its call fail.
func TestPlanRenderEndsInError(t *testing.T) {
	t.Parallel()
	failing := planScenario(func(s *Scenario) {
		pl := s.Turns[0].ToolCalls[0].Plan
		pl.Decisions = []Decision{{Decision: DecisionNone}}
		pl.Revisions = nil
		pl.Timeout = 300 * time.Millisecond
		s.Turns = s.Turns[:1]
	}).Render(5)
	fexp := failing.Expected()
	if !failing.Plan.EndsInError() || failing.Plan.Outcome != PlanUndecided || len(fexp.Turns) != 1 || fexp.Turns[0].Final {
		t.Errorf("undecided plan: %+v, %d turns", failing.Plan, len(fexp.Turns))
	}
	if c := fexp.Turns[0].ToolCalls[0]; c.Outcome != OutcomeError {
		t.Errorf("the failing plan's call settles %s, want error", c.Outcome)
	}
}

// TestPlanYAML: the plan and events read from YAML as documented, with positioned errors.
func TestPlanYAML(t *testing.T) {
	t.Parallel()
	ok := validHeader + `turns:
  - toolCalls:
      - name: propose_plan
        plan:
          goal: g
          participants: [a]
          tasks: [{id: t1, title: T}]
          onReject: error
          timeout: 1s
          decisions: [{decision: rejected, reason: no, thinkTime: 50ms}]
`
	s, err := Parse("plan.yaml", []byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Turns[0].ToolCalls[0].Plan; p.Goal != "g" || p.Timeout != time.Second || p.Decisions[0].ThinkTime.Value != 50*time.Millisecond {
		t.Errorf("plan %+v", p)
	}
	_, err = Parse("plan.yaml", []byte(strings.Replace(ok, "decision: rejected", "decision: nope", 1)))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Line != 14 || !strings.Contains(err.Error(), "plan.yaml") {
		t.Errorf("error %v, want one at plan.yaml line 14", err)
	}
}
