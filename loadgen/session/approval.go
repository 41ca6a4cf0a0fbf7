package session

import (
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/streambench/streambench/protocol"
)

// approver plays a session's scripted plan decisions (compose): when the checker says one is
// due, it sends it after its think time on a goroutine of its own, so the read loop never
// blocks. Safe for concurrent use.
type approver struct {
	s      *streamState
	client protocol.Approver
	obs    protocol.ApprovalObserver
	resp   *http.Response

	mu      sync.Mutex
	timers  []*time.Timer
	stopped bool
	sends   sync.WaitGroup
}

// newApprover returns the stream's approver, or nil when its client or checker has no part.
func (s *streamState) newApprover(resp *http.Response) *approver {
	client, ok := s.p.Client.(protocol.Approver)
	if !ok {
		return nil
	}
	obs, ok := s.checker.(protocol.ApprovalObserver)
	if !ok {
		return nil
	}
	return &approver{s: s, client: client, obs: obs, resp: resp}
}

// due schedules the decision the frame just observed wants, if any.
func (a *approver) due() {
	d, ok := a.obs.ApprovalDue()
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return
	}
	a.sends.Add(1)
	a.timers = append(a.timers, time.AfterFunc(d.ThinkTime, func() {
		defer a.sends.Done()
		a.send(d)
	}))
}

// send sends one decision and tells the checker when and how it was answered.
func (a *approver) send(d protocol.ApprovalDecision) {
	r, p := a.s.r, a.s.p
	ctx := a.s.sctx
	req, err := a.client.NewApprovalRequest(ctx, r.Target, p.Session, a.resp, d)
	if err != nil {
		a.obs.ApprovalAnswered(d, 0, err)
		return
	}
	ApplyHeader(req, p.Header)
	a.obs.ApprovalSending(d, time.Now())
	resp, err := r.Client.Do(req)
	if err != nil {
		if ctx.Err() == nil { // an ended stream takes no decision: not a refusal
			a.obs.ApprovalAnswered(d, 0, err)
		}
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.obs.ApprovalAnswered(d, resp.StatusCode, &approvalRefused{body: string(body)})
		return
	}
	a.obs.ApprovalAnswered(d, resp.StatusCode, nil)
}

// approvalRefused quotes the body of a refused approval request.
type approvalRefused struct{ body string }

func (e *approvalRefused) Error() string { return e.body }

// wait cancels decisions not yet sent and waits for those in flight, before Finish.
func (a *approver) wait() {
	a.mu.Lock()
	a.stopped = true
	for _, t := range a.timers {
		if t.Stop() {
			a.sends.Done()
		}
	}
	a.timers = nil
	a.mu.Unlock()
	a.sends.Wait()
}
