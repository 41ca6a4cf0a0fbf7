package scenarios

import (
	"fmt"
	"slices"
	"time"
)

// Plan approval and the compose side events (task.*, action, conclave, trace) a scripted tool
// call makes the runtime emit. They travel to the runtime in the tool call's arguments, as the
// "_compose" member (ComposeDirective), next to "_sim": any runtime that reads its tool
// arguments can reproduce them without sharing scenario files.

// Plan decisions, as the client sends them and approval.decided reports them. DecisionNone is
// scripted only: the client never answers, so the approval must time out into an error.
const (
	DecisionApproved         = "approved"
	DecisionRejected         = "rejected"
	DecisionChangesRequested = "changes_requested"
	DecisionNone             = "none"
)

// What a rejected plan does to the run (PlanProposal.OnReject).
const (
	OnRejectDone  = "done"  // the runtime tells the model and the run goes on to its answer
	OnRejectError = "error" // the runtime ends the run with an error terminal
)

// Approval timeouts: the default and the cap, so an undecided approval ends within a bound.
const (
	DefaultApprovalTimeout = 10 * time.Second
	MaxApprovalTimeout     = 30 * time.Second
)

// PlanProposal makes a tool call the agent's plan proposal: the runtime proposes the plan
// (plan.proposed, approval.requested) and waits for the client's decision before the tool
// settles. A plan tool call is alone in its turn.
type PlanProposal struct {
	PlanContent `yaml:",inline"`
	// Revisions are the plan's versions 2, 3, ... proposed after each changes_requested
	// decision; when there are fewer than such decisions the last content is proposed again.
	Revisions []PlanContent `yaml:"revisions" json:"revisions,omitempty"`
	// Decisions are the client's answers, in order, one per approval request: changes_requested
	// any number of times, then approved, rejected or none (the client never answers).
	Decisions []Decision `yaml:"decisions" json:"decisions"`
	OnReject  string     `yaml:"onReject" json:"onReject,omitempty"` // what a rejection does: done (default) or error.
	// Timeout is how long the runtime waits for a decision before it ends the run with an
	// error (default DefaultApprovalTimeout, at most MaxApprovalTimeout).
	Timeout time.Duration `yaml:"timeout" json:"timeout,omitempty"`
}

// PlanContent is what a plan proposes.
type PlanContent struct {
	Goal         string     `yaml:"goal" json:"goal"`
	Participants []string   `yaml:"participants" json:"participants,omitempty"`
	Tasks        []PlanTask `yaml:"tasks" json:"tasks"`
}

// PlanTask is one task of a plan; task.* events reference it by ID.
type PlanTask struct {
	ID    string `yaml:"id" json:"id"`
	Title string `yaml:"title" json:"title,omitempty"`
}

// Decision is one scripted client answer to an approval request.
type Decision struct {
	Decision  string `yaml:"decision" json:"decision"`       // approved, rejected, changes_requested or none.
	Reason    string `yaml:"reason" json:"reason,omitempty"` // goes with the decision (and is the feedback of changes_requested).
	ThinkTime Dist   `yaml:"thinkTime" json:"thinkTime"`     // how long the client waits after approval.requested before it answers.
}

// ComposeEvent is one side event the runtime emits while a tool runs (right after its
// tool_start). Kind selects which fields apply.
type ComposeEvent struct {
	// Kind is task.completed, task.blocked, task.failed, task.heartbeat, action, conclave or
	// trace.
	Kind   string `yaml:"kind" json:"kind"`
	TaskID string `yaml:"taskId" json:"taskId,omitempty"` // names a task of the approved plan (task.*).
	// Action is the slash command (action: goal, plan, ...) or the conclave operation
	// (write, read, list, delete).
	Action  string `yaml:"action" json:"action,omitempty"`
	Status  string `yaml:"status" json:"status,omitempty"` // the action's status (default completed).
	Key     string `yaml:"key" json:"key,omitempty"`       // the conclave key (write, read, delete).
	Source  string `yaml:"source" json:"source,omitempty"` // Source, Stage and Message describe a trace; Source is one of TraceSources.
	Stage   string `yaml:"stage" json:"stage,omitempty"`
	Message string `yaml:"message" json:"message,omitempty"`
}

