// Package loadgen is streambench's load generator: thousands of SSE clients that replay a
// workload mix against an agent runtime, judge every stream with its dialect's checker against
// the scenario's ground truth, and measure what users of agent streaming feel (time to first
// chunk, gaps, cancel latency) into per-scenario × dialect HdrHistograms.
//
// The schedule of session starts is kept apart from the streams: a Pacer (open loop) or a set
// of virtual users (closed loop) decides when a session starts; each session then runs on its
// own goroutine. Latency is measured from the intended start, so a target that cannot keep up
// shows it instead of slowing the schedule down (no coordinated omission). Measurements go to
// the measure package's data model; rendering is the report package's job. What a run produces
// while it runs (each session's end, progress, latencies, snapshots) goes to its Outputs
// (Config.Outputs, Output); its final results are Run's return value.
package loadgen

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/loadgen/leakcheck"
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/loadgen/transport"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/verdict"
)

// runner is one run's shared state.
type runner struct {
	cfg        Config
	client     *http.Client
	transport  http.RoundTripper // the client's: Config.Transport or the generator's own
	rec        *session.Recorder
	sessions   *session.Runner
	planner    *session.Planner
	out        outputs // Config.Outputs by what they take
	runID      string
	start      time.Time
	warmupEnd  time.Time
	aborts     abortLog
	samples    sampler
	peakActive atomic.Int64
	lateBy     time.Duration // how long after Config.StartAt the run began

	// reqOpts are each profile × target's client and headers (by Pick.ProfileIndex and
	// TargetIndex); redactor hides their secret values in text that might quote a request
	// (nil: no secrets).
	reqOpts  [][]session.Request
	redactor *Redactor

	errMu     sync.Mutex
	errSeen   int
	errSample []string // the first few unscripted errors, for the verdict
	errKinds  []string // errSample's signatures (errorSignature)
	stopped   string   // why the run stopped before its planned end (the circuit breaker)

	breaker breaker
}

// maxErrorSamples bounds how many error messages the verdict quotes, maxErrorSampleBytes
// the length of each.
const (
	maxErrorSamples     = 5
	maxErrorSampleBytes = 400
)

// noteError keeps the first few unscripted errors of the run for the verdict, one of each
// kind: an error alike to one kept but for the session id and the URLs (every session of a
// dead target) is only counted.
func (r *runner) noteError(p *session.Plan, err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	r.errSeen++
	if len(r.errSample) < maxErrorSamples {
		sig := errorSignature(p.ID, err.Error())
		if slices.Contains(r.errKinds, sig) {
			return
		}
		r.errKinds = append(r.errKinds, sig)
		msg := r.redact(err.Error())
		if len(msg) > maxErrorSampleBytes {
			// A hostile target's bytes quoted in an error (a malformed status line) can be
			// long; the start says what was wrong.
			msg = strings.ToValidUTF8(msg[:maxErrorSampleBytes], "") + fmt.Sprintf("…(%d bytes)", len(msg))
		}
		r.errSample = append(r.errSample, fmt.Sprintf("%s [scenario %s, %s]", msg, p.Pick.Scenario, p.Label))
	}
}

// redact replaces the run's secrets in s (a server may echo a request's headers in an error
// body, a redirect, a frame).
func (r *runner) redact(s string) string { return r.redactor.String(s) }

// endSession is the run's bookkeeping of a measured session's end (session.Runner.Ended):
// its error, the circuit breaker, its violations (counted, and offered as samples) and its
// abort.
func (r *runner) endSession(p *session.Plan, res *session.Result) {
	if res.Err != nil {
		r.noteError(p, res.Err)
	}
	r.breaker.note(p.ID, res.Outcome, res.Err)
	for _, v := range res.Violations {
		r.rec.AddViolation(v.Rule)
	}
	r.samples.offer(p, res, r.redact)
	if res.Abort != nil {
		r.aborts.add(*res.Abort)
	}
}

