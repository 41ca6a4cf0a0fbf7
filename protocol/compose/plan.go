package compose

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
)

// Plan approval and side events: the frames (plan.*, approval.*, task.*, action, conclave,
// trace, timing), the approval request and the checker's rules for them.

var (
	_ protocol.Approver         = (*Client)(nil)
	_ protocol.ApprovalObserver = (*Checker)(nil)
	_ protocol.Measurer         = (*Checker)(nil)
)

// Plan and approval event types.
const (
	TypePlanProposed          = "plan.proposed"
	TypeApprovalRequested     = "approval.requested"
	TypeApprovalDecided       = "approval.decided"
	TypePlanFeedbackRequested = "plan.feedback_requested"
)

// StateAwaitingApproval is an undecided proposal's state; a decided one's is the decision.
const StateAwaitingApproval = "awaiting_approval"

// UndecidedSlack is how much later than its scripted timeout an undecided approval may end the
// run in error (timers and scheduling under load).
const UndecidedSlack = 5 * time.Second

// PlanEvent is a plan.* or approval.* frame; fields a type does not use are omitted.
type PlanEvent struct {
	Type        string       `json:"type"`
	ProposalID  string       `json:"proposalId"`
	Version     int          `json:"version"`
	State       string       `json:"state"`
	RootRunID   string       `json:"rootRunId,omitempty"`
	RunID       string       `json:"runId,omitempty"`
	RequestedBy string       `json:"requestedBy,omitempty"`
	Proposal    *Proposal    `json:"proposal,omitempty"`
	Markdown    string       `json:"markdown,omitempty"`
	Decision    string       `json:"decision,omitempty"`
	Approver    string       `json:"approver,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	Feedback    string       `json:"feedback,omitempty"`
	TimeoutMs   int64        `json:"timeoutMs,omitempty"`
	TS          int64        `json:"ts,omitempty"`
	UpdatedAt   int64        `json:"updatedAt,omitempty"`
	Display     *PlanDisplay `json:"display,omitempty"`
}

// Proposal is a plan's content as plan.proposed carries it.
type Proposal struct {
	Goal         string         `json:"goal"`
	Participants []string       `json:"participants"`
	Tasks        []ProposalTask `json:"tasks"`
}

// ProposalTask is one task of a proposal.
type ProposalTask struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

// PlanDisplay is plan.proposed's UI hint.
type PlanDisplay struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// TaskEvent is a task.* frame.
type TaskEvent struct {
	Type   string     `json:"type"`
	Action string     `json:"action"`
	Source string     `json:"source"`
	Status string     `json:"status"`
	PlanID string     `json:"planId"`
	TaskID string     `json:"taskId"`
	Result TaskResult `json:"result"`
}

// TaskResult is a task event's result.
type TaskResult struct {
	Success bool `json:"success"`
}

// ActionEvent is an action frame; Status is a pointer so an omitted one can be written.
type ActionEvent struct {
	Type   string     `json:"type"`
	Action string     `json:"action"`
	Source string     `json:"source"`
	Status *string    `json:"status,omitempty"`
	Result TaskResult `json:"result"`
}

// ConclaveEvent is a conclave frame; list has no key and no version.
type ConclaveEvent struct {
	Type      string `json:"type"`
	Action    string `json:"action"`
	RootRunID string `json:"rootRunId"`
	Key       string `json:"key,omitempty"`
	Success   bool   `json:"success"`
	Version   *int64 `json:"version,omitempty"`
	WrittenBy string `json:"writtenBy,omitempty"`
}

// TraceEvent is a trace frame.
type TraceEvent struct {
	Type    string   `json:"type"`
	Source  string   `json:"source"`
	Stage   string   `json:"stage"`
	Action  string   `json:"action"`
	Message string   `json:"message"`
	Display *Display `json:"display,omitempty"`
}

// Event writes one JSON frame of v (a PlanEvent, TaskEvent, ...), without HTML escaping.
func (w *Writer) Event(v any) error {
	b, err := jsonwire.MarshalNoHTML(v)
	if err != nil {
		return fmt.Errorf("compose: encode %T: %w", v, err)
	}
	return w.f.Write(append(append([]byte("data: "), b...), "\n\n"...))
}

// ApprovalRequest is the body of POST /agent/{agentId}/runs/{runId}/approval (streambench's).
type ApprovalRequest struct {
	ProposalID string `json:"proposalId"`
	Version    int    `json:"version"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
}

