// Package loadgen is streambench's load generator: thousands of SSE clients that replay a
// workload mix against an agent runtime, judge every stream with its dialect's checker, and
// measure what users feel into per-scenario × dialect HdrHistograms. A Pacer (open loop) or
// virtual users (closed loop) start sessions, each measured from its intended start; what a run
// produces goes to its Outputs as it runs, its results are Run's return value.
package loadgen

import (
	"cmp"
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

	"github.com/streambench/streambench/loadgen/engine"
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
	transport  http.RoundTripper // Config.Transport or the generator's own
	rec        *session.Recorder
	sessions   *session.Runner
	planner    *session.Planner
	out        outputs
	start      time.Time
	warmupEnd  time.Time
	aborts     abortLog
	samples    sampler
	engine     *engine.Scraper // nil without Config.EngineMetricsURL
	peakActive atomic.Int64
	lateBy     time.Duration // how long after Config.StartAt the run began

	reqOpts  [][]session.Request // by Pick.ProfileIndex and TargetIndex
	redactor *Redactor

	errMu     sync.Mutex
	errSeen   int
	errSample []string // the first few unscripted errors, for the verdict
	errKinds  []string // errSample's signatures
	stopped   string   // why the circuit breaker stopped the run

	breaker breaker
}

// How many error messages the verdict quotes, and how long each.
const (
	maxErrorSamples     = 5
	maxErrorSampleBytes = 400
)

// noteError keeps the first few unscripted errors of the run, one of each kind, for the verdict.
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
		msg := r.redactor.String(err.Error())
		if len(msg) > maxErrorSampleBytes {
			// A hostile target's bytes quoted in an error can be long.
			msg = strings.ToValidUTF8(msg[:maxErrorSampleBytes], "") + fmt.Sprintf("…(%d bytes)", len(msg))
		}
		r.errSample = append(r.errSample, fmt.Sprintf("%s [scenario %s, %s]", msg, p.Pick.Scenario, p.Label))
	}
}

// endSession is the run's bookkeeping of a measured session's end (session.Runner.Ended).
func (r *runner) endSession(p *session.Plan, res *session.Result) {
	if res.Err != nil {
		r.noteError(p, res.Err)
	}
	r.breaker.note(p.ID, res.Outcome, res.Err)
	for _, v := range res.Violations {
		r.rec.AddViolation(v.Rule)
	}
	r.samples.offer(p, res, r.redactor.String)
	if res.Abort != nil {
		r.aborts.add(*res.Abort)
	}
}

// noRedirects makes a 3xx the response: a request sent elsewhere would be another session.
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

// newTransport builds the generator's HTTP transport: HTTP/1.1 with one connection per stream
// on transport.Transport, or HTTP/2 on net/http's (h2c for http, h2 by ALPN for https).
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

func (c *Config) tlsConfig() *tls.Config {
	conf := &tls.Config{}
	if c.TLS != nil {
		conf = c.TLS.Clone()
	}
	// Not Go's default X25519MLKEM768: it keeps ~5 KiB per connection, a quarter of an open
	// TLS stream's memory, for secrecy a load generator does not need.
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

// Run runs the load cfg describes; an error means the run could not happen (bad config). At the
// deadline (or when cfg.Interrupt closes) no session starts and in-flight ones get cfg.Grace;
// cancelling ctx cancels them at once and skips the post-run checks, the results marked interrupted.
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
	if r.cfg.openLoop() {
		r.openLoop(l.hard, l.stopStarting, &l.sessions)
	} else {
		r.closedLoop(l.hard, l.stopStarting, &l.sessions)
	}
	l.stop("end of schedule")
	after := r.drain(ctx, l, pre)
	post := r.postRunChecks(ctx, pre, after.snapErr)
	return r.judge(r.results(ctx, l, after, post))
}

