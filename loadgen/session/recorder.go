package session

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// Recorder collects a run's measurements from many concurrent sessions. A session keeps its
// values lock-free in its sessionMetrics and flushes them into one of a few shards under its
// mutex; histograms (~190 KB each, hundreds of keys) are per shard (one per P), never per stream.
type Recorder struct {
	shards []recShard
	// Start is the run's start, which latency over time counts from; set before the first session.
	Start time.Time
	// taken holds what snapshots took out of the shards; only the collector goroutine touches it.
	taken *measure.Histograms

	// Started, Active, Frames and Violations count sessions started and open, frames read and
	// violations found; Late and Dropped the open loop's late and dropped starts (LateAtBegin:
	// those due before a late shard began); RecordErrs the values a histogram refused.
	Started, Active, Frames, Violations    atomic.Int64
	Late, Dropped, LateAtBegin, RecordErrs atomic.Int64
	ok, failed, bytes, errs                atomic.Int64 // errs: sessions with an error outcome
	outputTokens, good, goodJudged         atomic.Int64
	estimatedTokens, estimatedSessions     atomic.Int64     // output tokens estimated from the text
	turnRequests                           atomic.Int64     // conversation turns before the last
	warmupRequests                         atomic.Int64     // completed requests that ended in the warm-up
	outcomes                               [16]atomic.Int64 // indexed as outcomeList

	// OnLatencies fans out to the run's LatencyOutputs (nil: none), called after a flush,
	// outside the lock. Set before the first session.
	OnLatencies  func(Latencies)
	measureKinds sync.Map // a dialect measure's name → its kind

	mu          sync.Mutex // guards the fields below (touched at session end, not per event)
	httpStatus  map[int]int64
	byRule      map[protocol.Rule]int64
	failedBy    map[string]int64 // sessions failed by violations alone, by their sorted rules
	estimatedBy map[string]int64 // estimated sessions by counting method
}

// recShard is one lock-protected histogram set and its latencies over time.
type recShard struct {
	mu      sync.Mutex
	hist    *measure.Histograms
	windows *measure.Windows
	_       [32]byte // keeps neighbouring shards' mutexes off one cache line
}

// NewRecorder returns a recorder of shards histogram sets (one per P).
func NewRecorder(shards int) *Recorder {
	r := &Recorder{
		shards:      make([]recShard, max(shards, 1)),
		httpStatus:  make(map[int]int64),
		byRule:      make(map[protocol.Rule]int64),
		failedBy:    make(map[string]int64),
		estimatedBy: make(map[string]int64),
	}
	for i := range r.shards {
		r.shards[i].hist = measure.NewHistograms()
		r.shards[i].windows = measure.NewWindows()
	}
	return r
}

// gapBuffer is how many chunk gaps a session buffers before a flush; every open stream holds it.
const gapBuffer = 8

// sessionMetrics is one session's measurements before a flush; 0 means "not observed" (see observed).
type sessionMetrics struct {
	scenario, dialect string
	shard             *recShard
	rec               *Recorder
	record            bool      // false during warmup
	warmupEnd         time.Time // the run's: what ends after it counts toward throughput
	intended          time.Time // what the latencies count from (a conversation turn's: its send)
	// connect is set from the dial goroutine, which may outlive the request.
	connect atomic.Int64

	headers, firstEvent, firstChunk, firstThinking, duration, stop, toolCancel, startLag time.Duration
	gaps                                                                                 [gapBuffer]time.Duration
	nGaps                                                                                int

	tokens    tokenClock
	itl       [gapBuffer]tokenGapEntry // buffered like gaps
	nITL      int
	scripted  scriptedLatency
	missedSLO bool // a conversation turn before the last missed a goodput SLO
	measurer  protocol.Measurer
	measures  []protocol.Measure
}

func (r *Recorder) session(index uint64, scenario, dialect string, record bool) *sessionMetrics {
	return &sessionMetrics{
		scenario: scenario, dialect: dialect, record: record, rec: r,
		shard: &r.shards[index%uint64(len(r.shards))],
	}
}