// ApprovalPathFor is the approval path template of a stop path template (/stop → /approval).
func ApprovalPathFor(stopPath string) (string, error) {
	if !strings.HasSuffix(stopPath, "/stop") {
		return "", fmt.Errorf("approval path: stop path %q does not end in /stop, so the approval path cannot be derived", stopPath)
	}
	return strings.TrimSuffix(stopPath, "/stop") + "/approval", nil
}

// NewApprovalRequest builds POST {baseURL}{approval path} with d, for resp's run.
func (c *Client) NewApprovalRequest(ctx context.Context, baseURL string, s *protocol.Session, resp *http.Response, d protocol.ApprovalDecision) (*http.Request, error) {
	tmpl, err := ApprovalPathFor(c.stopPath)
	if err != nil {
		return nil, fmt.Errorf("compose: approval for session %s: %w", s.ID, err)
	}
	body, err := json.Marshal(ApprovalRequest{ProposalID: d.ProposalID, Version: d.Version, Decision: d.Decision, Reason: d.Reason})
	if err != nil {
		return nil, fmt.Errorf("compose: approval for session %s: %w", s.ID, err)
	}
	return protocol.NewRunPost(ctx, "compose: approval for", s, resp, RunIDHeader, baseURL, tmpl, body, "agent", "run")
}

type planPhase uint8

const (
	phaseNone      planPhase = iota // no proposal yet
	phaseProposed                   // plan.proposed seen
	phaseRequested                  // approval.requested seen
	phaseDecided                    // approval.decided seen
	phaseFeedback                   // plan.feedback_requested seen (after changes_requested)
)

type sideState struct {
	proposalID string
	version    int // the current (latest proposed) version; 0 before any
	phase      planPhase
	decision   string   // the current version's decision, once decided
	tasks      []string // task ids of the current version's proposal
	approved   []string // task ids of the approved version (nil until approved)
	planSeen   bool

	requests    int // approval.requested frames seen
	due         *protocol.ApprovalDecision
	requestedAt time.Time // the last approval.requested
	decidedAt   []time.Time
	decided     []protocol.ApprovalDecision // decisions the runtime reported, in order

	conclave map[string]int64 // last version per key

	lastElapsed                                       float64
	sawElapsed                                        bool
	sawMSMStart, sawModelStart, sawFirst, sawDoneMark bool
	modelBeforeFirst                                  bool // a model_start preceded first_text_delta

	log approvalLog
}

// approvalLog is what the generator's approval goroutine reports; safe for concurrent use.
type approvalLog struct {
	mu      sync.Mutex
	sent    []sentApproval
	refused []string
}

type sentApproval struct {
	d  protocol.ApprovalDecision
	at time.Time
}

// sideFrame holds the fields of every side event the checker judges.
type sideFrame struct {
	ProposalID *string `json:"proposalId"`
	Version    *int    `json:"version"`
	Decision   string  `json:"decision"`
	Reason     string  `json:"reason"`
	Proposal   *struct {
		Tasks []ProposalTask `json:"tasks"`
	} `json:"proposal"`
	PlanID    string   `json:"planId"`
	TaskID    string   `json:"taskId"`
	Status    *string  `json:"status"`
	Action    string   `json:"action"`
	Key       string   `json:"key"`
	Success   *bool    `json:"success"`
	Source    *string  `json:"source"`
	Mark      string   `json:"mark"`
	ElapsedMs *float64 `json:"elapsedMs"`
}

// observeSide judges a side event; it reports false for types it does not own (swarm_*).
func (c *Checker) observeSide(typ string, data []byte) bool {
	switch {
	case typ == "timing", typ == "trace", typ == "action", typ == "conclave",
		strings.HasPrefix(typ, "plan."), strings.HasPrefix(typ, "approval."), strings.HasPrefix(typ, "task."):
	default:
		return false
	}
	var f sideFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.v.Add(protocol.RFraming, "%s: %v in %s", typ, err, protocol.Quote(string(data), 80))
		return true
	}
	switch {
	case typ == "timing":
		c.onTiming(&f)
	case typ == "trace":
		if f.Source == nil || !slices.Contains(scenarios.TraceSources(), *f.Source) {
			c.v.Add(RTraceSource, "trace: expected a source in %v, saw %s", scenarios.TraceSources(), protocol.Quote(string(data), 80))
		}
	case typ == "action":
		if f.Status == nil || *f.Status == "" {
			c.v.Add(RAction, "action %q: expected a status, saw %s", f.Action, protocol.Quote(string(data), 80))
		}
	case typ == "conclave":
		c.onConclave(&f)
	case strings.HasPrefix(typ, "task."):
		c.onTask(typ, &f)
	default:
		c.onPlan(typ, &f, data)
	}
	return true
}