func newRunner(c Config) (*runner, error) {
	cfg, err := c.withDefaults()
	if err != nil {
		return nil, err
	}
	cfg.RunID = cmp.Or(cfg.RunID, NewRunID())
	r := &runner{
		cfg: cfg,
		rec: session.NewRecorder(runtime.GOMAXPROCS(0)),
		out: outputsOf(cfg.Outputs),
	}
	r.rec.OnLatencies = r.out.latencies
	if r.reqOpts, err = cfg.resolve(); err != nil {
		return nil, err
	}
	r.redactor = newRunRedactor(&cfg, r.reqOpts)
	r.transport = cfg.Transport
	if r.transport == nil {
		r.transport = newTransport(&cfg)
	}
	r.client = &http.Client{Transport: r.transport, CheckRedirect: noRedirects}
	r.samples.perRule = cfg.SamplesPerRule
	r.planner = cfg.planner()
	r.sessions = &session.Runner{
		Client: r.client, Target: cfg.Target, Rec: r.rec,
		StreamTimeout: cfg.StreamTimeout, IdleTimeout: cfg.IdleTimeout, Grace: cfg.Grace,
		ScriptTimeScale: cfg.ScriptTimeScale, OpenLoop: cfg.openLoop(), GoodputSLOs: cfg.GoodputSLOs, Endpoint: cfg.Endpoint,
		Redact: r.redactor.String, Ended: r.endSession, Record: r.out.records,
	}
	return r, nil
}

// preRun is what a run reads before its first session, to compare with after its last.
type preRun struct {
	// leakCheck: this run checks for leaks itself (a shard's check would see other shards').
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
		// A shard that begins late keeps the shared start, so its late starts count.
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

// load is a run's schedule under way, what ends it, and the collector beside it.
type load struct {
	// hard ends in-flight streams, with session.ErrGraceEnded at the end of the grace period.
	hard         context.Context
	hardCancel   context.CancelCauseFunc
	stopStarting chan struct{}
	stopOnce     sync.Once
	interrupted  atomic.Bool
	deadline     *time.Timer
	sessions     sync.WaitGroup

	// The collector, until the run has drained.
	tl            timeline
	snaps         *snapshotter
	collectorDone chan struct{}
	drained       chan struct{}
	draining      atomic.Bool
	lag           *lagProbe
	stopEngine    context.CancelFunc // ends the engine scraper's reads, a read in flight too
	engineDone    chan struct{}      // closed when the engine scraper stopped
}

// stop stops sessions starting, once ("interrupt" marks the run interrupted).
func (l *load) stop(why string) {
	l.stopOnce.Do(func() {
		if why == "interrupt" {
			l.interrupted.Store(true)
		}
		close(l.stopStarting)
	})
}

func (l *load) end() {
	if l.deadline != nil {
		l.deadline.Stop()
	}
	l.hardCancel(nil)
}

// startLoad arms what stops the schedule and starts the collector, peak tracker and lag probe.
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
	l.engineDone = make(chan struct{})
	var engineCtx context.Context
	engineCtx, l.stopEngine = context.WithCancel(ctx) // not l.hard: the grace's end is not the drain's
	if u := cfg.EngineMetricsURL; u != "" {
		r.engine = engine.NewScraper(r.client, u, RedactURL(u), r.start)
		go func() { defer close(l.engineDone); r.engine.Run(engineCtx) }()
	} else {
		close(l.engineDone)
	}
	if r.out.snapshot != nil {
		l.snaps = newSnapshotter(r.out.snapshot, cfg.SnapshotInterval, threadCPU)
	}
	r.offerSnapshot(l, true) // the run's directory exists before the first session
	go r.collect(l)
	go r.trackPeak(l.drained)
	l.lag = startLagProbe(lagInterval)
	return l
}

func (r *runner) offerSnapshot(l *load, wait bool) {
	if l.snaps != nil {
		l.snaps.offer(func() *measure.Run { return r.snapshot(l.tl.points, l.interrupted.Load()) }, wait)
	}
}

// collect ticks the timeline and progress every second and offers snapshots, until drained.
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
			r.offerSnapshot(l, true) // in case the post-run checks are killed
			return
		}
	}
}

