package session

import (
	"cmp"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

// tokenClock follows one session's output tokens for the token metrics (ttft, ttfo, itl, tpot,
// stream_tokens_per_s, the output token counter and goodput). The read loop feeds it every
// observation (observe); it keeps a few numbers and records per-token gaps through the
// session's buffer, so the per-event path neither locks nor allocates.
//
// Where tokens come from: against ground truth, the checker's Observation.Tokens (the script's
// tokens that begin in the frame, however the runtime chunked them). Without ground truth
// (Session.NoGroundTruth: a real model's content), only the provider wire's usage report
// knows: its output count is spread over the session's thinking and answer frames at the end.
// Then ttft, ttfo and tpot are exact (they need only the first and last frame and the count),
// but per-frame counts are unknown, so itl records tokens−1 values of the session's tpot (the
// per-request inter-token latency AIPerf reports) instead of k values of gap/k per frame.
//
// A session without ground truth and without a usage report (TGI, some gateways) has its
// output tokens counted once, at its end, by a model tokenizer over its whole text (settle,
// modeltokens), when its checker kept the text (protocol.OutputKeeper: the provider wires);
// until then, and for the other dialects, they are the text's words (Observation.Tokens).
//
// What counts as an output token: thinking and answer text. Tool-call argument deltas do not
// (a gateway's usage counts them, so a tool turn's usage exceeds the ground-truth count).
type tokenClock struct {
	usageOnly bool // no ground truth: the usage report counts, Observation.Tokens is ignored

	firstToken, firstAnswer time.Duration // since the intended start; 0 = not yet (TTFT, TTFO)
	firstAt, lastAt         time.Time     // the first and last frame that carried tokens
	tokens                  int64         // tokens counted from the ground truth
	frames                  int64         // thinking and answer frames (usage spreading)
	usage                   int64         // output tokens reported by usage, summed over turns
	estimated               int64         // without ground truth: the text's words, or its model tokens once settled
	// text is the output text of the turns that ended without a usage report, while none came
	// (keepText); kept says a checker kept it; gathered is the checker it was last taken
	// from (a turn's text is taken once); method is how estimated was counted once settled
	// (modeltokens.Method; "": words).
	text      []byte
	textTotal int64 // bytes of output text the kept turns carried; text holds at most protocol.MaxOutputText of them
	kept      bool
	gathered  protocol.Checker
	method    string
}

// estimatedByWords is the method of a usage-less session's count when no model tokenizer
// counted it: whitespace-delimited words (scenarios.TokenCounter).
const estimatedByWords = "words"

// keepText takes the output text of c's turn, which just ended, while the session is usage-less
// so far: the text settle counts. Nothing is copied once a usage report came.
func (tc *tokenClock) keepText(c protocol.Checker) {
	if !tc.usageOnly || tc.usage > 0 || c == nil || c == tc.gathered {
		return
	}
	tc.gathered = c
	if k, ok := c.(protocol.OutputKeeper); ok {
		text, total := k.OutputText()
		if room := protocol.MaxOutputText - len(tc.text); len(text) > room {
			text = text[:max(room, 0)]
		}
		tc.text, tc.textTotal, tc.kept = append(tc.text, text...), tc.textTotal+total, true
	}
}

// settle counts the output tokens of a session that ended without a usage report with the
// model's encoding over its whole text, once, replacing the words; a session with a usage
// report, or whose text no checker kept, is left as it is. Call it after the last turn's
// keepText and before the metrics are flushed, outside any lock: the run's first count loads
// the encoding (up to 1.3 s on a busy machine), and a count takes about 1 µs a token.
func (tc *tokenClock) settle(encoding string) {
	if !tc.estimatedCount() || !tc.kept || tc.method != "" {
		return
	}
	if n, err := modeltokens.Count(encoding, string(tc.text)); err == nil {
		if kept := int64(len(tc.text)); kept > 0 && tc.textTotal > kept {
			// More text than a session keeps: the count of what was kept, scaled to the whole.
			n = int(int64(n) * tc.textTotal / kept)
		}
		tc.estimated, tc.method = int64(n), modeltokens.Method(encoding)
	}
	tc.text = tc.text[:0]
}

// observe takes one frame's observation at now (since is now − the intended start).
func (tc *tokenClock) observe(now time.Time, since time.Duration, obs *protocol.Observation, m *sessionMetrics) {
	if obs.UsageTokens > 0 && obs.UsageTokens <= protocol.MaxUsageTokens {
		// The checker reports a count outside 0…MaxUsageTokens as a violation and passes none;
		// the bound is kept here too, so no dialect's report can overflow the totals (a
		// session's turns add at most a few times 2^40, far from 2^63).
		tc.usage += int64(obs.UsageTokens)
	}
	if obs.Kind != protocol.FrameAnswer && obs.Kind != protocol.FrameThinking {
		return
	}
	k := int64(obs.Tokens)
	if tc.usageOnly {
		// Every text frame carries at least one token; how many is known only at the end.
		tc.estimated += k
		k = 1
		tc.frames++
	}
	if k == 0 {
		return // whitespace only: no token begins here
	}
	if tc.firstToken == 0 {
		tc.firstToken, tc.firstAt = observed(since), now
	} else if !tc.usageOnly {
		m.tokenGap(now.Sub(tc.lastAt), k)
	}
	if obs.Kind == protocol.FrameAnswer && tc.firstAnswer == 0 {
		tc.firstAnswer = observed(since)
	}
	tc.lastAt = now
	if !tc.usageOnly {
		tc.tokens += k
	}
}

// count is the session's output tokens: counted, or the usage report's without ground truth
// (at least one per text frame, when the report is short); without a usage report, estimated
// from the text (estimatedCount): by the model's tokenizer once settled, else as words.
func (tc *tokenClock) count() int64 {
	if tc.usageOnly {
		if tc.usage == 0 {
			return max(tc.estimated, tc.frames)
		}
		return max(tc.usage, tc.frames)
	}
	return tc.tokens
}

// estimatedCount reports whether count is an estimate: no ground truth and no usage report,
// so the tokens are counted from the text (a model tokenizer's count once settled, else
// whitespace-delimited words), at least one per text frame.
func (tc *tokenClock) estimatedCount() bool {
	return tc.usageOnly && tc.usage == 0 && tc.frames > 0
}

// tpot is (last token frame − first) / (tokens − 1), or 0 with fewer than two tokens.
func (tc *tokenClock) tpot() time.Duration {
	n := tc.count()
	if n < 2 || tc.firstAt.IsZero() {
		return 0
	}
	return observed(tc.lastAt.Sub(tc.firstAt) / time.Duration(n-1))
}

// rate is output tokens over the stream's duration, in tokens/s × measure.RateScale (0 when
// the session had no token, or took under a microsecond, the histograms' resolution: a
// stream that took no measurable time has no rate, and its "rate" would overflow the range).
func (tc *tokenClock) rate(duration time.Duration) int64 {
	n := tc.count()
	if n == 0 || duration < time.Microsecond {
		return 0
	}
	return min(max(int64(float64(n)*measure.RateScale/duration.Seconds()), 1), measure.MaxRate)
}

// sessionValue is the session's own value of an SLO's metric, in the metric's histogram unit.
func (m *sessionMetrics) sessionValue(metric measure.Metric) (float64, bool) {
	var d time.Duration
	switch metric {
	case measure.Headers:
		d = m.headers
	case measure.FirstEvent:
		d = m.firstEvent
	case measure.FirstChunk:
		d = m.firstChunk
	case measure.TimeToFirstToken:
		d = m.tokens.firstToken
	case measure.FirstChunkOverhead, measure.FirstTokenOverhead:
		// A session whose script does not say when the frame was due has no overhead.
		measured, scripted := m.firstChunk, m.scripted.chunk
		if metric == measure.FirstTokenOverhead {
			measured, scripted = m.tokens.firstToken, m.scripted.token
		}
		if measured == 0 || scripted == 0 {
			return 0, false
		}
		return float64(max(measured-scripted, 0).Microseconds()), true
	case measure.TimeToFirstOutput:
		d = m.tokens.firstAnswer
	case measure.TimePerOutputToken:
		d = m.tokens.tpot()
	case measure.StreamDuration:
		d = m.duration
	case measure.StreamTokensPerSecond:
		r := m.tokens.rate(m.duration)
		return float64(r), r > 0
	}
	return float64(d.Microseconds()), d > 0
}

// judgeGoodput counts a session that ended after the warm-up toward goodput: judged unless
// aborted on purpose or cut by the run's end (neither good nor bad), good when it ended
// completed or as its scripted error, broke no rule, and every SLO holds on its own values.
func (m *sessionMetrics) judgeGoodput(res Result, slos []verdict.SessionSLO) {
	if !m.afterWarmup() || res.Outcome == measure.OutcomeAborted || res.Outcome == measure.OutcomeCut {
		return
	}
	m.rec.goodJudged.Add(1)
	if res.Outcome.IsError() || len(res.Violations) > 0 || m.missedSLO {
		return
	}
	for _, s := range slos {
		if !s.Met(m.sessionValue(s.Metric())) {
			return
		}
	}
	m.rec.good.Add(1)
}

// flushTokens records the session's token metrics; the shard lock must be held.
func (m *sessionMetrics) flushTokens() {
	tc := &m.tokens
	m.put(measure.TimeToFirstToken, tc.firstToken)
	m.put(measure.TimeToFirstOutput, tc.firstAnswer)
	tpot := tc.tpot()
	m.put(measure.TimePerOutputToken, tpot)
	if tc.usageOnly && tpot > 0 {
		m.putN(measure.InterTokenLatency, tpot, tc.count()-1)
	}
	if r := tc.rate(m.duration); r > 0 {
		m.put(measure.StreamTokensPerSecond, time.Duration(r)*time.Microsecond)
	}
}

// countTokens counts the session's output tokens toward the run's throughput.
func (m *sessionMetrics) countTokens() {
	tc := &m.tokens
	if n := tc.count(); n > 0 {
		m.rec.outputTokens.Add(n)
		if tc.estimatedCount() {
			m.rec.estimatedTokens.Add(n)
			m.rec.estimatedSessions.Add(1)
			m.rec.estimated(cmp.Or(tc.method, estimatedByWords))
		}
	}
}

// tokenGap buffers one frame's share of inter-token latency: k tokens after gap d are k gaps
// of d/k.
func (m *sessionMetrics) tokenGap(d time.Duration, k int64) {
	m.itl[m.nITL] = tokenGapEntry{gap: d / time.Duration(k), n: int32(min(k, 1<<30))}
	m.nITL++
	if m.nITL == gapBuffer {
		m.flushTokenGaps()
	}
}

func (m *sessionMetrics) flushTokenGaps() {
	if !m.record || m.nITL == 0 {
		m.nITL = 0
		return
	}
	m.shard.mu.Lock()
	for _, g := range m.itl[:m.nITL] {
		m.putN(measure.InterTokenLatency, g.gap, int64(g.n))
	}
	m.shard.mu.Unlock()
	m.nITL = 0
}

// tokenGapEntry is one buffered frame of inter-token latency: n tokens, gap each.
type tokenGapEntry struct {
	gap time.Duration
	n   int32
}

// putN records n values d; the shard lock must be held. A gap of 0 (tokens in one frame
// arriving within a microsecond of the previous) is a real value here, so it is recorded.
func (m *sessionMetrics) putN(metric measure.Metric, d time.Duration, n int64) {
	k := measure.Key{Metric: metric, Scenario: m.scenario, Dialect: m.dialect}
	if err := m.shard.hist.RecordN(k, d, n); err != nil {
		m.rec.RecordErrs.Add(1)
	}
}
