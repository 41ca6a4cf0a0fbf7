package loadgen

import (
	"context"
	"slices"
	"strconv"
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
	// hung: the session hung, so its replay would too; it is bounded by replayLimit.
	hung bool
}

// offer queues a session for a sample of its rule if the rule still needs one.
func (s *sampler) offer(ps pendingSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts == nil {
		s.counts = map[protocol.Rule]int{}
	}
	if s.counts[ps.rule] >= s.perRule {
		return
	}
	s.counts[ps.rule]++
	s.pending = append(s.pending, ps)
}

func (s *sampler) collected() []measure.ViolationSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.done)
}

// replaySuffix names the next replay: appended to the session's id with a run-wide replay
// number, so no two replays (of one session or of two) share an id. A runtime that keys state by it (the
// compose thread id) must see every replay as a new conversation, never one holding the
// history of an earlier replay.
func (r *runner) replaySuffix() string {
	return "-replay" + strconv.FormatUint(r.replays.Add(1), 10)
}

// replayLimit bounds the replay of a hung session: it would hang again, for the whole stream
// timeout, and the frames up to the stall are what the sample is for.
func (r *runner) replayLimit() time.Duration { return min(r.cfg.Grace, r.cfg.StreamTimeout) }

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
		p := r.plan(ps.index, r.replaySuffix())
		rctx, cancel := ctx, context.CancelFunc(func() {})
		if ps.hung {
			rctx, cancel = context.WithTimeoutCause(ctx, r.replayLimit(), errReplayLimit)
		}
		res := r.runSession(rctx, p, time.Now(), r.cfg.SampleFrames)
		cancel()
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