// onTiming judges one timing mark: elapsedMs never decreases, and the marks present keep
// msm_start ≤ model_start ≤ first_text_delta ≤ done in arrival order (model_start may repeat
// after first_text_delta, each later turn; other marks only by elapsedMs).
func (c *Checker) onTiming(f *sideFrame) {
	st := &c.side
	if e := f.ElapsedMs; e != nil {
		switch {
		case *e < 0:
			c.v.Add(RTimingOrder, "timing %s: expected elapsedMs >= 0, saw %g", f.Mark, *e)
		case st.sawElapsed && *e < st.lastElapsed:
			c.v.Add(RTimingOrder, "timing %s: elapsedMs went back from %g to %g", f.Mark, st.lastElapsed, *e)
		}
		st.lastElapsed, st.sawElapsed = max(st.lastElapsed, *e), true
	}
	switch f.Mark {
	case MarkMSMStart:
		if st.sawModelStart || st.sawFirst {
			c.v.Add(RTimingOrder, "timing: expected msm_start before model_start and first_text_delta, saw it after")
		}
		st.sawMSMStart = true
	case MarkModelStart:
		if st.sawFirst && !st.modelBeforeFirst {
			c.v.Add(RTimingOrder, "timing: expected the first model_start before first_text_delta, saw first_text_delta first")
			st.modelBeforeFirst = true // reported once
		}
		st.sawModelStart = true
	case MarkFirstTextDelta:
		st.modelBeforeFirst = st.modelBeforeFirst || st.sawModelStart
		st.sawFirst = true
	case MarkDone:
		st.sawDoneMark = true
	}
	if st.sawDoneMark && (f.Mark == MarkMSMStart || f.Mark == MarkModelStart || f.Mark == MarkFirstTextDelta) {
		c.v.Add(RTimingOrder, "timing: expected %s before the done mark, saw it after", f.Mark)
	}
}

// onConclave judges per-key versions: never lower than before, and a successful write or
// delete moves them on (list and versionless events are not judged).
func (c *Checker) onConclave(f *sideFrame) {
	if f.Key == "" || f.Version == nil {
		return
	}
	st := &c.side
	if st.conclave == nil {
		st.conclave = map[string]int64{}
	}
	last, seen := st.conclave[f.Key]
	ver := int64(*f.Version)
	switch {
	case seen && ver < last:
		c.v.Add(RConclaveVersion, "conclave %s %q: version went back from %d to %d", f.Action, f.Key, last, ver)
	case seen && ver == last && (f.Action == "write" || f.Action == "delete") && (f.Success == nil || *f.Success):
		c.v.Add(RConclaveVersion, "conclave %s %q: expected a version after %d, saw %d again", f.Action, f.Key, last, ver)
	}
	st.conclave[f.Key] = max(last, ver)
}

// onTask judges a task event: after the plan was approved, for one of its tasks. Without any
// plan, scripted or proposed, it belongs to an earlier run's plan: not judged.
func (c *Checker) onTask(typ string, f *sideFrame) {
	st := &c.side
	if !st.planSeen && (c.s.Expected.Plan == nil || c.noTruth) {
		return
	}
	switch {
	case st.approved == nil:
		c.v.Add(RPlanTasks, "%s for task %q: expected task events only after the plan was approved, saw one before", typ, f.TaskID)
	case !slices.Contains(st.approved, f.TaskID):
		c.v.Add(RPlanTasks, "%s: expected a task of the approved plan %v, saw task %q", typ, st.approved, f.TaskID)
	case f.PlanID != "" && f.PlanID != st.proposalID:
		c.v.Add(RPlanTasks, "%s for task %q: expected planId %q (the approved proposal), saw %q", typ, f.TaskID, st.proposalID, f.PlanID)
	}
}