// noRedirects makes the client return a redirect as the response: a stream request sent again
// elsewhere would be another session than the one measured (and a redirect loop would hold it
// until the client gave up), so a 3xx is an HTTP error naming its Location.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// concurrency estimates the run's peak number of open streams, to size the connection pool.
func (c *Config) concurrency() int {
	n := c.Clients
	if c.openLoop() {
		n = c.MaxInflight
	}
	for _, s := range c.Stages {
		if !c.RateStages {
			n = max(n, int(math.Ceil(s.Target)))
		}
	}
	return max(n, 1)
}

// newTransport builds the generator's HTTP transport: HTTP/1.1 with one connection per open
// stream (as browsers with EventSource) on the goroutine-free transport.Transport, over TLS for
// https; or HTTP/2 on net/http's Transport (h2c for http, h2 by ALPN for https),
// multiplexing streams over a few connections.
func newTransport(cfg *Config) http.RoundTripper {
	tlsConf := cfg.tlsConfig()
	conc := cfg.concurrency()
	if !cfg.HTTP2 {
		return transport.New(conc+16, tlsConf)
	}
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	p.SetHTTP2(true)
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     tlsConf,
		MaxConnsPerHost:     0,
		MaxIdleConns:        conc + 16,
		MaxIdleConnsPerHost: conc + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		Protocols:           p,
	}
}

// tlsConfig is the client TLS config for https targets: a clone of Config.TLS (nil: the
// system's roots).
func (c *Config) tlsConfig() *tls.Config {
	conf := &tls.Config{}
	if c.TLS != nil {
		conf = c.TLS.Clone()
	}
	// X25519 and P-256 only: the hybrid post-quantum share Go offers by default
	// (X25519MLKEM768) keeps ~5 KiB of key material per connection for its life, a quarter of
	// an open TLS stream's memory, and a load generator's traffic needs no such secrecy.
	conf.MinVersion = max(conf.MinVersion, tls.VersionTLS12)
	conf.CurvePreferences = []tls.CurveID{tls.X25519, tls.CurveP256}
	return conf
}

// NewRunID is a run id from the time and 3 random bytes (20261207-150405-a1b2c3).
func NewRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

// Run runs the load described by cfg and returns its results. It returns an error only when
// the run could not happen (bad config); a run that found
// violations, errors or leaks returns them in the results, with Verdict.Pass false.
//
// Shutdown is two-staged: at the deadline (or when cfg.Interrupt closes) no new session starts
// and in-flight ones get cfg.Grace to finish, then they are cancelled. Cancelling ctx cancels
// in-flight sessions at once and skips the post-run checks; what was measured is still
// returned, marked interrupted.
func Run(ctx context.Context, c Config) (*measure.Run, error) {
	r, err := newRunner(c)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer r.client.CloseIdleConnections()
	pre := r.baseline(ctx)
	r.begin(ctx)
	l := r.startLoad(ctx)
	defer l.end()
	r.loadLoop(l)
	after := r.drain(ctx, l, pre)
	post := r.postRunChecks(ctx, pre, after.snapErr)
	return r.judge(r.results(ctx, l, after, post))
}

// newRunner checks the config and sets up what every session shares: the recorder, the
// requests, the redactor, the run id and the HTTP client.
func newRunner(c Config) (*runner, error) {
	cfg, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:   cfg,
		rec:   session.NewRecorder(runtime.GOMAXPROCS(0)),
		out:   outputsOf(cfg.Outputs),
		runID: cfg.RunID,
	}
	r.rec.OnLatencies = r.out.latencies
	if r.reqOpts, err = cfg.resolve(); err != nil {
		return nil, err
	}
	r.redactor = newRunRedactor(&cfg, r.reqOpts)
	if r.runID == "" {
		r.runID = NewRunID()
	}
	rt := cfg.Transport
	if rt == nil {
		rt = newTransport(&cfg)
	}
	r.transport = rt
	r.client = &http.Client{Transport: rt, CheckRedirect: noRedirects}
	r.samples.perRule = cfg.SamplesPerRule
	r.planner = cfg.planner()
	r.sessions = &session.Runner{
		Client: r.client, Target: cfg.Target, Rec: r.rec,
		StreamTimeout: cfg.StreamTimeout, IdleTimeout: cfg.IdleTimeout, Grace: cfg.Grace,
		ScriptTimeScale: cfg.ScriptTimeScale, OpenLoop: cfg.openLoop(), GoodputSLOs: cfg.GoodputSLOs, Endpoint: cfg.Endpoint,
		Redact: r.redact, Ended: r.endSession, Record: r.out.records,
	}
	return r, nil
}