// Compose side event kinds.
const (
	EventTaskCompleted = "task.completed"
	EventTaskBlocked   = "task.blocked"
	EventTaskFailed    = "task.failed"
	EventTaskHeartbeat = "task.heartbeat"
	EventAction        = "action"
	EventConclave      = "conclave"
	EventTrace         = "trace"
)

// conclaveActions are the conclave operations of the seed.
var conclaveActions = []string{"write", "read", "list", "delete"}

// TraceSources are the trace sources the seed lists.
func TraceSources() []string {
	return []string{"capability", "model", "tool", "agent", "harness", "swarm", "route"}
}

// ComposeDirective is the "_compose" member of a scripted tool call's arguments: the plan it
// proposes and the side events it emits. Absent when the call has neither.
type ComposeDirective struct {
	Plan   *PlanDirective `json:"plan,omitempty"`
	Events []ComposeEvent `json:"events,omitempty"`
}

// PlanDirective is what the runtime needs to play a plan: its versions in order, what a
// rejection does and how long to wait for a decision. The decisions are the client's.
type PlanDirective struct {
	Versions  []PlanContent `json:"versions"`
	OnReject  string        `json:"onReject"`
	TimeoutMs int64         `json:"timeoutMs"`
}

// Plan outcomes (ScriptPlan.Outcome).
const (
	PlanApproved  = "approved"
	PlanRejected  = "rejected"
	PlanUndecided = "undecided" // the client never answered: the approval times out
)

// ScriptPlan is a scenario's plan rendered for one seed: the ground truth the client plays
// (Decisions with their think times) and the checker judges (versions, outcome, tasks).
type ScriptPlan struct {
	// Turn and Call locate the plan's tool call.
	Turn, Call int
	// Versions is the content proposed at version 1, 2, ... (one per approval request).
	Versions []PlanContent
	// Decisions are the client's answers with their think times resolved; the last may be
	// DecisionNone.
	Decisions []ScriptDecision
	// Outcome is approved, rejected or undecided.
	Outcome  string
	OnReject string
	Timeout  time.Duration
}

// ScriptDecision is one decision with its think time sampled.
type ScriptDecision struct {
	Decision  string
	Reason    string
	ThinkTime time.Duration
}

// EndsInError reports whether the plan ends the run with an error terminal: a rejection with
// onReject error, or an approval nobody answers.
func (p *ScriptPlan) EndsInError() bool {
	return p != nil && (p.Outcome == PlanUndecided || (p.Outcome == PlanRejected && p.OnReject == OnRejectError))
}

// ApprovedTasks are the task ids of the approved version (nil unless approved).
func (p *ScriptPlan) ApprovedTasks() []string {
	if p == nil || p.Outcome != PlanApproved || len(p.Versions) == 0 {
		return nil
	}
	var ids []string
	for _, t := range p.Versions[len(p.Versions)-1].Tasks {
		ids = append(ids, t.ID)
	}
	return ids
}

// renderPlan resolves a plan proposal: versions, decisions and outcome.
func renderPlan(seed uint64, ti, ci int, p *PlanProposal) *ScriptPlan {
	sp := &ScriptPlan{Turn: ti, Call: ci, OnReject: p.OnReject, Timeout: p.Timeout, Outcome: PlanUndecided}
	if sp.OnReject == "" {
		sp.OnReject = OnRejectDone
	}
	if sp.Timeout <= 0 {
		sp.Timeout = DefaultApprovalTimeout
	}
	content := p.PlanContent
	r := rng(seed, "plan-think", ti, ci)
	for di, d := range p.Decisions {
		sp.Versions = append(sp.Versions, content)
		sp.Decisions = append(sp.Decisions, ScriptDecision{Decision: d.Decision, Reason: d.Reason, ThinkTime: d.ThinkTime.Sample(r)})
		switch d.Decision {
		case DecisionChangesRequested:
			if di < len(p.Revisions) {
				content = p.Revisions[di]
			}
			continue
		case DecisionApproved:
			sp.Outcome = PlanApproved
		case DecisionRejected:
			sp.Outcome = PlanRejected
		}
		break
	}
	return sp
}

// directive is the runtime's part of the plan.
func (p *ScriptPlan) directive() *PlanDirective {
	return &PlanDirective{Versions: p.Versions, OnReject: p.OnReject, TimeoutMs: p.Timeout.Milliseconds()}
}

