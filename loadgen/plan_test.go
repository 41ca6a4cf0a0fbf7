package loadgen

import (
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
)

// planScenarios are the compose plan-approval and side-event scenarios of the library.
var planScenarios = []string{"plan-approve", "plan-reject", "plan-reject-answer", "plan-request-changes", "plan-no-decision", "compose-side-events"}

// TestPlanApprovalClean: against a correct runtime the compose client plays every scripted
// decision (approve, reject, request changes, none) on the approval endpoint and the plan
// scenarios end as scripted, with no violation.
func TestPlanApprovalClean(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	run := s.playNoLeakCheck(t, mixOf(t, planScenarios, composeAll()), 6, 24)
	sum := run.Summary
	if n := sum.TotalViolations(); n != 0 || !sum.Verdict.Pass {
		t.Fatalf("plan scenarios on a clean runtime: %d violations, verdict %v\n%s", n, sum.Verdict.Pass, describe(run))
	}
	if sum.Counters.SessionsStarted != 24 {
		t.Errorf("started %d sessions, want 24", sum.Counters.SessionsStarted)
	}
}

// TestSelfProofPlanFaults: each plan and side-event fault switch is reported as its rule and
// nothing else.
func TestSelfProofPlanFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault     string
		scenarios []string
		want      protocol.Rule
	}{
		// approval.requested ahead of its plan.proposed.
		{"approval-before-proposal", []string{"plan-approve"}, compose.RPlanOrder},
		// Version 2 proposed as version 1 again.
		{"plan-version-stuck", []string{"plan-request-changes"}, compose.RPlanVersion},
		// A rejection (onReject: error) and an undecided approval end the run done.
		{"plan-reject-done", []string{"plan-reject", "plan-no-decision"}, compose.RPlanOutcome},
		// A task event while the approval is pending.
		{"task-before-approval", []string{"plan-approve"}, compose.RPlanTasks},
		// Action events without a status.
		{"action-no-status", []string{"compose-side-events"}, compose.RAction},
		// plan.md written twice, both as version 1.
		{"conclave-version-reset", []string{"compose-side-events"}, compose.RConclaveVersion},
		// Traces from an unlisted source.
		{"trace-bad-source", []string{"compose-side-events"}, compose.RTraceSource},
		// first_text_delta before model_start, on every compose stream.
		{"timing-out-of-order", []string{"plain-answer"}, compose.RTimingOrder},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			t.Parallel()
			s := newStack(t, testScale, c.fault)
			run := s.playNoLeakCheck(t, mixOf(t, c.scenarios, composeAll()), 4, 8)
			checkFaultRules(t, run, c.fault, []protocol.Rule{c.want}, nil)
		})
	}
}
