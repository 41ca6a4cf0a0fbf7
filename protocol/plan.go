package protocol

import (
	"context"
	"net/http"
	"time"
)

// ApprovalDecision is the client's scripted answer to one approval request.
type ApprovalDecision struct {
	// ProposalID and Version are the ones approval.requested named.
	ProposalID string
	Version    int
	// Decision is approved, rejected or changes_requested; Reason goes with it.
	Decision string
	Reason   string
	// ThinkTime is how long the client waits after approval.requested before it sends.
	ThinkTime time.Duration
}

// Approver is implemented by clients that answer an agent's approval request (compose) with a
// request of its own beside the stream.
type Approver interface {
	// NewApprovalRequest builds the request that sends d for the run of resp's stream.
	NewApprovalRequest(ctx context.Context, baseURL string, s *Session, resp *http.Response, d ApprovalDecision) (*http.Request, error)
}

// ApprovalObserver is implemented by checkers of Approver clients. After each FrameOther the
// generator asks ApprovalDue; for a decision it waits the think time, calls ApprovalSending,
// sends it and calls ApprovalAnswered, both from another goroutine than Observe and Finish:
// implementations synchronise them.
type ApprovalObserver interface {
	// ApprovalDue returns the decision the frame just observed asks for, once (ok false: none).
	ApprovalDue() (d ApprovalDecision, ok bool)
	// ApprovalSending records that d is being sent now (the start of the approval round trip).
	ApprovalSending(d ApprovalDecision, at time.Time)
	// ApprovalAnswered records the request's HTTP status (0: none came back) and error.
	ApprovalAnswered(d ApprovalDecision, status int, err error)
}

// MeasureApprovalRTT is the approval round trip measure: decision sent → approval.decided.
const MeasureApprovalRTT = "approval_rtt"