// afterWarmup reports whether the session (or turn) ends after the warm-up, now: throughput
// counts what completed in the measured time, whenever it started, as a steady state would.
func (m *sessionMetrics) afterWarmup() bool { return time.Now().After(m.warmupEnd) }

// observed turns a measured duration into a "set" value (0 means unset).
func observed(d time.Duration) time.Duration { return max(d, 1) }

func (m *sessionMetrics) gap(d time.Duration) {
	m.gaps[m.nGaps] = d
	m.nGaps++
	if m.nGaps == gapBuffer {
		m.flushGaps()
	}
}

func (m *sessionMetrics) flushGaps() {
	if m.record && m.nGaps > 0 {
		m.shard.mu.Lock()
		rec := m.shard.hist.For(m.key(measure.ChunkGap))
		for _, g := range m.gaps[:m.nGaps] {
			// A gap of 0 is measured: two frames of one read share its receive stamp.
			m.count(rec.RecordN(g, 1))
		}
		m.shard.mu.Unlock()
		if f := m.rec.OnLatencies; f != nil {
			f(Latencies{Scenario: m.scenario, Dialect: m.dialect, ChunkGaps: m.gaps[:m.nGaps]})
		}
	}
	m.nGaps = 0
}

// put records one value, 0 meaning none was measured; the shard lock must be held.
func (m *sessionMetrics) put(metric measure.Metric, d time.Duration) {
	if d != 0 {
		m.putN(metric, d, 1)
	}
}

// flush hands every value to the shard, once, when the session (or turn) ends.
func (m *sessionMetrics) flush() {
	m.flushGaps()
	m.flushTokenGaps()
	m.takeMeasures()
	if m.afterWarmup() {
		m.countTokens()
	}
	if !m.record {
		return
	}
	for _, ms := range m.measures { // locking only for new names
		if _, ok := m.rec.measureKinds.Load(ms.Name); !ok {
			m.rec.measureKinds.LoadOrStore(ms.Name, measure.KindOf(ms.Kind))
		}
	}
	m.shard.mu.Lock()
	for _, ms := range m.measures {
		m.putN(measure.Metric(ms.Name), measure.MeasureValue(ms), 1)
	}
	for _, l := range m.latencies() {
		m.put(l.metric, l.d)
	}
	for _, metric := range overheads {
		if _, over, ok := m.overhead(metric); ok {
			m.putN(metric, over, 1)
		}
	}
	m.putOverTime()
	m.flushTokens()
	m.shard.mu.Unlock()
	if f := m.rec.OnLatencies; f != nil {
		f(Latencies{Scenario: m.scenario, Dialect: m.dialect, TimeToFirstChunk: m.firstChunk})
	}
}

// putOverTime records first chunk, token and overheads in the windows; the shard lock must be held.
func (m *sessionMetrics) putOverTime() {
	if m.rec.Start.IsZero() {
		return // not a run's session (a preflight request)
	}
	put := func(metric measure.Metric, measured, value time.Duration) {
		if measured == 0 {
			return
		}
		at := m.intended.Add(measured).Sub(m.rec.Start)
		if err := m.shard.windows.Record(metric, max(at, 0), value); err != nil {
			m.rec.RecordErrs.Add(1)
		}
	}
	put(measure.FirstChunk, m.firstChunk, m.firstChunk)
	put(measure.TimeToFirstToken, m.tokens.firstToken, m.tokens.firstToken)
	for _, metric := range overheads {
		if at, over, ok := m.overhead(metric); ok {
			put(metric, at, over)
		}
	}
}

// OverTime merges every shard's windows into one series per metric.
func (r *Recorder) OverTime() []measure.LatencySeries {
	out := measure.NewWindows()
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		r.RecordErrs.Add(out.Merge(s.windows))
		s.mu.Unlock()
	}
	return out.Series()
}

