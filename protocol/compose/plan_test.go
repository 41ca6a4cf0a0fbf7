package compose

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// planOf is a rendered plan with the given decisions ("" reason) and onReject.
func planOf(onReject string, decisions ...string) *scenarios.ScriptPlan {
	p := &scenarios.ScriptPlan{Outcome: scenarios.PlanUndecided, OnReject: onReject, Timeout: 500 * time.Millisecond}
	for _, d := range decisions {
		p.Decisions = append(p.Decisions, scenarios.ScriptDecision{Decision: d, Reason: "because"})
		p.Versions = append(p.Versions, scenarios.PlanContent{Goal: "g", Tasks: []scenarios.PlanTask{{ID: "a"}, {ID: "b"}}})
		switch d {
		case scenarios.DecisionApproved, scenarios.DecisionRejected:
			p.Outcome = d
		}
	}
	return p
}

// planSession expects the answer "ok" in one turn, and plan p.
func planSession(p *scenarios.ScriptPlan) *protocol.Session {
	exp := scenarios.Expected{Scenario: "plan", FailedTurn: -1, Plan: p, Turns: []scenarios.ExpectedTurn{{Text: "ok", Final: !p.EndsInError()}}}
	return &protocol.Session{ID: "s1", Target: "a", Input: "hi", Expected: exp}
}

// planStream is a compose stream with the timing marks, the answer "ok", events and terminal.
func planStream(terminal string, events ...string) []string {
	f := []string{
		dialecttest.Raw(`{"type":"timing","source":"runtime","mark":"msm_start","elapsedMs":0}`),
		dialecttest.Raw(`{"type":"timing","source":"runtime","mark":"model_start","elapsedMs":1}`),
		dialecttest.Raw(`{"type":"timing","source":"runtime","mark":"first_text_delta","elapsedMs":2}`),
		dialecttest.Raw(`{"choices":[{"delta":{"content":"ok"}}]}`),
	}
	for _, e := range events {
		f = append(f, dialecttest.Raw(e))
	}
	if terminal == "done" {
		f = append(f, dialecttest.Raw(`{"type":"timing","source":"runtime","mark":"done","elapsedMs":9}`), dialecttest.Raw(`{"type":"done","model":"m","usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`))
	} else {
		f = append(f, dialecttest.Raw(`{"type":"error","error":"plan ended the run"}`))
	}
	return append(f, "data: [DONE]\n\n")
}

// Plan frames of proposal p1.
const (
	proposed1  = `{"type":"plan.proposed","proposalId":"p1","version":1,"state":"awaiting_approval","proposal":{"goal":"g","participants":[],"tasks":[{"id":"a"},{"id":"b"}]}}`
	proposed2  = `{"type":"plan.proposed","proposalId":"p1","version":2,"state":"awaiting_approval","proposal":{"goal":"g","participants":[],"tasks":[{"id":"a"},{"id":"b"}]}}`
	requested1 = `{"type":"approval.requested","proposalId":"p1","version":1,"state":"awaiting_approval"}`
	requested2 = `{"type":"approval.requested","proposalId":"p1","version":2,"state":"awaiting_approval"}`
	approved1  = `{"type":"approval.decided","proposalId":"p1","version":1,"state":"approved","decision":"approved","reason":"because"}`
	approved2  = `{"type":"approval.decided","proposalId":"p1","version":2,"state":"approved","decision":"approved","reason":"because"}`
	rejected1  = `{"type":"approval.decided","proposalId":"p1","version":1,"state":"rejected","decision":"rejected","reason":"because"}`
	changes1   = `{"type":"approval.decided","proposalId":"p1","version":1,"state":"changes_requested","decision":"changes_requested","reason":"because"}`
	feedback1  = `{"type":"plan.feedback_requested","proposalId":"p1","version":1,"state":"changes_requested","feedback":"because"}`
	taskA      = `{"type":"task.completed","action":"plan","source":"runtime","status":"completed","planId":"p1","taskId":"a","result":{"success":true}}`
)

