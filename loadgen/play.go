package loadgen

import (
	"context"
	"strconv"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/verdict"
)

func (r *runner) planOf(pick Pick, id string) *session.Plan {
	sp := session.Pick{Index: pick.Index, Scenario: pick.Scenario, Seed: pick.Seed, Target: pick.Target.Slug}
	return r.planner.Plan(sp, r.reqOpts[pick.ProfileIndex][pick.TargetIndex], id)
}

// planShallow plans session index on a fresh stack: the caller goes on to hold the stream.
func (r *runner) planShallow(index uint64) *session.Plan {
	var p *session.Plan
	session.OnFreshStack(func() bool {
		p = r.planOf(r.cfg.Mix.Pick(r.cfg.Seed, index), r.cfg.RunID+"-"+strconv.FormatUint(index, 10))
		return true
	})
	return p
}

func (c *Config) planner() *session.Planner {
	return &session.Planner{Library: c.Library, NoGroundTruth: c.NoGroundTruth, Endpoint: c.Endpoint, ScriptTimeScale: c.ScriptTimeScale}
}

// runSession plays session p and tells the run's SessionEndOutputs how it ended.
func (r *runner) runSession(ctx context.Context, p *session.Plan, intended time.Time) session.Result {
	res := r.sessions.Play(ctx, p, intended)
	if r.out.sessionEnd != nil {
		r.sessionEnded(p, &res)
	}
	return res
}

// sessionEnded is apart and not inlined, so runSession's frame, under every open stream's
// read, stays small (session.Runner.Play).
//
//go:noinline
func (r *runner) sessionEnded(p *session.Plan, res *session.Result) {
	r.out.sessionEnd(SessionEnd{
		Scenario: p.Pick.Scenario, Dialect: p.Label, Session: p.ID, Target: p.Pick.Target,
		Outcome: res.Outcome, Violations: res.Violations, Err: r.redactor.Error(res.Err),
	})
}

func sloExprs(slos []verdict.SessionSLO) []string {
	var out []string
	for _, s := range slos {
		out = append(out, s.Expr)
	}
	return out
}
