package agentruntime

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/scenarios"
)

// Compose plan approval and side events: after the tool_start of a call with "_compose", the
// compose emitter proposes a plan and waits for the decision, or emits the side events.

// errPlanEnded is the cancel cause of a run that a plan ends in error.
var errPlanEnded = errors.New("plan ended the run")

// errPlanEndedDone is the plan-reject-done fault's cause: the run ends done instead.
var errPlanEndedDone = errors.New("plan ended the run (reported as done: plan-reject-done fault)")

// Runtime identities in plan and conclave frames (the reference runtime has no wallets).
const (
	runtimeWallet = "0xstreambench"
	clientWallet  = "0xclient"
)

// planGate is a compose run's approval slot; safe for concurrent use.
type planGate struct {
	mu         sync.Mutex
	proposalID string
	version    int
	ch         chan compose.ApprovalRequest // nil: no approval pending
}

// errors the approval endpoint answers with, by status.
var (
	errNoApprovalPending = errors.New("no approval is pending for this run")
	errStaleApproval     = errors.New("stale approval")
)

func (g *planGate) open(id string, version int) <-chan compose.ApprovalRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.proposalID, g.version = id, version
	g.ch = make(chan compose.ApprovalRequest, 1)
	return g.ch
}

// close ends the wait: later decisions are refused.
func (g *planGate) close() {
	g.mu.Lock()
	g.ch = nil
	g.mu.Unlock()
}

// decide delivers req if it answers the pending version, once.
func (g *planGate) decide(req compose.ApprovalRequest) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.ch == nil:
		return errNoApprovalPending
	case req.ProposalID != g.proposalID:
		return fmt.Errorf("%w: proposal %q is not the pending proposal %q", errStaleApproval, req.ProposalID, g.proposalID)
	case req.Version != g.version:
		return fmt.Errorf("%w: version %d is not the pending version %d of proposal %q", errStaleApproval, req.Version, g.version, g.proposalID)
	}
	g.ch <- req
	g.ch = nil
	return nil
}

// handleComposeApproval takes the client's decision on a run's pending plan approval.
func (s *Server) handleComposeApproval(w http.ResponseWriter, r *http.Request) {
	agentID, runID := r.PathValue("agentId"), r.PathValue("runId")
	if !validRunID(runID) {
		s.writeError(w, http.StatusBadRequest, "run id "+strconv.Quote(runID)+" is not a run id of this runtime (want "+runIDPrefix+" and 20 characters A-Z2-7, as in the x-compose-run-id header)")
		return
	}
	var req compose.ApprovalRequest
	if !s.readBody(w, r, &req) {
		return
	}
	switch {
	case req.ProposalID == "":
		s.writeError(w, http.StatusBadRequest, `request body: missing "proposalId" (from approval.requested)`)
		return
	case req.Version < 1:
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf(`request body: "version" %d, want the version approval.requested named (>= 1)`, req.Version))
		return
	case !slices.Contains([]string{scenarios.DecisionApproved, scenarios.DecisionRejected,
		scenarios.DecisionChangesRequested}, req.Decision):
		s.writeError(w, http.StatusBadRequest, fmt.Sprintf(`request body: "decision" %q, want approved, rejected or changes_requested`, req.Decision))
		return
	}
	e, ok := s.runs.get(runID)
	if !ok || e.agentID != agentID || e.plan == nil {
		s.writeError(w, http.StatusNotFound, "no open run "+strconv.Quote(runID)+" for agent "+strconv.Quote(agentID)+" (it may have finished already)")
		return
	}
	if err := e.plan.decide(req); err != nil {
		s.writeError(w, http.StatusConflict, fmt.Sprintf("run %s: %v", runID, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Accepted   bool   `json:"accepted"`
		ProposalID string `json:"proposalId"`
		Version    int    `json:"version"`
		Decision   string `json:"decision"`
	}{true, req.ProposalID, req.Version, req.Decision})
}

type composeSide struct {
	gate     *planGate
	approved string           // the approved proposal's id (task events name it as their planId).
	conclave map[string]int64 // each key's version.
}

// sideEvents plays t's "_compose" directive (if it has one that decodes) right after its tool_start.
func (e *composeEmitter) sideEvents(t *toolRun) {
	var v struct {
		Compose *scenarios.ComposeDirective `json:"_compose"`
	}
	if !strings.Contains(t.Args, `"_compose"`) || json.Unmarshal([]byte(t.Args), &v) != nil || v.Compose == nil {
		return
	}
	if v.Compose.Plan != nil {
		e.runPlan(v.Compose.Plan)
	}
	for _, ev := range v.Compose.Events {
		e.sideEvent(ev)
	}
}