// preRun is what a run reads before its first session, to compare with after its last.
type preRun struct {
	// leakCheck: this run checks for leaks itself. A shard's own leak check would see the
	// other shards' streams: leakcheck.Check judges the whole run instead.
	leakCheck  bool
	leaks      *leakcheck.Reading
	cpuSources []cpuSource
	cpu        cpuReading
	cpuFrom    time.Time
}

// baseline reads the leak baseline and the processes' CPU time before the load.
func (r *runner) baseline(ctx context.Context) preRun {
	b := preRun{leakCheck: !r.cfg.NoLeakCheck && !r.cfg.Shard.Sharded()}
	if b.leakCheck {
		b.leaks = r.leakProbe().Baseline(ctx)
	}
	b.cpuSources = r.cpuSources(b.leakCheck)
	b.cpu, b.cpuFrom = r.readCPU(ctx, b.cpuSources), time.Now()
	return b
}

// begin sets the run's start: now, or a shard's shared --start-at once it comes.
func (r *runner) begin(ctx context.Context) {
	cfg := &r.cfg
	r.start = time.Now()
	if !cfg.StartAt.IsZero() {
		// Every shard keeps the shared start as its own, so one that begins late is behind
		// its schedule from the first start and counts those starts as late.
		late, ok := waitStartAt(ctx, cfg.Clock, cfg.Interrupt, cfg.StartAt)
		if ok {
			r.start, r.lateBy = cfg.StartAt, late
		} else {
			r.start = time.Now()
		}
	}
	r.warmupEnd = r.start.Add(cfg.Warmup)
	r.rec.Start = r.start
	r.sessions.Start, r.sessions.WarmupEnd, r.sessions.LateBy = r.start, r.warmupEnd, r.lateBy
}

// load is a run's schedule under way: what stops it starting sessions, what ends the
// sessions in flight, and the collector beside it.
type load struct {
	// hard ends in-flight streams; cancelled at the end of the grace period with
	// session.ErrGraceEnded as its cause, so a session still without a terminal then knows it hung.
	hard         context.Context
	hardCancel   context.CancelCauseFunc
	stopStarting chan struct{}
	stopOnce     sync.Once
	interrupted  atomic.Bool
	deadline     *time.Timer
	sessions     sync.WaitGroup

	// The collector: a per-second timeline and progress, and the snapshots, until the run
	// has drained.
	tl            timeline
	snaps         *snapshotter
	collectorDone chan struct{}
	drained       chan struct{}
	draining      atomic.Bool
	lag           *lagProbe
}

// stop stops sessions starting, once, for why ("interrupt" marks the run interrupted).
func (l *load) stop(why string) {
	l.stopOnce.Do(func() {
		if why == "interrupt" {
			l.interrupted.Store(true)
		}
		close(l.stopStarting)
	})
}

// end releases the load's timer and context when Run returns.
func (l *load) end() {
	if l.deadline != nil {
		l.deadline.Stop()
	}
	l.hardCancel(nil)
}