// onPlan judges a plan.* or approval.* frame: its place, proposalId and version and, for
// approval.decided, the decision against the one the client sent.
func (c *Checker) onPlan(typ string, f *sideFrame, data []byte) {
	st := &c.side
	st.planSeen = true
	id, ver := jsonwire.Deref(f.ProposalID), jsonwire.Deref(f.Version)
	switch {
	case id == "":
		c.v.Add(RPlanVersion, "%s: expected a proposalId, saw %s", typ, protocol.Quote(string(data), 80))
	case st.proposalID == "":
		st.proposalID = id
	case id != st.proposalID:
		c.v.Add(RPlanVersion, "%s: expected proposalId %q (the run's proposal), saw %q", typ, st.proposalID, id)
	}
	if ver < 1 {
		c.v.Add(RPlanVersion, "%s: expected a version >= 1, saw %s", typ, protocol.Quote(string(data), 80))
	}
	if typ != TypePlanProposed && st.version > 0 && ver != st.version {
		c.v.Add(RPlanVersion, "%s: expected version %d (the latest proposed), saw %d", typ, st.version, ver)
	}
	switch typ {
	case TypePlanProposed:
		switch st.phase {
		case phaseProposed, phaseRequested:
			c.v.Add(RPlanOrder, "plan.proposed version %d: expected approval.decided of version %d first", ver, st.version)
		case phaseDecided:
			if st.decision == scenarios.DecisionChangesRequested {
				c.v.Add(RPlanOrder, "plan.proposed version %d: expected plan.feedback_requested after changes_requested, saw the new version first", ver)
			} else {
				c.v.Add(RPlanOrder, "plan.proposed version %d: the plan was already %s", ver, st.decision)
			}
		}
		if st.version > 0 && ver <= st.version {
			c.v.Add(RPlanVersion, "plan.proposed: expected a version after %d, saw %d", st.version, ver)
		}
		st.version = max(st.version, ver)
		st.phase, st.decision, st.tasks = phaseProposed, "", nil
		if f.Proposal != nil {
			for _, t := range f.Proposal.Tasks {
				st.tasks = append(st.tasks, t.ID)
			}
		}
	case TypeApprovalRequested:
		if st.phase != phaseProposed {
			c.v.Add(RPlanOrder, "approval.requested version %d: expected it right after plan.proposed, saw it %s", ver, st.phase.after())
		}
		st.phase = phaseRequested
		st.requests++
		st.requestedAt = time.Now()
		c.dueDecision(id, ver)
	case TypeApprovalDecided:
		if st.phase != phaseRequested {
			c.v.Add(RPlanOrder, "approval.decided version %d: expected it after approval.requested, saw it %s", ver, st.phase.after())
		}
		st.phase, st.decision = phaseDecided, f.Decision
		st.decidedAt = append(st.decidedAt, time.Now())
		st.decided = append(st.decided, protocol.ApprovalDecision{ProposalID: id, Version: ver, Decision: f.Decision, Reason: f.Reason})
		switch f.Decision {
		case scenarios.DecisionApproved:
			st.approved = append([]string{}, st.tasks...)
		case scenarios.DecisionRejected, scenarios.DecisionChangesRequested:
		default:
			c.v.Add(RPlanOutcome, "approval.decided: expected decision approved, rejected or changes_requested, saw %q", f.Decision)
		}
		c.judgeDecision(len(st.decided)-1, f)
	case TypePlanFeedbackRequested:
		if st.phase != phaseDecided || st.decision != scenarios.DecisionChangesRequested {
			c.v.Add(RPlanOrder, "plan.feedback_requested version %d: expected it after a changes_requested decision, saw it %s", ver, st.phase.after())
		}
		st.phase = phaseFeedback
	default:
		c.v.Add(protocol.RFraming, "unknown event type %q in %s", typ, protocol.Quote(string(data), 80))
	}
}

// phaseAfter says when a plan frame came, by the phase it came in.
var phaseAfter = [...]string{
	phaseNone: "before any plan.proposed", phaseProposed: "after plan.proposed", phaseRequested: "while an approval was pending",
	phaseDecided: "after approval.decided", phaseFeedback: "after plan.feedback_requested",
}

func (p planPhase) after() string { return phaseAfter[p] }

// dueDecision makes the next scripted decision due (a scripted none leaves it unanswered).
func (c *Checker) dueDecision(id string, ver int) {
	p := c.s.Expected.Plan
	i := c.side.requests - 1
	// The decisions are the client's script, not ground truth: they are played even without it.
	if p == nil || i >= len(p.Decisions) || p.Decisions[i].Decision == scenarios.DecisionNone {
		return
	}
	d := p.Decisions[i]
	c.side.due = &protocol.ApprovalDecision{ProposalID: id, Version: ver, Decision: d.Decision, Reason: d.Reason, ThinkTime: d.ThinkTime}
}

