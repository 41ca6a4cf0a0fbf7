package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Plan approval and compose side events travel to the runtime in the tool call's arguments as
// "_compose" (ComposeDirective), beside "_sim", so no runtime needs the scenario files.

// Plan decisions, as the client sends them. DecisionNone is scripted only: the client never
// answers, so the approval times out into an error.
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

// Approval timeouts: the default and the cap.
const (
	DefaultApprovalTimeout = 10 * time.Second
	MaxApprovalTimeout     = 30 * time.Second
)

// PlanProposal makes a tool call (alone in its turn) the agent's plan proposal, settled after
// the client's decision.
type PlanProposal struct {
	PlanContent `yaml:",inline"`
	// Revisions are versions 2, 3, ... proposed after each changes_requested; past the last,
	// it is proposed again.
	Revisions []PlanContent `yaml:"revisions" json:"revisions,omitempty"`
	// Decisions answer the approval requests in order: changes_requested any number of times,
	// then approved, rejected or none.
	Decisions []Decision    `yaml:"decisions" json:"decisions"`
	OnReject  string        `yaml:"onReject" json:"onReject,omitempty"` // what a rejection does: done (default) or error.
	Timeout   time.Duration `yaml:"timeout" json:"timeout,omitempty"`   // the wait for a decision (0: DefaultApprovalTimeout).
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

// ComposeEvent is one side event the runtime emits after a tool_start; Kind selects the fields.
type ComposeEvent struct {
	Kind    string `yaml:"kind" json:"kind"`
	TaskID  string `yaml:"taskId" json:"taskId,omitempty"` // names a task of the approved plan (task.*).
	Action  string `yaml:"action" json:"action,omitempty"` // the slash command (action) or the conclave operation.
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

// ComposeDirective is the "_compose" member of a scripted tool call's arguments.
type ComposeDirective struct {
	Plan   *PlanDirective `json:"plan,omitempty"`
	Events []ComposeEvent `json:"events,omitempty"`
}

// PlanDirective is what the runtime needs to play a plan (the decisions are the client's).
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

// ScriptPlan is a scenario's plan rendered for one seed.
type ScriptPlan struct {
	Turn, Call int              // locate the plan's tool call.
	Versions   []PlanContent    // the content proposed at version 1, 2, ...
	Decisions  []ScriptDecision // the client's answers; the last may be DecisionNone.
	Outcome    string           // approved, rejected or undecided.
	OnReject   string
	Timeout    time.Duration
}

// ScriptDecision is one decision with its think time sampled.
type ScriptDecision struct {
	Decision  string
	Reason    string
	ThinkTime time.Duration
}

// EndsInError reports whether the plan ends the run in error (rejected so, or undecided).
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

func renderPlan(seed uint64, ti, ci int, p *PlanProposal) *ScriptPlan {
	sp := &ScriptPlan{Turn: ti, Call: ci, OnReject: cmp.Or(p.OnReject, OnRejectDone), Outcome: PlanUndecided,
		Timeout: cmp.Or(max(p.Timeout, 0), DefaultApprovalTimeout)}
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

// addComposeDirective adds "_compose" to a call's arguments when it has a plan or events.
func addComposeDirective(seed uint64, ti, ci int, tc ToolCall, call *ScriptToolCall, args map[string]any) {
	if tc.Plan == nil && len(tc.Events) == 0 {
		return
	}
	d := ComposeDirective{Events: tc.Events}
	if tc.Plan != nil {
		sp := renderPlan(seed, ti, ci, tc.Plan)
		d.Plan = &PlanDirective{Versions: sp.Versions, OnReject: sp.OnReject, TimeoutMs: sp.Timeout.Milliseconds()}
		if sp.EndsInError() {
			call.Outcome = OutcomeError
		}
	}
	args["_compose"] = d
}

// validateCompose checks a tool call's plan and events. approved holds the task ids a plan
// approved in an earlier turn (nil: none), so task events can be checked against it.
func (tc ToolCall) validateCompose(errs *fieldErrors, path string, approved []string) {
	if _, ok := tc.Arguments["_compose"]; ok {
		errs.add(path+".arguments._compose", "reserved: streambench adds _compose itself from plan and events")
	}
	if p := tc.Plan; p != nil {
		pp := path + ".plan"
		p.PlanContent.validate(errs, pp)
		for i, r := range p.Revisions {
			r.validate(errs, fmt.Sprintf("%s.revisions[%d]", pp, i))
		}
		if len(p.Decisions) == 0 {
			errs.add(pp+".decisions", "missing; expected at least one decision (approved, rejected, changes_requested, or none to let the approval time out)")
		}
		changes := 0
		for i, d := range p.Decisions {
			dp := fmt.Sprintf("%s.decisions[%d]", pp, i)
			last := i == len(p.Decisions)-1
			switch d.Decision {
			case DecisionChangesRequested:
				changes++
				if last {
					errs.add(dp+".decision", "changes_requested is the last decision; expected approved, rejected or none after it (the runtime proposes a new version)")
				}
			case DecisionApproved, DecisionRejected, DecisionNone:
				if !last {
					errs.add(dp+".decision", "%s ends the approval, but %d decision(s) follow; expected it last", d.Decision, len(p.Decisions)-1-i)
				}
			default:
				errs.add(dp+".decision", "%q; expected approved, rejected, changes_requested or none", d.Decision)
			}
			d.ThinkTime.validate(errs, dp+".thinkTime")
		}
		if len(p.Revisions) > changes {
			errs.add(pp+".revisions", "%d revisions but %d changes_requested decisions; expected at most one revision per changes_requested", len(p.Revisions), changes)
		}
		switch p.OnReject {
		case "", OnRejectDone, OnRejectError:
		default:
			errs.add(pp+".onReject", "%q; expected done or error", p.OnReject)
		}
		if p.Timeout < 0 || p.Timeout > MaxApprovalTimeout {
			errs.add(pp+".timeout", "%v; expected a duration in (0, %v] (0 means %v)", p.Timeout, MaxApprovalTimeout, DefaultApprovalTimeout)
		}
		if len(tc.Events) > 0 {
			errs.add(path+".events", "a plan call emits no side events; expected them on a later tool call")
		}
	}
	for i, ev := range tc.Events {
		ep := fmt.Sprintf("%s.events[%d]", path, i)
		switch ev.Kind {
		case EventTaskCompleted, EventTaskBlocked, EventTaskFailed, EventTaskHeartbeat:
			switch {
			case ev.TaskID == "":
				errs.add(ep+".taskId", "missing; expected the id of a task of the approved plan")
			case approved == nil:
				errs.add(ep+".taskId", "no plan was approved in an earlier turn; expected task events only after an approved plan")
			case !slices.Contains(approved, ev.TaskID):
				errs.add(ep+".taskId", "%q is not a task of the approved plan; expected one of %v", ev.TaskID, approved)
			}
		case EventAction:
			if ev.Action == "" {
				errs.add(ep+".action", "missing; expected the action's name (goal, plan, ...)")
			}
		case EventConclave:
			if !slices.Contains(conclaveActions, ev.Action) {
				errs.add(ep+".action", "%q; expected one of %v", ev.Action, conclaveActions)
			} else if ev.Action != "list" && ev.Key == "" {
				errs.add(ep+".key", "missing; expected the conclave key a %s names", ev.Action)
			}
		case EventTrace:
			if !slices.Contains(TraceSources(), ev.Source) {
				errs.add(ep+".source", "%q; expected one of %v", ev.Source, TraceSources())
			}
		default:
			errs.add(ep+".kind", "%q; expected task.completed, task.blocked, task.failed, task.heartbeat, action, conclave or trace", ev.Kind)
		}
	}
}

func (c PlanContent) validate(errs *fieldErrors, path string) {
	if c.Goal == "" {
		errs.add(path+".goal", "missing; expected the plan's goal")
	}
	if len(c.Tasks) == 0 {
		errs.add(path+".tasks", "missing; expected at least one task")
	}
	seen := map[string]bool{}
	for i, t := range c.Tasks {
		switch {
		case t.ID == "":
			errs.add(fmt.Sprintf("%s.tasks[%d].id", path, i), "missing; expected a task id")
		case seen[t.ID]:
			errs.add(fmt.Sprintf("%s.tasks[%d].id", path, i), "%q repeats an earlier task's id; expected unique ids", t.ID)
		}
		seen[t.ID] = true
	}
}

// validatePlans checks every call's plan and events, and the scenario-wide plan rules.
func (s *Scenario) validatePlans(errs *fieldErrors) {
	var approved []string
	plans := 0
	for ti, turn := range s.Turns {
		var next []string
		for ci, tc := range turn.ToolCalls {
			path := fmt.Sprintf("turns[%d].toolCalls[%d]", ti, ci)
			tc.validateCompose(errs, path, approved)
			if tc.Plan == nil {
				continue
			}
			plans++
			if plans > 1 {
				errs.add(path+".plan", "a second plan; expected at most one plan per scenario")
			}
			if len(turn.ToolCalls) > 1 {
				errs.add(path+".plan", "a plan call shares its turn with other tool calls; expected it alone in its turn")
			}
			if s.Client.Abort != nil || s.Client.Stop != nil {
				errs.add(path+".plan", "with client.abort or client.stop; expected a plan scenario without them")
			}
			if len(tc.Plan.Decisions) > 0 && tc.Plan.Decisions[len(tc.Plan.Decisions)-1].Decision == DecisionApproved {
				next = renderPlan(0, ti, ci, tc.Plan).ApprovedTasks()
			}
		}
		if next != nil {
			approved = next
		}
	}
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

// planEndTurn is the turn of a plan that ends the run in error, or -1.
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