// startLoad arms what stops the schedule (the deadline, an interrupt, the circuit breaker)
// and starts the collector, the peak tracker and the lag probe.
func (r *runner) startLoad(ctx context.Context) *load {
	cfg := &r.cfg
	l := &load{stopStarting: make(chan struct{}), collectorDone: make(chan struct{}), drained: make(chan struct{})}
	l.hard, l.hardCancel = context.WithCancelCause(ctx)
	r.breaker = breaker{n: max(cfg.BreakerSessions, 0), trip: func(reason string) {
		r.errMu.Lock()
		r.stopped = reason
		r.errMu.Unlock()
		l.stop("breaker")
	}}
	if cfg.Duration > 0 {
		l.deadline = time.AfterFunc(time.Until(r.start.Add(cfg.Duration)), func() { l.stop("deadline") })
	}
	go func() {
		select {
		case <-cfg.Interrupt:
			l.stop("interrupt")
		case <-ctx.Done():
			l.stop("interrupt")
		case <-l.stopStarting:
		}
	}()
	if r.out.snapshot != nil {
		l.snaps = newSnapshotter(r.out.snapshot, cfg.SnapshotInterval, threadCPU)
	}
	r.offerSnapshot(l, true) // the run's directory exists, marked incomplete, before the first session
	go r.collect(l)
	go r.trackPeak(l.drained)
	l.lag = startLagProbe(lagInterval)
	return l
}

// offerSnapshot hands the snapshotter the run so far, if the run saves snapshots.
func (r *runner) offerSnapshot(l *load, wait bool) {
	if l.snaps != nil {
		l.snaps.offer(func() *measure.Run { return r.snapshot(l.tl.points, l.interrupted.Load()) }, wait)
	}
}

// collect ticks the timeline and the progress every second and offers snapshots, until the
// run has drained.
func (r *runner) collect(l *load) {
	defer close(l.collectorDone)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var snapTick <-chan time.Time
	if l.snaps != nil {
		t := time.NewTicker(r.cfg.SnapshotInterval)
		defer t.Stop()
		snapTick = t.C
	}
	second := 0
	for {
		select {
		case <-tick.C:
			second++
			l.tl.tick(r.rec, second)
			r.progress(second, l.draining.Load())
		case <-snapTick:
			r.offerSnapshot(l, false)
		case <-l.drained:
			second++
			l.tl.tick(r.rec, second)
			r.offerSnapshot(l, true) // everything measured, should the post-run checks be killed
			return
		}
	}
}

// loadLoop starts sessions on the schedule (open or closed loop) until it ends or is stopped.
func (r *runner) loadLoop(l *load) {
	if r.cfg.openLoop() {
		r.openLoop(l.hard, l.stopStarting, &l.sessions)
	} else {
		r.closedLoop(l.hard, l.stopStarting, &l.sessions)
	}
	l.stop("end of schedule")
}

// afterLoad is what a run measured as it drained.
type afterLoad struct {
	ended   time.Time
	lag     *hdrhistogram.Histogram
	loads   []measure.ProcessLoad
	snapErr error
}

// drain gives the sessions in flight the grace period, then cancels them; it stops the
// collector, the lag probe and the snapshots, and reads the processes' CPU time.
func (r *runner) drain(ctx context.Context, l *load, b preRun) afterLoad {
	l.draining.Store(true)
	allDone := make(chan struct{})
	go func() { l.sessions.Wait(); close(allDone) }()
	select {
	case <-allDone:
	case <-time.After(r.cfg.Grace):
		l.hardCancel(session.ErrGraceEnded)
		<-allDone
	case <-ctx.Done():
		<-allDone
	}
	a := afterLoad{ended: time.Now()}
	close(l.drained)
	<-l.collectorDone
	a.lag = l.lag.stop()
	a.loads = processLoads(b.cpuSources, b.cpu, r.readCPU(ctx, b.cpuSources), a.ended.Sub(b.cpuFrom))
	if l.snaps != nil {
		a.snapErr = l.snaps.close()
	}
	return a
}

// postRun is what the checks after the load found.
type postRun struct {
	errs            []error
	mock            mockChecks
	leaks           []measure.Leak
	leaksNotChecked []measure.LeakNotChecked
}