// TestPlanRules: each rule of plan approval and the side events fails on the sequence that
// breaks it, alone, and passes on the conforming one; every leniency has a passing row.
func TestPlanRules(t *testing.T) {
	t.Parallel()
	approve := func() *scenarios.ScriptPlan { return planOf("", "approved") }
	cases := []struct {
		name     string
		plan     *scenarios.ScriptPlan
		terminal string
		events   []string
		// before runs on the checker before Finish (the generator's approval reports).
		before func(c *Checker)
		want   []protocol.Rule
	}{
		// Proposed, requested, approved, then the tasks and every side event as the seed shows.
		{"approved plan with side events", approve(), "done", []string{proposed1, requested1, approved1, taskA,
			`{"type":"action","action":"goal","source":"runtime","status":"completed","result":{"success":true}}`,
			`{"type":"conclave","action":"write","rootRunId":"r","key":"k","success":true,"version":1}`,
			`{"type":"conclave","action":"write","rootRunId":"r","key":"k","success":true,"version":2}`,
			`{"type":"conclave","action":"read","rootRunId":"r","key":"k","success":true,"version":2}`,
			`{"type":"conclave","action":"list","rootRunId":"r","success":true}`,
			`{"type":"trace","source":"capability","stage":"execute"}`}, nil, nil},
		// Changes requested, feedback, version 2 approved.
		{"changes then approved", planOf("", "changes_requested", "approved"), "done", []string{proposed1, requested1, changes1, feedback1, proposed2, requested2, approved2, taskA}, nil, nil},
		// Rejected with onReject error: the run ends in error, which is not R-terminal's.
		{"rejected ends in error", planOf("error", "rejected"), "error", []string{proposed1, requested1, rejected1}, nil, nil},
		// Rejected with onReject done.
		{"rejected ends done", planOf("done", "rejected"), "done", []string{proposed1, requested1, rejected1}, nil, nil},
		// Nobody decides: error.
		{"undecided ends in error", planOf("", "none"), "error", []string{proposed1, requested1}, nil, nil},
		// A stream without any plan and none scripted: its task events are not judged.
		{"task of an earlier run's plan", nil, "done", []string{taskA}, nil, nil},
		// Marks are optional: first_text_delta with no model_start at all is fine.
		{"timing without model_start", approve(), "done", []string{proposed1, requested1, approved1,
			`{"type":"timing","source":"runtime","mark":"model_start","elapsedMs":3}`}, nil, nil},
		// A failed conclave write may keep the version.
		{"failed write keeps version", approve(), "done", []string{proposed1, requested1, approved1,
			`{"type":"conclave","action":"write","key":"k","success":true,"version":1}`,
			`{"type":"conclave","action":"write","key":"k","success":false,"version":1}`}, nil, nil},

		// approval.requested before its plan.proposed.
		{"requested before proposed", approve(), "done", []string{requested1, proposed1, approved1}, nil, []protocol.Rule{RPlanOrder}},
		// A decision nobody asked for.
		{"decided before requested", approve(), "done", []string{proposed1, approved1, requested1}, nil, []protocol.Rule{RPlanOrder}},
		// Version 2 without plan.feedback_requested.
		{"no feedback before version 2", planOf("", "changes_requested", "approved"), "done", []string{proposed1, requested1, changes1, proposed2, requested2, approved2}, nil, []protocol.Rule{RPlanOrder}},
		// A second proposal after approval.
		{"proposed after approval", approve(), "done", []string{proposed1, requested1, approved1, proposed2}, nil, []protocol.Rule{RPlanOrder}},
		// Version 1 proposed again after changes.
		{"version does not increase", planOf("", "changes_requested", "approved"), "done", []string{proposed1, requested1, changes1, feedback1, proposed1, requested1, approved1}, nil, []protocol.Rule{RPlanVersion}},
		// Another proposal id mid-way.
		{"proposal id changes", approve(), "done", []string{proposed1, strings.Replace(requested1, "p1", "p2", 1), strings.Replace(approved1, "p1", "p2", 1)}, nil, []protocol.Rule{RPlanVersion}},
		// The request names another version than the one proposed.
		{"requested version differs", approve(), "done", []string{proposed1, requested2, approved2}, nil, []protocol.Rule{RPlanVersion}},
		// No version at all.
		{"no version", approve(), "done", []string{strings.Replace(proposed1, `"version":1,`, "", 1), requested1, approved1}, nil, []protocol.Rule{RPlanVersion}},
		// Decided otherwise than the client sent.
		{"decision differs", approve(), "done", []string{proposed1, requested1, rejected1}, nil, []protocol.Rule{RPlanOutcome}},
		// The reason is not the client's.
		{"reason differs", approve(), "done", []string{proposed1, requested1, strings.Replace(approved1, "because", "auto", 1), taskA}, nil, []protocol.Rule{RPlanOutcome}},
		// No approval asked for at all.
		{"no approval requested", approve(), "done", nil, nil, []protocol.Rule{RPlanOutcome}},
		// Rejected (onReject error) but the run ends done.
		{"rejected but done", planOf("error", "rejected"), "done", []string{proposed1, requested1, rejected1}, nil, []protocol.Rule{RPlanOutcome}},
		// Undecided but done.
		{"undecided but done", planOf("", "none"), "done", []string{proposed1, requested1}, nil, []protocol.Rule{RPlanOutcome}},
		// Undecided, yet the runtime decided by itself.
		{"undecided but decided", planOf("", "none"), "error", []string{proposed1, requested1, approved1}, nil, []protocol.Rule{RPlanOutcome}},
		// Undecided, the error far past the bound.
		{"undecided too late", planOf("", "none"), "error", []string{proposed1, requested1}, func(c *Checker) { c.side.requestedAt = time.Now().Add(-time.Minute) }, []protocol.Rule{RPlanOutcome}},
		// The runtime refused the scripted decision.
		{"decision refused", approve(), "done", []string{proposed1, requested1, approved1}, func(c *Checker) {
			c.ApprovalAnswered(protocol.ApprovalDecision{Decision: "approved", Version: 1}, 409, errors.New("stale"))
		}, []protocol.Rule{RPlanOutcome}},
		// A task before approval.
		{"task before approval", approve(), "done", []string{proposed1, requested1, taskA, approved1}, nil, []protocol.Rule{RPlanTasks}},
		// A task the plan does not have.
		{"unknown task", approve(), "done", []string{proposed1, requested1, approved1, strings.Replace(taskA, `"a"`, `"z"`, 1)}, nil, []protocol.Rule{RPlanTasks}},
		// A task of another plan id.
		{"task of another plan", approve(), "done", []string{proposed1, requested1, approved1, strings.Replace(taskA, `"p1"`, `"p9"`, 1)}, nil, []protocol.Rule{RPlanTasks}},
		// A rejected plan's task.
		{"task after rejection", planOf("done", "rejected"), "done", []string{proposed1, requested1, rejected1, taskA}, nil, []protocol.Rule{RPlanTasks}},
		// An action without a status, and one with an empty status.
		{"action without status", nil, "done", []string{`{"type":"action","action":"goal","source":"runtime"}`, `{"type":"action","action":"goal","status":""}`}, nil, []protocol.Rule{RAction}},
		// A conclave version that goes back.
		{"conclave version back", nil, "done", []string{`{"type":"conclave","action":"write","key":"k","success":true,"version":3}`, `{"type":"conclave","action":"read","key":"k","success":true,"version":2}`}, nil, []protocol.Rule{RConclaveVersion}},
		// A write that does not move the version on.
		{"conclave write same version", nil, "done", []string{`{"type":"conclave","action":"write","key":"k","success":true,"version":1}`, `{"type":"conclave","action":"write","key":"k","success":true,"version":1}`}, nil, []protocol.Rule{RConclaveVersion}},
		// A trace source the seed does not list, and none.
		{"trace source", nil, "done", []string{`{"type":"trace","source":"runtime"}`, `{"type":"trace","stage":"x"}`}, nil, []protocol.Rule{RTraceSource}},
		// elapsedMs going back.
		{"elapsed back", nil, "done", []string{`{"type":"timing","source":"runtime","mark":"msm_end","elapsedMs":1}`}, nil, []protocol.Rule{RTimingOrder}},
		// msm_start after model_start.
		{"msm_start late", nil, "done", []string{`{"type":"timing","source":"runtime","mark":"msm_start","elapsedMs":5}`}, nil, []protocol.Rule{RTimingOrder}},
		// A model_start after the done mark.
		{"model_start after done", nil, "done", nil, func(c *Checker) {
			c.observeSide("timing", []byte(`{"type":"timing","mark":"model_start","elapsedMs":10}`))
		}, []protocol.Rule{RTimingOrder}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			frames := planStream(tc.terminal, tc.events...)
			s := planSession(orEmpty(tc.plan))
			if tc.plan == nil {
				s.Expected.Plan = nil
				s.Expected.Turns[0].Final = true
			}
			vs := dialecttest.Check(t, frames, s, func() protocol.Checker {
				c := NewChecker(s)
				if tc.before != nil {
					return beforeFinish{c, tc.before}
				}
				return c
			})
			dialecttest.WantRules(t, vs, tc.want, frames)
		})
	}
}