// judgeDecision compares the i-th approval.decided with the client's scripted decision.
func (c *Checker) judgeDecision(i int, f *sideFrame) {
	p := c.s.Expected.Plan
	if p == nil || c.s.NoGroundTruth {
		return
	}
	if i >= len(p.Decisions) || p.Decisions[i].Decision == scenarios.DecisionNone {
		c.v.Add(RPlanOutcome, "approval.decided %q: the client sent no decision for this request (the approval must time out into error)", f.Decision)
		return
	}
	want := p.Decisions[i]
	if f.Decision != want.Decision || f.Reason != want.Reason {
		c.v.Add(RPlanOutcome, "approval.decided: expected decision %q with reason %q (as the client sent it), saw %q with %q", want.Decision, want.Reason, f.Decision, protocol.Quote(f.Reason, 60))
	}
}

// finishSide judges how the plan ended a run that ended on its own, the provider not failing:
// every scripted decision asked for and taken, the terminal the script's.
func (c *Checker) finishSide(clean bool) {
	p := c.s.Expected.Plan
	st := &c.side
	st.log.mu.Lock()
	for _, r := range st.log.refused {
		c.v.Add(RPlanOutcome, "%s", r)
	}
	st.log.mu.Unlock()
	if p == nil || c.s.NoGroundTruth || !clean || c.stopped || c.s.Expected.ProviderError != "" || (c.terminal != "done" && c.terminal != "error") {
		return
	}
	if st.requests < len(p.Decisions) {
		c.v.Add(RPlanOutcome, "expected %d approval requests (one per scripted decision), saw %d before %s", len(p.Decisions), st.requests, c.terminal)
		return
	}
	var final string
	if n := len(st.decided); n > 0 {
		final = st.decided[n-1].Decision
	}
	switch p.Outcome {
	case scenarios.PlanApproved, scenarios.PlanRejected:
		if final != p.Outcome {
			c.v.Add(RPlanOutcome, "expected the plan to end %s, saw its last decision %q", p.Outcome, final)
		}
	}
	if p.EndsInError() && c.terminal != "error" {
		why := "a rejected plan ends the run with error (onReject: error)"
		if p.Outcome == scenarios.PlanUndecided {
			why = fmt.Sprintf("an undecided approval times out into error after %v", p.Timeout)
		}
		c.v.Add(RPlanOutcome, "expected error: %s, saw %s", why, c.terminal)
	}
	if p.Outcome == scenarios.PlanUndecided && c.terminal == "error" && !st.requestedAt.IsZero() {
		if took, bound := time.Since(st.requestedAt), p.Timeout+UndecidedSlack; took > bound {
			c.v.Add(RPlanOutcome, "undecided approval: the error came %v after approval.requested, expected within %v (timeout %v + %v)", took.Round(time.Millisecond), bound, p.Timeout, UndecidedSlack)
		}
	}
}

// ApprovalDue returns the decision the last approval.requested asks for, once.
func (c *Checker) ApprovalDue() (protocol.ApprovalDecision, bool) {
	if c.side.due == nil {
		return protocol.ApprovalDecision{}, false
	}
	d := *c.side.due
	c.side.due = nil
	return d, true
}

// ApprovalSending records when d went out, for approval_rtt. Safe for concurrent use.
func (c *Checker) ApprovalSending(d protocol.ApprovalDecision, at time.Time) {
	c.side.log.mu.Lock()
	c.side.log.sent = append(c.side.log.sent, sentApproval{d: d, at: at})
	c.side.log.mu.Unlock()
}

// ApprovalAnswered records a refused decision (non-2xx or none). Safe for concurrent use.
func (c *Checker) ApprovalAnswered(d protocol.ApprovalDecision, status int, err error) {
	if err == nil && status >= 200 && status < 300 {
		return
	}
	detail := fmt.Sprintf("approval request (%s, version %d) refused: HTTP %d", d.Decision, d.Version, status)
	if err != nil {
		detail += ": " + err.Error()
	}
	c.side.log.mu.Lock()
	c.side.log.refused = append(c.side.log.refused, detail)
	c.side.log.mu.Unlock()
}

// planMeasures returns approval_rtt, decision sent → its approval.decided (by version, in order).
func (c *Checker) planMeasures() []protocol.Measure {
	st := &c.side
	st.log.mu.Lock()
	defer st.log.mu.Unlock()
	var out []protocol.Measure
	used := 0
	for i, d := range st.decided {
		j := slices.IndexFunc(st.log.sent[used:], func(s sentApproval) bool { return s.d.Version == d.Version })
		if j < 0 {
			continue
		}
		s := st.log.sent[used+j]
		used += j + 1
		if rtt := st.decidedAt[i].Sub(s.at); rtt >= 0 {
			out = append(out, protocol.Measure{Name: protocol.MeasureApprovalRTT, Kind: protocol.MeasureLatency, Duration: rtt})
		}
	}
	return out
}
