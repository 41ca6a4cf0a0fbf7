package loadgen

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// sampler keeps the first few offending sessions per rule. Streams do not record their frames
// (that would cost memory on every stream for the rare one that fails); a kept session is
// replayed after the load with frame capture on. Sessions are deterministic functions of
// (seed, index), so the replay plays the same script through the same client; the sample says
// when the replay did not reproduce the rule (a timing-dependent failure).
type sampler struct {
	mu      sync.Mutex
	perRule int
	counts  map[protocol.Rule]int
	pending []pendingSample
	done    []measure.ViolationSample
}

type pendingSample struct {
	index  uint64
	id     string
	rule   protocol.Rule
	detail string
}

// offer queues session index for a sample of rule if the rule still needs one.
func (s *sampler) offer(index uint64, id string, rule protocol.Rule, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[protocol.Rule]int{}
	}
	if s.counts[rule] >= s.perRule {
		return
	}
	s.counts[rule]++
	s.pending = append(s.pending, pendingSample{index: index, id: id, rule: rule, detail: detail})
}

func (s *sampler) collected() []measure.ViolationSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.done)
}

// replaySamples replays each queued session with frame capture, one at a time.
func (r *runner) replaySamples(ctx context.Context) {
	r.samples.mu.Lock()
	pending := r.samples.pending
	r.samples.pending = nil
	r.samples.mu.Unlock()
	for _, ps := range pending {
		if ctx.Err() != nil {
			return
		}
		p := r.plan(ps.index, "-replay")
		res := r.runSession(ctx, p, time.Now(), r.cfg.SampleFrames)
		detail := ps.detail
		if !slices.ContainsFunc(res.violations, func(v protocol.Violation) bool { return v.Rule == ps.rule }) && ps.rule != protocol.RAbort {
			detail += " (frames from a replay of the session, which did not reproduce this rule)"
		}
		r.samples.mu.Lock()
		r.samples.done = append(r.samples.done, measure.ViolationSample{
			Session: ps.id, Scenario: p.pick.Scenario, Dialect: p.label, Seed: p.pick.Seed,
			Rule: ps.rule, Detail: detail, Frames: res.frames,
		})
		r.samples.mu.Unlock()
	}
}