// postRunChecks, unless ctx was cancelled: the mock's records (cancel latency, R-abort), the
// leak check.
func (r *runner) postRunChecks(ctx context.Context, b preRun, snapErr error) postRun {
	var p postRun
	if snapErr != nil {
		p.errs = append(p.errs, fmt.Errorf("results were not saved as the run went: %w", snapErr))
	}
	if ctx.Err() == nil {
		var err error
		if p.mock, err = r.checkMock(ctx); err != nil {
			p.errs = append(p.errs, err)
		}
	}
	if b.leakCheck && ctx.Err() == nil {
		p.leaks, p.leaksNotChecked = r.leakProbe().Check(ctx, b.leaks)
	}
	if !r.cfg.NoLeakCheck && r.cfg.Shard.Sharded() {
		p.leaksNotChecked = append(p.leaksNotChecked, measure.LeakNotChecked{Source: "run",
			Reason: fmt.Sprintf("shard %s: one leak check judges the whole sharded run (streambench leaks baseline/verify, or merge --leak-baseline)", r.cfg.Shard)})
	}
	return p
}

// leakProbe is the run's own leak check: its client, the configured sources and its peak.
func (r *runner) leakProbe() *leakcheck.Probe {
	return &leakcheck.Probe{Client: r.client, RuntimeURL: r.cfg.RuntimeMetricsURL, MockURL: r.cfg.MockURL,
		PerStream: r.cfg.LeakPerStream, Grace: r.cfg.LeakGrace, Self: !r.cfg.noSelfLeakGauges, Peak: r.peakActive.Load}
}

// results is the run as measured, not yet judged.
func (r *runner) results(ctx context.Context, l *load, a afterLoad, p postRun) *measure.Run {
	cfg := &r.cfg
	hist := r.rec.Merge()
	if dropped := hist.Set(generatorLagKey, a.lag); dropped > 0 {
		r.rec.RecordErrs.Add(dropped)
	}
	run := &measure.Run{
		Histograms: hist,
		Timeline:   l.tl.points,
		Samples:    r.samples.collected(),
		Summary: measure.Summary{
			Schema:      measure.SchemaVersion,
			RunID:       r.runID,
			Started:     r.start,
			Ended:       a.ended,
			Interrupted: l.interrupted.Load() || ctx.Err() != nil,
			Config:      r.recordedConfig(),
			Environment: environment(cfg.Target),
			Metrics:     measure.Summarize(hist),
			Overall:     measure.SummarizeOverall(hist),
			OverTime:    r.rec.OverTime(),
			Measures:    r.rec.MeasureInfos(),
			Counters:    r.rec.Counters(),
			Violations:  r.rec.ViolationCounts(),
			Leaks:       p.leaks,
			// Not checked is reported, never a failure: the verdict reads Leaks alone.
			LeaksNotChecked:  p.leaksNotChecked,
			ProviderRequests: p.mock.providerRequests,
		},
	}
	// Rates are over the measured wall time: sessions started in the warmup are not counted.
	measuredFrom := r.start
	if r.warmupEnd.After(measuredFrom) {
		measuredFrom = r.warmupEnd
	}
	run.Summary.Tokens = measure.NewTokenSummary(run.Summary.Counters, sloExprs(cfg.GoodputSLOs), a.ended.Sub(measuredFrom))
	run.Summary.Judging = r.judging(p.errs)
	run.Summary.Shard = r.shardInfo()
	run.Summary.Verdict.Warnings = r.warnings(&run.Summary, a, p)
	roundCores(a.loads)
	run.Summary.Processes, run.Summary.MachineCores = a.loads, machineCores()
	return run
}

// shardInfo is the run's place in a sharded run, for its summary (nil: not sharded). The
// snapshots carry it as the final results do, so that both go to the shard's directory
// (measure.RunDir), never the run's.
func (r *runner) shardInfo() *measure.ShardInfo {
	cfg := &r.cfg
	if cfg.Shard.Count == 0 {
		return nil
	}
	return &measure.ShardInfo{Index: cfg.Shard.Index, Count: cfg.Shard.Count, StartAt: cfg.StartAt.UTC(), LateBy: r.lateBy}
}