// afterLoad is what a run measured as it drained.
type afterLoad struct {
	ended   time.Time
	lag     *hdrhistogram.Histogram
	loads   []measure.ProcessLoad
	snapErr error
}

// drain gives the sessions in flight the grace period, then cancels them, and stops the collector.
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
	l.stopEngine()
	<-l.engineDone
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

// postRunChecks reads the mock's records and checks for leaks, unless ctx was cancelled.
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

func (r *runner) leakProbe() *leakcheck.Probe {
	return &leakcheck.Probe{Client: r.client, RuntimeURL: r.cfg.RuntimeMetricsURL, MockURL: r.cfg.MockURL,
		PerStream: r.cfg.LeakPerStream, Grace: r.cfg.LeakGrace, Self: !r.cfg.noSelfLeakGauges, Peak: r.peakActive.Load}
}

// results is the run as measured, not yet judged.
func (r *runner) results(ctx context.Context, l *load, a afterLoad, p postRun) *measure.Run {
	cfg := &r.cfg
	hist := r.rec.Merge()
	r.rec.RecordErrs.Add(hist.Set(generatorLagKey, a.lag))
	run := &measure.Run{Histograms: hist, Timeline: l.tl.points, Samples: r.samples.collected(),
		Summary: r.summary(a.ended, l.interrupted.Load() || ctx.Err() != nil, p.errs)}
	s := &run.Summary
	s.Metrics, s.Overall = measure.Summarize(hist), measure.SummarizeOverall(hist)
	// LeaksNotChecked is reported, never a failure: the verdict reads Leaks alone.
	s.Leaks, s.LeaksNotChecked, s.ProviderRequests = p.leaks, p.leaksNotChecked, p.mock.providerRequests
	// Rates are over the measured time, without the warmup.
	measuredFrom := r.start.Add(max(cfg.Warmup, 0))
	s.Tokens = measure.NewTokenSummary(s.Counters, sloExprs(cfg.GoodputSLOs), a.ended.Sub(measuredFrom))
	s.Verdict.Warnings = r.warnings(s, a, p)
	roundCores(a.loads)
	s.Processes, s.MachineCores = a.loads, runtime.NumCPU()
	return run
}

// summary is what the results and the snapshots of the run share, as of ended.
func (r *runner) summary(ended time.Time, interrupted bool, postErrs []error) measure.Summary {
	s := measure.Summary{
		Schema: measure.SchemaVersion, RunID: r.cfg.RunID, Started: r.start, Ended: ended, Interrupted: interrupted,
		Config: r.recordedConfig(), Environment: environment(r.cfg.Target),
		OverTime: r.rec.OverTime(), Measures: r.rec.MeasureInfos(), Counters: r.rec.Counters(),
		Violations: r.rec.ViolationCounts(), Judging: r.judging(postErrs), Engine: r.engine.Metrics(),
	}
	if sh := r.cfg.Shard; sh.Count != 0 { // the run's place in a sharded run, in snapshots too
		s.Shard = &measure.ShardInfo{Index: sh.Index, Count: sh.Count, StartAt: r.cfg.StartAt.UTC(), LateBy: r.lateBy}
	}
	return s
}

// warnings are what the verdict warns of, in the order they are shown.
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
	add(saturation(a.loads, runtime.NumCPU(), a.lag)) // before roundCores: it reads the loads unrounded
	add(engine.Warning(s.Engine))
	return ws
}

