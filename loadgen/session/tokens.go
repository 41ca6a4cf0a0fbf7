package session

import (
	"cmp"
	"slices"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

// tokenClock follows one session's output tokens (thinking and answer text, not tool-call
// arguments) with no lock or allocation per event, counted as docs/METRICS.md says: the checker's
// Observation.Tokens with ground truth, else the usage report spread over the text frames at the
// end, else a model tokenizer on the kept text (settle), else the text's words.
type tokenClock struct {
	usageOnly bool // no ground truth: the usage report counts, Observation.Tokens is ignored

	firstToken, firstAnswer time.Duration // since the intended start; 0 = not yet (TTFT, TTFO)
	firstAt, lastAt         time.Time     // the first and last frame that carried tokens
	tokens                  int64         // counted from the ground truth
	frames                  int64         // thinking and answer frames (usage spreading)
	usage                   int64         // reported by usage, summed over turns
	estimated               int64         // the text's words, or its model tokens once settled
	// text is the output text of usage-less turns (at most protocol.MaxOutputText bytes of
	// textTotal); gathered is the checker last taken from; method is how estimated was counted
	// once settled ("": words).
	text      []byte
	textTotal int64
	kept      bool
	gathered  protocol.Checker
	method    string
}

// estimatedByWords is the method of a count of whitespace-delimited words.
const estimatedByWords = "words"

// keepText takes the output text of c's turn, which just ended, while no usage report came.
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

// settle counts a usage-less session's kept text with the model's encoding, once, replacing
// the words. Call it outside any lock: the first count loads the encoding (up to 1.3 s).
func (tc *tokenClock) settle(encoding string) {
	if !tc.estimatedCount() || !tc.kept || tc.method != "" {
		return
	}
	if n, err := modeltokens.Count(encoding, string(tc.text)); err == nil {
		if kept := int64(len(tc.text)); kept > 0 && tc.textTotal > kept {
			// Scaled from what was kept to the whole.
			n = int(int64(n) * tc.textTotal / kept)
		}
		tc.estimated, tc.method = int64(n), modeltokens.Method(encoding)
	}
	tc.text = tc.text[:0]
}

// observe takes one frame's observation at now (since is now − the intended start).
func (tc *tokenClock) observe(now time.Time, since time.Duration, obs *protocol.Observation, m *sessionMetrics) {
	if obs.UsageTokens > 0 && obs.UsageTokens <= protocol.MaxUsageTokens {
		// Bounded here too, so no dialect's report can overflow the totals.
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

// count is the session's output tokens (counted, reported or estimated), one per text frame at least.
func (tc *tokenClock) count() int64 {
	if !tc.usageOnly {
		return tc.tokens
	}
	return max(cmp.Or(tc.usage, tc.estimated), tc.frames)
}

// estimatedCount reports whether count is estimated from the text (no ground truth, no usage).
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

// rate is tokens/s × measure.RateScale; 0 without tokens or under a microsecond (no resolution).
func (tc *tokenClock) rate(duration time.Duration) int64 {
	n := tc.count()
	if n == 0 || duration < time.Microsecond {
		return 0
	}
	return min(max(int64(float64(n)*measure.RateScale/duration.Seconds()), 1), measure.MaxRate)
}

// sessionValue is the session's own value of an SLO's metric, in the metric's histogram unit.
func (m *sessionMetrics) sessionValue(metric measure.Metric) (float64, bool) {
	switch metric {
	case measure.FirstChunkOverhead, measure.FirstTokenOverhead:
		_, over, ok := m.overhead(metric)
		return float64(over.Microseconds()), ok
	case measure.StreamTokensPerSecond:
		r := m.tokens.rate(m.duration)
		return float64(r), r > 0
	}
	for _, l := range m.latencies() {
		if l.metric == metric {
			return float64(l.d.Microseconds()), l.d > 0
		}
	}
	return 0, false
}

// latencies are the session's one-value latencies by metric, 0 when not measured.
func (m *sessionMetrics) latencies() [12]metricValue {
	return [...]metricValue{
		{measure.Connect, time.Duration(m.connect.Load())}, {measure.Headers, m.headers}, {measure.FirstEvent, m.firstEvent},
		{measure.FirstChunk, m.firstChunk}, {measure.FirstThinking, m.firstThinking}, {measure.StreamDuration, m.duration},
		{measure.StopLatency, m.stop}, {measure.ToolCancelSettle, m.toolCancel}, {measure.StartLag, m.startLag},
		{measure.TimeToFirstToken, m.tokens.firstToken}, {measure.TimeToFirstOutput, m.tokens.firstAnswer},
		{measure.TimePerOutputToken, m.tokens.tpot()},
	}
}

type metricValue struct {
	metric measure.Metric
	d      time.Duration
}

// judgeGoodput counts a session that ended after the warm-up toward goodput: judged unless
// aborted or cut, good when it had no error outcome and no violation, and met every SLO.
func (m *sessionMetrics) judgeGoodput(res Result, slos []verdict.SessionSLO) {
	if !m.afterWarmup() || res.Outcome == measure.OutcomeAborted || res.Outcome == measure.OutcomeCut {
		return
	}
	m.rec.goodJudged.Add(1)
	if !res.Outcome.IsError() && len(res.Violations) == 0 && !m.missedSLO && m.meetsSLOs(slos) {
		m.rec.good.Add(1)
	}
}

// meetsSLOs tells whether the session's (or turn's) own values meet every SLO.
func (m *sessionMetrics) meetsSLOs(slos []verdict.SessionSLO) bool {
	return !slices.ContainsFunc(slos, func(s verdict.SessionSLO) bool { return !s.Met(m.sessionValue(s.Metric())) })
}

// flushTokens records the session's token metrics; the shard lock must be held.
func (m *sessionMetrics) flushTokens() {
	tc := &m.tokens
	if tpot := tc.tpot(); tc.usageOnly && tpot > 0 {
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
			bump(m.rec, m.rec.estimatedBy, cmp.Or(tc.method, estimatedByWords))
		}
	}
}

// tokenGap buffers one frame's inter-token latency: k tokens after gap d are k gaps of d/k.
func (m *sessionMetrics) tokenGap(d time.Duration, k int64) {
	m.itl[m.nITL] = tokenGapEntry{gap: d / time.Duration(k), n: int32(min(k, 1<<30))}
	m.nITL++
	if m.nITL == gapBuffer {
		m.flushTokenGaps()
	}
}

func (m *sessionMetrics) flushTokenGaps() {
	if m.record && m.nITL > 0 {
		m.shard.mu.Lock()
		rec := m.shard.hist.For(m.key(measure.InterTokenLatency))
		for _, g := range m.itl[:m.nITL] {
			m.count(rec.RecordN(g.gap, int64(g.n)))
		}
		m.shard.mu.Unlock()
	}
	m.nITL = 0
}

// tokenGapEntry is one buffered frame of inter-token latency: n tokens, gap each.
type tokenGapEntry struct {
	gap time.Duration
	n   int32
}

// putN records n values d, 0 included; the shard lock must be held.
func (m *sessionMetrics) putN(metric measure.Metric, d time.Duration, n int64) {
	m.count(m.shard.hist.RecordN(m.key(metric), d, n))
}

// key is metric's histogram key for this session.
func (m *sessionMetrics) key(metric measure.Metric) measure.Key {
	return measure.Key{Metric: metric, Scenario: m.scenario, Dialect: m.dialect}
}

// count counts a value the histograms refused.
func (m *sessionMetrics) count(err error) {
	if err != nil {
		m.rec.RecordErrs.Add(1)
	}
}