func orEmpty(p *scenarios.ScriptPlan) *scenarios.ScriptPlan {
	if p == nil {
		return &scenarios.ScriptPlan{}
	}
	return p
}

// beforeFinish runs a hook on the checker just before Finish.
type beforeFinish struct {
	*Checker
	hook func(c *Checker)
}

func (b beforeFinish) Finish(err error) []protocol.Violation {
	b.hook(b.Checker)
	return b.Checker.Finish(err)
}

// TestFirstTextBeforeModelStart: a first_text_delta before the stream's first model_start is
// reported once a model_start does arrive (a runtime that sends no model_start is lenient).
func TestFirstTextBeforeModelStart(t *testing.T) {
	t.Parallel()
	frames := planStream("done")
	frames[1], frames[2] = frames[2], frames[1]
	frames[1] = strings.Replace(frames[1], `"elapsedMs":2`, `"elapsedMs":1`, 1)
	s := planSession(&scenarios.ScriptPlan{})
	s.Expected.Plan = nil
	s.Expected.Turns[0].Final = true
	dialecttest.WantRules(t, dialecttest.Check(t, frames, s, func() protocol.Checker { return NewChecker(s) }), []protocol.Rule{RTimingOrder}, frames)
}

// TestApprovalDueAndRTT: approval.requested makes the scripted decision due once, with the
// request's proposal and version and the scripted think time; the decided frame after
// ApprovalSending yields one approval_rtt. A scripted none makes nothing due.
func TestApprovalDueAndRTT(t *testing.T) {
	t.Parallel()
	p := planOf("", "changes_requested", "approved")
	p.Decisions[0].ThinkTime = 70 * time.Millisecond
	c := NewChecker(planSession(p))
	observe := func(data string) { c.Observe(&sse.Event{Data: []byte(data)}) }
	observe(proposed1)
	if _, ok := c.ApprovalDue(); ok {
		t.Fatal("a decision is due before approval.requested")
	}
	observe(requested1)
	d, ok := c.ApprovalDue()
	want := protocol.ApprovalDecision{ProposalID: "p1", Version: 1, Decision: "changes_requested", Reason: "because", ThinkTime: 70 * time.Millisecond}
	if !ok || d != want {
		t.Fatalf("due %+v %v, want %+v", d, ok, want)
	}
	if _, ok := c.ApprovalDue(); ok {
		t.Fatal("the same decision is due twice")
	}
	c.ApprovalSending(d, time.Now().Add(-20*time.Millisecond))
	observe(changes1)
	ms := c.Measures()
	if len(ms) != 1 || ms[0].Name != protocol.MeasureApprovalRTT || ms[0].Kind != protocol.MeasureLatency || ms[0].Duration < 20*time.Millisecond {
		t.Errorf("measures %+v, want one approval_rtt of at least 20ms", ms)
	}

	none := NewChecker(planSession(planOf("", "none")))
	none.Observe(&sse.Event{Data: []byte(proposed1)})
	none.Observe(&sse.Event{Data: []byte(requested1)})
	if d, ok := none.ApprovalDue(); ok {
		t.Errorf("a scripted none made %+v due", d)
	}
	if ms := none.Measures(); len(ms) != 0 {
		t.Errorf("an undecided stream measured %+v", ms)
	}
}