// warnings are what the verdict warns of in a run's measurements, in the order they are shown.
func (r *runner) warnings(s *measure.Summary, a afterLoad, p postRun) []string {
	var ws []string
	add := func(w string) {
		if w != "" {
			ws = append(ws, w)
		}
	}
	add(p.mock.warning)
	add(retriesWarning(p.mock.providerRequests))
	if t := s.Tokens; t.Estimated {
		add(fmt.Sprintf("%d of %d sessions had no usage report: their %d output tokens are estimated from the text (counted with %s), "+
			"so output tokens, tpot, itl and tokens/s are marked estimated", t.EstimatedSessions, s.Counters.SessionsStarted, t.EstimatedTokens, t.EstimatedMethod()))
	}
	if r.lateBy > session.LateStart {
		add(fmt.Sprintf("started %s after --start-at %s: %d starts already due then were late (counted in late_starts)",
			r.lateBy.Round(time.Millisecond), r.cfg.StartAt.UTC().Format(time.RFC3339Nano), r.rec.LateAtBegin.Load()))
	}
	paced := s.Counters
	paced.LateStarts -= r.rec.LateAtBegin.Load() // a late start is not an overloaded generator
	add(overloadWarning(a.lag, paced))
	add(saturation(a.loads, machineCores(), a.lag)) // before roundCores: it reads the loads unrounded
	return ws
}

// judge adds what the transport saw between responses, stamps the verdict and redacts the run.
func (r *runner) judge(run *measure.Run) (*measure.Run, error) {
	if st, ok := r.transport.(*transport.Transport); ok {
		// Bytes a target sent between responses were nobody's: the sessions were not judged
		// on them, but the target's keep-alive connections were not reused after. The parked
		// connections are looked at (and closed) first.
		st.CloseIdleConnections()
		run.Summary.Verdict.Warnings = append(run.Summary.Verdict.Warnings, st.StrayWarnings()...)
	}
	if err := verdict.Stamp(run); err != nil {
		// The mix's thresholds were parsed before the run (ParseMix): this is a defect.
		return run, fmt.Errorf("judge the run: %w", err)
	}
	// Last, over everything the run holds: its verdict quotes errors and settings.
	r.redactor.Run(run)
	return run, nil
}

// allowed is the mix's allow list and Config.Allow, without duplicates, in that order.
func (c *Config) allowed() []protocol.Rule {
	var out []protocol.Rule
	for _, r := range append(slices.Clone(c.Mix.Allow), c.Allow...) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// trackPeak samples the number of open streams for the leak tolerance.
func (r *runner) trackPeak(done <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if a := r.rec.Active.Load(); a > r.peakActive.Load() {
			r.peakActive.Store(a)
		}
		select {
		case <-t.C:
		case <-done:
			return
		}
	}
}

func (r *runner) progress(second int, draining bool) {
	if r.out.progress == nil {
		return
	}
	planned := r.cfg.Duration
	if planned == 0 {
		planned = r.cfg.Stages.Duration()
	}
	rec := r.rec
	r.out.progress(Progress{
		Elapsed: time.Duration(second) * time.Second, Planned: planned, PlannedSessions: r.cfg.Sessions,
		Active: rec.Active.Load(), Started: rec.Started.Load(),
		Completed: rec.Completed(),
		Errors:    rec.Errors(), Violations: rec.Violations.Load(), Frames: rec.Frames.Load(),
		Draining: draining,
	})
}

// claim reserves the next session index (of this shard's); false once Sessions are used up.
func (r *runner) claim(next *atomic.Uint64) (uint64, bool) {
	i := r.cfg.Shard.global(next.Add(1) - 1)
	if r.cfg.Sessions > 0 && i >= uint64(r.cfg.Sessions) {
		return 0, false
	}
	return i, true
}