// Record records one value in shard (modulo the shards) outside any session.
func (r *Recorder) Record(shard uint64, k measure.Key, d time.Duration) {
	s := &r.shards[shard%uint64(len(r.shards))]
	s.mu.Lock()
	if err := s.hist.Record(k, max(d, 0)); err != nil {
		r.RecordErrs.Add(1)
	}
	s.mu.Unlock()
}

func (r *Recorder) outcome(o measure.Outcome) {
	i := slices.Index(outcomeList, o)
	if i < 0 {
		panic("loadgen: outcome " + string(o) + " is not in measure.Outcomes")
	}
	r.outcomes[i].Add(1)
	if o.IsError() {
		r.errs.Add(1)
	}
}

// bump adds one to m[k] under r.mu.
func bump[K comparable](r *Recorder, m map[K]int64, k K) {
	r.mu.Lock()
	m[k]++
	r.mu.Unlock()
}

// AddViolation counts one violation of rule.
func (r *Recorder) AddViolation(rule protocol.Rule) {
	r.Violations.Add(1)
	bump(r, r.byRule, rule)
}

// Completed is every session that ended, however it ended.
func (r *Recorder) Completed() int64 {
	var n int64
	for i := range r.outcomes {
		n += r.outcomes[i].Load()
	}
	return n
}

// Errors is every session with an error outcome so far.
func (r *Recorder) Errors() int64 { return r.errs.Load() }

// Merge returns every shard merged with what snapshots took out, counting values it dropped.
func (r *Recorder) Merge() *measure.Histograms {
	out := measure.NewHistograms()
	r.RecordErrs.Add(out.Merge(r.taken))
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		r.RecordErrs.Add(out.Merge(s.hist))
		s.mu.Unlock()
	}
	return out
}

// Counters snapshots the counters.
func (r *Recorder) Counters() measure.Counters {
	c := measure.Counters{
		SessionsStarted: r.Started.Load(), SessionsOK: r.ok.Load(), SessionsFailed: r.failed.Load(),
		Frames: r.Frames.Load(), Bytes: r.bytes.Load(),
		LateStarts: r.Late.Load(), DroppedStarts: r.Dropped.Load(), RecordErrors: r.RecordErrs.Load(),
		OutputTokens: r.outputTokens.Load(), GoodputSessions: r.good.Load(), GoodputJudged: r.goodJudged.Load(),
		EstimatedTokens: r.estimatedTokens.Load(), EstimatedTokenSessions: r.estimatedSessions.Load(),
		TurnRequests: r.turnRequests.Load(), WarmupRequests: r.warmupRequests.Load(),
	}
	for i, o := range outcomeList {
		if n := r.outcomes[i].Load(); n > 0 {
			if c.Outcomes == nil {
				c.Outcomes = map[measure.Outcome]int64{}
			}
			c.Outcomes[o] = n
		}
	}
	r.mu.Lock()
	c.HTTPErrors, c.FailedByRules, c.EstimatedBy = nonEmpty(r.httpStatus), nonEmpty(r.failedBy), nonEmpty(r.estimatedBy)
	r.mu.Unlock()
	return c
}

// nonEmpty is a copy of m, nil when m is empty.
func nonEmpty[K comparable](m map[K]int64) map[K]int64 {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// ViolationCounts snapshots violations by rule.
func (r *Recorder) ViolationCounts() map[protocol.Rule]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.byRule)
}

// TakeShards moves every shard's histograms into r.taken (a pointer swap under each lock) and
// returns it; its reader must be done before the next TakeShards or Merge.
func (r *Recorder) TakeShards() *measure.Histograms {
	if r.taken == nil {
		r.taken = measure.NewHistograms()
	}
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		h := s.hist
		s.hist = measure.NewHistograms()
		s.mu.Unlock()
		r.RecordErrs.Add(r.taken.Merge(h))
	}
	return r.taken
}

// Latencies are a batch of a session's ChunkGaps, or at its end its TimeToFirstChunk (0: none).
type Latencies struct {
	Scenario, Dialect string
	TimeToFirstChunk  time.Duration
	ChunkGaps         []time.Duration
}