// addComposeDirective adds "_compose" to a tool call's arguments when it proposes a plan or
// emits side events; a plan that ends the run in error makes the call's scripted outcome
// error (the runtime settles it cancelled, reported failed).
func addComposeDirective(seed uint64, ti, ci int, tc ToolCall, call *ScriptToolCall, args map[string]any) {
	if tc.Plan == nil && len(tc.Events) == 0 {
		return
	}
	d := ComposeDirective{Events: tc.Events}
	if tc.Plan != nil {
		sp := renderPlan(seed, ti, ci, tc.Plan)
		d.Plan = sp.directive()
		if sp.EndsInError() {
			call.Outcome = OutcomeError
		}
	}
	args["_compose"] = d
}

// applyPlan cuts the ground truth at a plan that ends the run in error: no later turn is
// played, and the plan's turn is not the answer.
func (e *Expected) applyPlan(p *ScriptPlan) {
	e.Plan = p
	if !p.EndsInError() || p.Turn >= len(e.Turns) {
		return
	}
	e.Turns = e.Turns[:p.Turn+1]
	e.Turns[p.Turn].Final = false
}

// validateCompose checks a tool call's plan and events. approved holds the task ids a plan
// approved in an earlier turn (nil: none), so task events can be checked against it.
func (tc ToolCall) validateCompose(path string, approved []string) []*FieldError {
	var errs []*FieldError
	bad := func(p, format string, args ...any) {
		errs = append(errs, &FieldError{Path: p, Problem: fmt.Sprintf(format, args...)})
	}
	if _, ok := tc.Arguments["_compose"]; ok {
		bad(path+".arguments._compose", "reserved: streambench adds _compose itself from plan and events")
	}
	if p := tc.Plan; p != nil {
		pp := path + ".plan"
		errs = append(errs, p.PlanContent.validate(pp)...)
		for i, r := range p.Revisions {
			errs = append(errs, r.validate(fmt.Sprintf("%s.revisions[%d]", pp, i))...)
		}
		if len(p.Decisions) == 0 {
			bad(pp+".decisions", "missing; expected at least one decision (approved, rejected, changes_requested, or none to let the approval time out)")
		}
		changes := 0
		for i, d := range p.Decisions {
			dp := fmt.Sprintf("%s.decisions[%d]", pp, i)
			last := i == len(p.Decisions)-1
			switch d.Decision {
			case DecisionChangesRequested:
				changes++
				if last {
					bad(dp+".decision", "changes_requested is the last decision; expected approved, rejected or none after it (the runtime proposes a new version)")
				}
			case DecisionApproved, DecisionRejected, DecisionNone:
				if !last {
					bad(dp+".decision", "%s ends the approval, but %d decision(s) follow; expected it last", d.Decision, len(p.Decisions)-1-i)
				}
			default:
				bad(dp+".decision", "%q; expected approved, rejected, changes_requested or none", d.Decision)
			}
			errs = append(errs, d.ThinkTime.validate(dp+".thinkTime")...)
		}
		if len(p.Revisions) > changes {
			bad(pp+".revisions", "%d revisions but %d changes_requested decisions; expected at most one revision per changes_requested", len(p.Revisions), changes)
		}
		switch p.OnReject {
		case "", OnRejectDone, OnRejectError:
		default:
			bad(pp+".onReject", "%q; expected done or error", p.OnReject)
		}
		if p.Timeout < 0 || p.Timeout > MaxApprovalTimeout {
			bad(pp+".timeout", "%v; expected a duration in (0, %v] (0 means %v)", p.Timeout, MaxApprovalTimeout, DefaultApprovalTimeout)
		}
		if len(tc.Events) > 0 {
			bad(path+".events", "a plan call emits no side events; expected them on a later tool call")
		}
	}
	for i, ev := range tc.Events {
		ep := fmt.Sprintf("%s.events[%d]", path, i)
		switch ev.Kind {
		case EventTaskCompleted, EventTaskBlocked, EventTaskFailed, EventTaskHeartbeat:
			switch {
			case ev.TaskID == "":
				bad(ep+".taskId", "missing; expected the id of a task of the approved plan")
			case approved == nil:
				bad(ep+".taskId", "no plan was approved in an earlier turn; expected task events only after an approved plan")
			case !slices.Contains(approved, ev.TaskID):
				bad(ep+".taskId", "%q is not a task of the approved plan; expected one of %v", ev.TaskID, approved)
			}
		case EventAction:
			if ev.Action == "" {
				bad(ep+".action", "missing; expected the action's name (goal, plan, ...)")
			}
		case EventConclave:
			if !slices.Contains(conclaveActions, ev.Action) {
				bad(ep+".action", "%q; expected one of %v", ev.Action, conclaveActions)
			} else if ev.Action != "list" && ev.Key == "" {
				bad(ep+".key", "missing; expected the conclave key a %s names", ev.Action)
			}
		case EventTrace:
			if !slices.Contains(TraceSources(), ev.Source) {
				bad(ep+".source", "%q; expected one of %v", ev.Source, TraceSources())
			}
		default:
			bad(ep+".kind", "%q; expected task.completed, task.blocked, task.failed, task.heartbeat, action, conclave or trace", ev.Kind)
		}
	}
	return errs
}

