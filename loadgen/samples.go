package loadgen

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen/session"
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

// replaySamples replays each queued session with frame capture, one at a time, within the
// replay budget (Config.ReplayBudget: all replays together; a replay running when it ends is
// cut, its frames so far kept) and while the run's samples hold less than
// measure.MaxRunSampleBytes. It says what the replays cost and how many sessions were not
// replayed (nil when none was offered).
func (r *runner) replaySamples(ctx context.Context) *measure.ReplayInfo {
	r.samples.mu.Lock()
	pending := r.samples.pending
	r.samples.pending = nil
	r.samples.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	info := &measure.ReplayInfo{Budget: max(r.cfg.ReplayBudget, 0)}
	if r.cfg.ReplayBudget < 0 {
		info.SkippedForBudget = len(pending)
		return info
	}
	began := time.Now()
	defer func() { info.Took = time.Since(began) }()
	budget, cancelBudget := context.WithTimeoutCause(ctx, r.cfg.ReplayBudget, session.ErrReplayBudget)
	defer cancelBudget()
	kept := 0
	for i, ps := range pending {
		if ctx.Err() != nil {
			return info
		}
		if budget.Err() != nil {
			info.SkippedForBudget += len(pending) - i
			return info
		}
		if kept >= measure.MaxRunSampleBytes {
			info.SkippedForBytes += len(pending) - i
			return info
		}
		p := r.plan(ps.index, r.replaySuffix())
		rctx, cancel := budget, context.CancelFunc(func() {})
		if ps.hung {
			rctx, cancel = context.WithTimeoutCause(budget, r.replayLimit(), session.ErrReplayLimit)
		}
		res := r.runSession(rctx, p, time.Now(), r.cfg.SampleFrames)
		cut := budget.Err() != nil
		cancel()
		info.Replayed++
		detail := ps.detail
		switch {
		case cut:
			detail += fmt.Sprintf(" (frames from a replay of the session, cut by the %s replay budget)", r.cfg.ReplayBudget)
		case !slices.ContainsFunc(res.Violations, func(v protocol.Violation) bool { return v.Rule == ps.rule }) && ps.rule != protocol.RAbort:
			detail += " (frames from a replay of the session, which did not reproduce this rule)"
		}
		sample := measure.ViolationSample{
			Session: ps.id, Scenario: p.Pick.Scenario, Dialect: p.Label, Seed: p.Pick.Seed,
			Rule: ps.rule, Detail: measure.Clip(detail, maxSampleDetailBytes), Frames: res.Frames,
		}
		kept += sample.SampleBytes()
		r.samples.mu.Lock()
		r.samples.done = append(r.samples.done, sample)
		r.samples.mu.Unlock()
	}
	return info
}

// maxSampleDetailBytes bounds a sample's detail (a checker's are short; this one holds the
// text of a hostile target too).
const maxSampleDetailBytes = 2 << 10

// replayWarning says, for the verdict, that sessions offered as samples were not replayed.
func replayWarning(info *measure.ReplayInfo) string {
	if info == nil || info.SkippedForBudget+info.SkippedForBytes == 0 {
		return ""
	}
	var why []string
	if n := info.SkippedForBudget; n > 0 {
		why = append(why, fmt.Sprintf("%d for lack of the replay budget (%s, --replay-budget)", n, info.Budget))
	}
	if n := info.SkippedForBytes; n > 0 {
		why = append(why, fmt.Sprintf("%d because the run's samples reached %d MiB", n, measure.MaxRunSampleBytes>>20))
	}
	offered := info.Replayed + info.SkippedForBudget + info.SkippedForBytes
	return fmt.Sprintf("violation samples: %d of %d offending sessions replayed for their frames; not replayed: %s",
		info.Replayed, offered, strings.Join(why, ", "))
}