// judge adds what the transport saw between responses, stamps the verdict and redacts the run.
func (r *runner) judge(run *measure.Run) (*measure.Run, error) {
	if st, ok := r.transport.(*transport.Transport); ok {
		st.CloseIdleConnections() // looks at the parked connections first
		run.Summary.Verdict.Warnings = append(run.Summary.Verdict.Warnings, st.StrayWarnings()...)
	}
	if err := verdict.Stamp(run); err != nil {
		// The thresholds were parsed before the run: a defect.
		return run, fmt.Errorf("judge the run: %w", err)
	}
	// Last: the verdict quotes errors and settings.
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
	rec := r.rec
	r.out.progress(Progress{
		Elapsed: time.Duration(second) * time.Second, Planned: cmp.Or(r.cfg.Duration, r.cfg.Stages.Duration()),
		PlannedSessions: r.cfg.Sessions, Active: rec.Active.Load(), Started: rec.Started.Load(),
		Completed: rec.Completed(), Errors: rec.Errors(), Violations: rec.Violations.Load(), Frames: rec.Frames.Load(),
		Draining: draining,
	})
}

// claim reserves this shard's next session index; false once Sessions are used up.
func (r *runner) claim(next *atomic.Uint64) (uint64, bool) {
	i := r.cfg.Shard.global(next.Add(1) - 1)
	if r.cfg.Sessions > 0 && i >= uint64(r.cfg.Sessions) {
		return 0, false
	}
	return i, true
}

// openLoop starts sessions on the pacer's schedule until it stops, the budget is spent or stop
// closes; a start finding MaxInflight streams open is dropped, a late one keeps its intended time.
func (r *runner) openLoop(ctx context.Context, stop <-chan struct{}, wg *sync.WaitGroup) {
	var pacer Pacer
	switch {
	case len(r.cfg.Stages) > 0:
		pacer = r.cfg.Stages
	case r.cfg.replay(): // at the endpoint trace's times
		s := make(Schedule, len(r.cfg.Endpoint.Trace))
		for i, row := range r.cfg.Endpoint.Trace {
			s[i] = row.At
		}
		pacer = s
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
			// Spinning the last stretch takes wake-up latency out of start lag, for at most
			// 5% of a core.
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

// closedLoop runs virtual users, each playing sessions ThinkTime apart (with stages, user i only
// while the target exceeds i), until the schedule is over; users in a session finish it (in wg).
func (r *runner) closedLoop(ctx context.Context, stop <-chan struct{}, wg *sync.WaitGroup) {
	users := r.cfg.Clients
	var target atomic.Int64
	target.Store(int64(users))
	over := make(chan struct{}) // the ramp has ended
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
	// ended: stop, or the end of the ramp.
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
				// stop is seen at once: after the circuit breaker trips, the other users
				// race through sessions that fail in microseconds.
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

func (r *runner) recordedConfig() measure.Config {
	c := &r.cfg
	mc := measure.Config{
		Target: c.Target, Dialects: c.Mix.Dialects(), Clients: c.Clients, Rate: c.Rate,
		MaxInflight: c.MaxInflight, Duration: c.Duration, Sessions: c.Sessions,
		Warmup: c.Warmup, ThinkTime: c.ThinkTime, Mix: c.MixName, Seed: c.Seed,
		Faults: c.Info.Faults, HTTP2: c.HTTP2, Thresholds: c.Mix.Thresholds, Allow: c.allowed(), Extra: c.Info.Extra,
	}
	// Request options go into Extra, headers redacted here, so nothing downstream holds a secret.
	extra := map[string]string{}
	if len(c.Headers) > 0 {
		extra["header"] = strings.Join(RedactedHeaders(c.Headers), "; ")
	}
	for _, k := range slices.Sorted(maps.Keys(c.Options)) {
		extra["option."+k] = fmt.Sprint(c.Options[k])
	}
	for flag, on := range map[string]bool{"no-ground-truth": c.NoGroundTruth, "honor-retry-after": c.HonorRetryAfter} {
		if on {
			extra[flag] = "true"
		}
	}
	if len(extra) > 0 {
		maps.Copy(extra, c.Info.Extra)
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

// judging is what the verdict quotes beyond the summary (kept in a shard's, for merge).
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

// sleepUnless waits d on idle (a stopped or fired timer), false when ended closed first. It
// and closedAny are not inlined, so their selects' frames stay out of the user's, which sits
// under every stream's read (session.Runner.Play).
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