// openLoop starts sessions on the pacer's schedule until it stops, the session budget is
// spent or stop closes. A start that finds MaxInflight streams open is dropped and counted;
// one that happens late keeps its intended time.
func (r *runner) openLoop(ctx context.Context, stop <-chan struct{}, wg *sync.WaitGroup) {
	var pacer Pacer
	switch {
	case len(r.cfg.Stages) > 0:
		pacer = r.cfg.Stages
	case r.cfg.replay():
		pacer = r.traceSchedule()
	case r.cfg.Arrival != "constant":
		pacer = &Poisson{PerSecond: r.cfg.Rate, Burstiness: r.cfg.Burstiness, Seed: r.cfg.Seed}
	default:
		pacer = ConstantRate{PerSecond: r.cfg.Rate}
	}
	if r.cfg.Shard.Sharded() {
		pacer = ShardPacer{Base: pacer, Shard: r.cfg.Shard}
	}
	inflight := make(chan struct{}, r.cfg.MaxInflight)
	waiter := r.cfg.Clock.NewWaiter()
	var started uint64
	for {
		index := r.cfg.Shard.global(started)
		if r.cfg.Sessions > 0 && index >= uint64(r.cfg.Sessions) {
			return
		}
		elapsed := time.Since(r.start)
		wait, done := pacer.Pace(elapsed, started)
		if done {
			return
		}
		due := elapsed + wait
		if r.cfg.Duration > 0 && due >= r.cfg.Duration {
			return
		}
		if wait > 0 {
			// Spinning the last stretch takes the poller's wake-up latency out of start lag,
			// for at most 5% of one core (250 µs of every wait of 5 ms or more).
			if !waiter.UntilSpinning(stop, r.start.Add(due), min(250*time.Microsecond, wait/20)) {
				return
			}
		} else {
			select {
			case <-stop:
				return
			default:
			}
		}
		started++
		select {
		case inflight <- struct{}{}:
		default:
			r.rec.Dropped.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inflight }()
			r.runSession(ctx, r.planShallow(index), r.start.Add(due))
		}()
	}
}

// traceSchedule starts the sessions at the endpoint trace's times.
func (r *runner) traceSchedule() Schedule {
	s := make(Schedule, len(r.cfg.Endpoint.Trace))
	for i, row := range r.cfg.Endpoint.Trace {
		s[i] = row.At
	}
	return s
}

// closedLoop runs virtual users: each starts a session, waits for it to end, thinks, and
// starts the next. With stages, user i runs only while the ramp's target exceeds i. It returns
// when the schedule is over (stop closed, the ramp ended, or every user spent the session
// budget); users still in a session finish it under the run's grace period (they are in wg)
// and start no other.
func (r *runner) closedLoop(ctx context.Context, stop <-chan struct{}, wg *sync.WaitGroup) {
	users := r.cfg.Clients
	var target atomic.Int64
	target.Store(int64(users))
	over := make(chan struct{}) // closed when the ramp has ended
	if len(r.cfg.Stages) > 0 {
		users = r.cfg.concurrency()
		target.Store(0)
		go func() {
			defer close(over)
			t := time.NewTicker(50 * time.Millisecond)
			defer t.Stop()
			for {
				v, done := r.cfg.Stages.Target(time.Since(r.start))
				target.Store(int64(math.Round(v)))
				if done {
					return
				}
				select {
				case <-t.C:
				case <-stop:
					return
				}
			}
		}()
	}
	// ended is closed by whichever comes first: stop, or the end of the ramp.
	ended := make(chan struct{})
	go func() {
		select {
		case <-stop:
		case <-over:
		}
		close(ended)
	}()
	var next atomic.Uint64
	var running sync.WaitGroup
	// A shard runs the users u ≡ Index (mod Count); a ramp's target counts every shard's.
	for j := range r.cfg.Shard.owns(users) {
		u := int(r.cfg.Shard.global(uint64(j)))
		running.Add(1)
		wg.Add(1)
		go func() {
			first := r.lateBy > session.LateStart // a late shard's users start their first session late
			defer wg.Done()
			defer running.Done()
			idle := time.NewTimer(time.Hour)
			defer idle.Stop()
			for {
				if int64(u) >= target.Load() {
					if !sleepUnless(idle, 50*time.Millisecond, ended) {
						return
					}
					continue
				}
				// stop is seen at once, not through ended's goroutine: the circuit breaker
				// stops from a session's end, while the other users race through sessions
				// that fail in microseconds.
				if closedAny(ended, stop) {
					return
				}
				index, ok := r.claim(&next)
				if !ok {
					return
				}
				if first {
					first = false
					r.rec.Late.Add(1)
					r.rec.LateAtBegin.Add(1)
				}
				res := r.runSession(ctx, r.planShallow(index), time.Now())
				pause := r.cfg.ThinkTime
				if r.cfg.HonorRetryAfter {
					pause = max(pause, res.RetryAfter)
				}
				if pause > 0 && !sleepUnless(idle, pause, ended) {
					return
				}
			}
		}()
	}
	allIdle := make(chan struct{})
	go func() { running.Wait(); close(allIdle) }()
	select {
	case <-ended:
	case <-allIdle: // every user spent the session budget
	}
}