// validate checks one plan content.
func (c PlanContent) validate(path string) []*FieldError {
	var errs []*FieldError
	if c.Goal == "" {
		errs = append(errs, &FieldError{Path: path + ".goal", Problem: "missing; expected the plan's goal"})
	}
	if len(c.Tasks) == 0 {
		errs = append(errs, &FieldError{Path: path + ".tasks", Problem: "missing; expected at least one task"})
	}
	seen := map[string]bool{}
	for i, t := range c.Tasks {
		switch {
		case t.ID == "":
			errs = append(errs, &FieldError{Path: fmt.Sprintf("%s.tasks[%d].id", path, i), Problem: "missing; expected a task id"})
		case seen[t.ID]:
			errs = append(errs, &FieldError{Path: fmt.Sprintf("%s.tasks[%d].id", path, i), Problem: fmt.Sprintf("%q repeats an earlier task's id; expected unique ids", t.ID)})
		}
		seen[t.ID] = true
	}
	return errs
}

// validatePlans checks the scenario-wide plan rules: at most one plan, alone in its turn, not
// in the last turn, no abort or stop with it; and every call's plan and events, with task events
// judged against the plan approved in an earlier turn.
func (s *Scenario) validatePlans() []*FieldError {
	var errs []*FieldError
	var approved []string
	plans := 0
	for ti, turn := range s.Turns {
		var next []string
		for ci, tc := range turn.ToolCalls {
			path := fmt.Sprintf("turns[%d].toolCalls[%d]", ti, ci)
			errs = append(errs, tc.validateCompose(path, approved)...)
			if tc.Plan == nil {
				continue
			}
			plans++
			if plans > 1 {
				errs = append(errs, &FieldError{Path: path + ".plan", Problem: "a second plan; expected at most one plan per scenario"})
			}
			if len(turn.ToolCalls) > 1 {
				errs = append(errs, &FieldError{Path: path + ".plan", Problem: "a plan call shares its turn with other tool calls; expected it alone in its turn"})
			}
			if s.Client.Abort != nil || s.Client.Stop != nil {
				errs = append(errs, &FieldError{Path: path + ".plan", Problem: "with client.abort or client.stop; expected a plan scenario without them"})
			}
			if len(tc.Plan.Decisions) > 0 && tc.Plan.Decisions[len(tc.Plan.Decisions)-1].Decision == DecisionApproved {
				sp := renderPlan(0, ti, ci, tc.Plan)
				next = sp.ApprovedTasks()
			}
		}
		if next != nil {
			approved = next
		}
	}
	return errs
}

// scriptPlan renders the scenario's plan, if the script reaches its turn without a fault.
func (s *Scenario) scriptPlan(seed uint64, script *Script) *ScriptPlan {
	for ti, turn := range s.Turns {
		for ci, tc := range turn.ToolCalls {
			if tc.Plan == nil {
				continue
			}
			if ti >= len(script.Turns) || script.Turns[ti].HTTPStatus != 0 || script.Turns[ti].ErrorAfterStep >= 0 {
				return nil
			}
			return renderPlan(seed, ti, ci, tc.Plan)
		}
	}
	return nil
}

// planEndTurn is the turn of a plan that ends the run in error (rejected with onReject error,
// or undecided), or -1: no turn may follow it.
func (s *Scenario) planEndTurn() int {
	for ti, turn := range s.Turns {
		for ci, tc := range turn.ToolCalls {
			if tc.Plan != nil && renderPlan(0, ti, ci, tc.Plan).EndsInError() {
				return ti
			}
		}
	}
	return -1
}