// runPlan proposes the plan, version by version, until a decision ends it, the approval times
// out or the run ends; a rejection with onReject error and a timeout cancel the run.
func (e *composeEmitter) runPlan(d *scenarios.PlanDirective) {
	rn, f := e.rn, e.rn.faults
	if len(d.Versions) == 0 || e.side.gate == nil {
		return
	}
	timeout := time.Duration(d.TimeoutMs) * time.Millisecond
	if timeout <= 0 || timeout > scenarios.MaxApprovalTimeout {
		timeout = scenarios.DefaultApprovalTimeout
	}
	id := "proposal_" + rand.Text()[:16]
	end := func(format string, args ...any) {
		cause := errPlanEnded
		if f.has("plan-reject-done") {
			cause = errPlanEndedDone
		}
		rn.cancel(fmt.Errorf("%w: "+format, append([]any{cause}, args...)...))
	}
	for v := 1; ; v++ {
		content := d.Versions[min(v-1, len(d.Versions)-1)]
		version := v
		if f.has("plan-version-stuck") {
			version = 1
		}
		decided := e.side.gate.open(id, version)
		proposed := e.planProposed(id, version, content)
		requested := compose.PlanEvent{Type: compose.TypeApprovalRequested, ProposalID: id, Version: version, State: compose.StateAwaitingApproval, RootRunID: rn.id, RunID: rn.id, TimeoutMs: timeout.Milliseconds()}
		first, second := any(proposed), any(requested)
		if f.has("approval-before-proposal") {
			first, second = second, first
		}
		_ = e.w.Event(first)
		_ = e.w.Event(second)
		if f.has("task-before-approval") && len(content.Tasks) > 0 {
			_ = e.w.Event(compose.TaskEvent{Type: scenarios.EventTaskHeartbeat, Action: "plan", Source: "runtime", Status: "running", PlanID: id, TaskID: content.Tasks[0].ID, Result: compose.TaskResult{Success: true}})
		}
		rn.flush()
		timer := time.NewTimer(timeout)
		var req compose.ApprovalRequest
		select {
		case req = <-decided:
			timer.Stop()
		case <-timer.C:
			e.side.gate.close()
			end("approval of %s version %d not decided within %v", id, version, timeout)
			return
		case <-rn.ctx.Done():
			timer.Stop()
			e.side.gate.close()
			return
		}
		_ = e.w.Event(compose.PlanEvent{Type: compose.TypeApprovalDecided, ProposalID: id, Version: version, State: req.Decision, Decision: req.Decision, Approver: clientWallet, Reason: req.Reason})
		switch req.Decision {
		case scenarios.DecisionApproved:
			e.side.approved = id
			return
		case scenarios.DecisionRejected:
			if d.OnReject == scenarios.OnRejectError {
				end("plan %s rejected: %s", id, req.Reason)
			}
			return
		}
		_ = e.w.Event(compose.PlanEvent{Type: compose.TypePlanFeedbackRequested, ProposalID: id, Version: version, State: scenarios.DecisionChangesRequested, Feedback: req.Reason})
	}
}

func (e *composeEmitter) planProposed(id string, version int, c scenarios.PlanContent) compose.PlanEvent {
	p := &compose.Proposal{Goal: c.Goal, Participants: c.Participants, Tasks: make([]compose.ProposalTask, len(c.Tasks))}
	if p.Participants == nil {
		p.Participants = []string{}
	}
	var md strings.Builder
	md.WriteString("# Plan\n\nGoal: " + c.Goal + "\n")
	for i, t := range c.Tasks {
		p.Tasks[i] = compose.ProposalTask{ID: t.ID, Title: t.Title}
		md.WriteString("\n- " + t.ID + ": " + t.Title)
	}
	now := time.Now().UnixMilli()
	return compose.PlanEvent{
		Type: compose.TypePlanProposed, ProposalID: id, Version: version, State: compose.StateAwaitingApproval,
		RootRunID: e.rn.id, RunID: e.rn.id, RequestedBy: runtimeWallet, Proposal: p, Markdown: md.String(),
		TS: now, UpdatedAt: now, Display: &compose.PlanDisplay{Kind: "swarm", ID: id, Name: "plan proposal"},
	}
}

// taskStatuses are the status of a task event by kind; a heartbeat's is running.
var taskStatuses = map[string]string{
	scenarios.EventTaskCompleted: "completed", scenarios.EventTaskBlocked: "blocked", scenarios.EventTaskFailed: "failed"}

func (e *composeEmitter) sideEvent(ev scenarios.ComposeEvent) {
	f := e.rn.faults
	switch ev.Kind {
	case scenarios.EventAction:
		status := cmp.Or(ev.Status, "completed")
		a := compose.ActionEvent{Type: "action", Action: ev.Action, Source: "runtime", Status: &status, Result: compose.TaskResult{Success: true}}
		if f.has("action-no-status") {
			a.Status = nil
		}
		_ = e.w.Event(a)
	case scenarios.EventConclave:
		_ = e.w.Event(e.conclave(ev))
	case scenarios.EventTrace:
		source := ev.Source
		if f.has("trace-bad-source") {
			source = "runtime"
		}
		_ = e.w.Event(compose.TraceEvent{Type: "trace", Source: source, Stage: ev.Stage, Action: ev.Stage, Message: ev.Message,
			Display: &compose.Display{Kind: ev.Source, Name: ev.Source, Summary: ev.Message}})
	default: // task.*
		_ = e.w.Event(compose.TaskEvent{Type: ev.Kind, Action: "plan", Source: "runtime", Status: cmp.Or(taskStatuses[ev.Kind], "running"),
			PlanID: e.side.approved, TaskID: ev.TaskID, Result: compose.TaskResult{Success: ev.Kind != scenarios.EventTaskFailed}})
	}
}

// conclave applies one operation to the run's shared workspace and reports it.
func (e *composeEmitter) conclave(ev scenarios.ComposeEvent) compose.ConclaveEvent {
	if e.side.conclave == nil {
		e.side.conclave = map[string]int64{}
	}
	out := compose.ConclaveEvent{Type: "conclave", Action: ev.Action, RootRunID: e.rn.id, Success: true}
	if ev.Action == "list" {
		return out
	}
	out.Key = ev.Key
	v, exists := e.side.conclave[ev.Key]
	switch ev.Action {
	case "write":
		v++
		out.WrittenBy = runtimeWallet
		if e.rn.faults.has("conclave-version-reset") {
			v = 1
		}
	case "delete":
		if exists {
			v++
		} else {
			out.Success = false
		}
	case "read":
		out.Success = exists
	}
	e.side.conclave[ev.Key] = v
	if exists || ev.Action == "write" {
		out.Version = &v
	}
	return out
}
