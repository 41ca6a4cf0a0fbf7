package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol"
)

// abortLog collects the aborts of sessions.
type abortLog struct {
	mu      sync.Mutex
	records []session.Abort
}

func (l *abortLog) add(a session.Abort) {
	l.mu.Lock()
	l.records = append(l.records, a)
	l.mu.Unlock()
}

func (l *abortLog) all() []session.Abort {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]session.Abort(nil), l.records...)
}

// cancelFinding is the verdict on one aborted session from the mock's point of view.
type cancelFinding struct {
	latency   time.Duration // abort → the mock saw the client go away; 0 when not applicable
	violation string        // non-empty: rule broken, with the reason
	rule      protocol.Rule // R-abort, or R-swarm-cancel for a swarm child's stream
}

// judgeCancel compares one abort with the mock's records of that session, fetched at now:
// every provider stream open at the abort or opened after it must see the client go away
// within tolerance, and none may start later than that. A stream that finished on its own
// within tolerance raced the abort and is fine.
func judgeCancel(a session.Abort, recs []mockrecords.Record, tolerance time.Duration, now time.Time) cancelFinding {
	var f cancelFinding
	if a.Continues { // the request asked the run to go on: no provider stream may see the client go
		f.rule = protocol.RAbort
		for _, r := range recs {
			if !r.ClientGone.IsZero() && r.ClientGone.After(a.At) {
				f.violation = fmt.Sprintf("provider (turn %d) saw the client go away %v after the abort, although the request asked the run to continue (on_disconnect continue)", r.Turn, r.ClientGone.Sub(a.At).Round(time.Millisecond))
				return f
			}
		}
		return f
	}
	deadline := a.At.Add(tolerance)
	for _, r := range recs {
		who := fmt.Sprintf("turn %d", r.Turn)
		f.rule = protocol.RAbort
		if r.Child != "" {
			f.rule, who = protocol.RSwarmCancel, fmt.Sprintf("swarm child %s turn %d", r.Child, r.Turn)
		}
		if r.Start.After(deadline) {
			f.violation = fmt.Sprintf("provider request for %s started %v after the client left", who, r.Start.Sub(a.At).Round(time.Millisecond))
			return f
		}
		if !r.End.IsZero() && !r.End.After(a.At) {
			continue // finished before the client left: nothing to cancel
		}
		switch {
		case !r.ClientGone.IsZero():
			lat := max(r.ClientGone.Sub(a.At), 0)
			if lat > tolerance {
				f.violation = fmt.Sprintf("provider (%s) saw the client go away %v after the abort (tolerance %v)", who, lat.Round(time.Millisecond), tolerance)
				return f
			}
			f.latency = max(f.latency, lat, 1)
		case !r.End.IsZero():
			if ran := r.End.Sub(a.At); ran > tolerance {
				f.violation = fmt.Sprintf("provider stream for %s ran on %v after the client left and ended %q", who, ran.Round(time.Millisecond), r.Outcome)
				return f
			}
		case now.After(deadline):
			f.violation = fmt.Sprintf("provider stream for %s still open %v after the client left", who, now.Sub(a.At).Round(time.Millisecond))
			return f
		}
	}
	return f
}

// mockFetchTimeout bounds reading the mock's session records after the load.
const mockFetchTimeout = 10 * time.Second

// checkCancels joins the aborts with the mock's records fetched at now: cancel latency and violations.
func (r *runner) checkCancels(aborts []session.Abort, recs []mockrecords.Record, now time.Time) {
	bySession := make(map[string][]mockrecords.Record, len(aborts))
	for _, a := range aborts {
		bySession[a.Session] = nil
	}
	for _, rec := range recs {
		if _, ok := bySession[rec.Session]; ok {
			bySession[rec.Session] = append(bySession[rec.Session], rec)
		}
	}
	for _, a := range aborts {
		f := judgeCancel(a, bySession[a.Session], r.cfg.AbortTolerance, now)
		if f.latency > 0 {
			r.rec.Record(0, measure.Key{Metric: measure.CancelLatency, Scenario: a.Scenario, Dialect: a.Dialect}, f.latency)
		}
		if f.violation != "" {
			r.rec.AddViolation(f.rule)
			if r.out.late != nil {
				r.out.late(SessionEnd{Scenario: a.Scenario, Dialect: a.Dialect, Session: a.Session, Outcome: measure.OutcomeAborted,
					Violations: []protocol.Violation{{Rule: f.rule, Detail: f.violation}}})
			}
			if r.samples.wants(f.rule) {
				// The mock's records are the sample: the client's frames are gone.
				r.samples.add(measure.ViolationSample{Session: a.Session, Scenario: a.Scenario, Dialect: a.Dialect,
					Seed: r.cfg.Mix.Pick(r.cfg.Seed, a.Index).Seed, Rule: f.rule, Detail: f.violation + " (the mock's records of the session)"})
			}
		}
	}
}

// mockChecks are the post-run findings from the mock's session records.
type mockChecks struct {
	providerRequests []measure.ProviderRequests // nil: the records were not read
	warning          string                     // why the provider requests were not counted
}

// checkMock reads the mock's records, once the aborts had their tolerance, for the cancel check
// and the provider requests; unreadable records are an error only when there are aborts to judge.
func (r *runner) checkMock(ctx context.Context) (mockChecks, error) {
	if r.cfg.MockURL == "" {
		return mockChecks{}, nil
	}
	aborts := r.aborts.all()
	var last time.Time
	for _, a := range aborts {
		if a.At.After(last) {
			last = a.At
		}
	}
	if wait := time.Until(last.Add(r.cfg.AbortTolerance)); len(aborts) > 0 && wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return mockChecks{}, ctx.Err()
		}
	}
	fetchCtx, cancel := context.WithTimeout(ctx, mockFetchTimeout)
	defer cancel()
	recs, err := mockrecords.Client{HTTP: r.client, URL: r.cfg.MockURL}.Sessions(fetchCtx)
	if err != nil {
		if len(aborts) > 0 {
			return mockChecks{}, fmt.Errorf("cancel latency: %w", err)
		}
		return mockChecks{warning: fmt.Sprintf("provider requests not counted: %v", err)}, nil
	}
	r.checkCancels(aborts, recs, time.Now())
	return mockChecks{providerRequests: providerRequests(recs, r.cfg.RunID, r.cfg.Shard)}, nil
}