// recordedConfig is the workload as stored in the results.
func (r *runner) recordedConfig() measure.Config {
	c := &r.cfg
	mc := measure.Config{
		Target: c.Target, Dialects: c.Mix.Dialects(), Clients: c.Clients, Rate: c.Rate,
		MaxInflight: c.MaxInflight, Duration: c.Duration, Sessions: c.Sessions,
		Warmup: c.Warmup, ThinkTime: c.ThinkTime, Mix: c.MixName, Seed: c.Seed,
		Faults: c.Info.Faults, HTTP2: c.HTTP2, Thresholds: c.Mix.Thresholds, Allow: c.allowed(), Extra: c.Info.Extra,
	}
	// Request options go into Extra, headers redacted here, once, so nothing downstream
	// (summary.json, the report) ever holds a secret.
	extra := map[string]string{}
	if len(c.Headers) > 0 {
		extra["header"] = strings.Join(RedactedHeaders(c.Headers), "; ")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		extra["option."+k] = fmt.Sprint(c.Options[k])
	}
	if c.NoGroundTruth {
		extra["no-ground-truth"] = "true"
	}
	if c.HonorRetryAfter {
		extra["honor-retry-after"] = "true"
	}
	if len(extra) > 0 {
		for k, v := range c.Info.Extra {
			extra[k] = v
		}
		mc.Extra = extra
	}
	if c.openLoop() {
		mc.Arrival = c.Arrival
		if c.replay() {
			mc.Arrival = "trace"
		} else if c.Arrival == "gamma" {
			mc.Arrival = fmt.Sprintf("gamma, burstiness %g", c.Burstiness)
		}
	} else {
		mc.MaxInflight = 0
	}
	if len(c.Stages) > 0 {
		mc.Stages = c.Stages.String()
	}
	return mc
}

func environment(target string) measure.Environment {
	env := measure.Environment{
		GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH,
		CPUs: runtime.NumCPU(), Target: target,
	}
	env.Hostname, _ = os.Hostname()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				env.GitRevision = s.Value
			}
		}
	}
	return env
}

// judging is what the verdict quotes beyond the summary (also kept in a shard's summary, so
// a merge judges the merged run alike).
func (r *runner) judging(postErrs []error) measure.Judging {
	j := measure.Judging{Grace: r.cfg.Grace, StreamTimeout: r.cfg.StreamTimeout, IdleTimeout: r.cfg.IdleTimeout, MaxInflight: r.cfg.MaxInflight}
	r.errMu.Lock()
	j.FirstErrors = slices.Clone(r.errSample)
	j.Stopped = r.stopped
	r.errMu.Unlock()
	for _, e := range postErrs {
		j.PostRun = append(j.PostRun, e.Error())
	}
	return j
}

// sleepUnless waits d on idle (a stopped or fired timer), and reports false when ended closed
// first. It and closedAny are apart from the closed loop's user goroutine, and not inlined,
// so that their selects' frames are not part of the user's frame, which sits under the
// session's blocking read for the stream's life (see runner.stream).
//
//go:noinline
func sleepUnless(idle *time.Timer, d time.Duration, ended <-chan struct{}) bool {
	idle.Reset(d)
	select {
	case <-idle.C:
		return true
	case <-ended:
		return false
	}
}

// closedAny reports whether either channel is closed, without waiting.
//
//go:noinline
func closedAny(a, b <-chan struct{}) bool {
	select {
	case <-a:
		return true
	case <-b:
		return true
	default:
		return false
	}
}
