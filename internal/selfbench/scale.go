package selfbench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// Scale holds N long streams through a mock and a runtime in child processes from the generator
// in this process (with Options.DefaultMix, the default mix among them): what each process paid.
func Scale(ctx context.Context, o Options) (*Report, error) {
	if o.Shards > 1 {
		exe, err := ownExecutable()
		if err != nil {
			return nil, err
		}
		return scaleShards(ctx, o, exe)
	}
	return scale(ctx, o, func(dir string, _ *scenarios.Library, providerHTTP1 bool) (*stack.Stack, error) {
		return startStack(dir, providerHTTP1)
	})
}

// stackStarter starts the system under test on dir, loaded as lib (the tests serve it in process).
type stackStarter func(dir string, lib *scenarios.Library, providerHTTP1 bool) (*stack.Stack, error)

type scaleShape struct {
	streams                 int
	ramp, length, itl, ttft time.Duration
	tokens                  int
}

func newScaleShape(o Options) scaleShape {
	s := scaleShape{streams: cmp.Or(o.Streams, 5000), ramp: cmp.Or(o.Ramp, 20*time.Second),
		length: cmp.Or(o.StreamLength, 30*time.Second), itl: cmp.Or(o.InterToken, 500*time.Millisecond)}
	s.ttft = min(200*time.Millisecond, s.length/10)
	s.tokens = max(1, int((s.length-s.ttft)/s.itl))
	return s
}

func (s scaleShape) lasts() time.Duration { return s.ttft + time.Duration(s.tokens)*s.itl }

func (s scaleShape) scenario() string {
	return pacedScenario(scaleStreamName, "a long-lived paced answer, so many streams stay open at once", s.ttft, s.itl, fmt.Sprintf("{tokens: %d}", s.tokens))
}

func (s scaleShape) command(o Options, extra string) string {
	return fmt.Sprintf("streambench bench scale --streams %d --ramp %s --stream-length %s --itl %s%s%s", s.streams, s.ramp, s.length, s.itl, extra, o.transportFlags())
}

type scaleWorkload struct {
	docs     map[string]string
	mix      *loadgen.Mix
	families *familyCounter // counts the default mix's new families (DefaultMix only)
	stages   loadgen.Stages
	sessions int64
}

// newScaleWorkload picks the workload and describes it in a new report.
func newScaleWorkload(o Options, s scaleShape) (*Report, scaleWorkload, error) {
	rep := &Report{
		Name:    fmt.Sprintf("scale: %d concurrent streams, mock, runtime and generator in separate processes", s.streams),
		Command: s.command(o, ""),
		Method: fmt.Sprintf("scenario: TTFT %s then %d tokens %s apart, one token per frame (streams last ~%s); "+
			"closed loop, one session per user, users ramped 0→%d over %s then held; sim-chat opted in on openai-none and anthropic-none; "+
			"the runtime talks %s to the mock; the generator uses %s. Generator memory: VmRSS at the peak minus before the load, "+
			"and live heap+stacks after GC; CPU: getrusage (generator), /proc/PID/stat (children)",
			s.ttft, s.tokens, s.itl, s.lasts(), s.streams, s.ramp, o.providerProtocol(), o.generatorProtocol()),
	}
	// Users ramp up to one per stream, then hold while the last streams open.
	w := scaleWorkload{docs: map[string]string{},
		stages:   loadgen.Stages{{Duration: s.ramp, Target: float64(s.streams)}, {Duration: 2 * time.Second, Target: float64(s.streams)}},
		sessions: int64(s.streams)}
	var err error
	if o.DefaultMix {
		// Sessions back to back for a stream's length after the ramp: ~N open while the mix plays among them.
		w.docs = embeddedDocs()
		w.mix, err = scaleDefaultMix()
		w.families = newFamilyCounter(w.mix)
		w.stages[1].Duration, w.sessions = s.length, 0
		rep.Command += " --default-mix"
		rep.Method = fmt.Sprintf("the default mix (every profile and dialect, with its own scenarios and targets) with scale-stream "+
			"(TTFT %s then %d tokens %s apart, one token per frame, ~%s) added to every profile at %.0f%% of its sessions; "+
			"closed loop, users ramped 0→%d over %s then held %s, each playing sessions back to back; peak concurrent streams is "+
			"the generator's sessions in flight; the runtime talks %s to the mock; the generator uses %s",
			s.ttft, s.tokens, s.itl, s.lasts(), scaleStreamShare*100, s.streams, s.ramp, s.length,
			o.providerProtocol(), o.generatorProtocol())
		rep.Name = fmt.Sprintf("scale: %d concurrent streams with the default mix played among them, mock, runtime and generator in separate processes", s.streams)
	} else {
		w.mix, err = chatMix("bench-scale", scaleStreamName, "openai-none", "anthropic-none")
	}
	w.docs[scaleStreamName] = s.scenario()
	return rep, w, err
}

func scale(ctx context.Context, o Options, start stackStarter) (*Report, error) {
	s := newScaleShape(o)
	rep, w, err := newScaleWorkload(o, s)
	if err != nil {
		return nil, err
	}
	dir, lib, cleanup, err := keptScenarioDir(rep, o.KeepDir, w.docs)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st, err := start(dir, lib, o.ProviderHTTP1)
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	m, err := measureScale(ctx, o, s, w, st, lib, rep)
	if err != nil {
		return nil, err
	}
	addScaleFigures(ctx, rep, s, w, st, m)
	return rep, nil
}

type scaleMeasures struct {
	run                   *measure.Run
	peak                  int64      // most streams open at once
	gen, mock, rt         *floorRole // mock and runtime nil when served in process (tests)
	liveBefore, liveAtTop liveMem    // live heap and stacks before and once every stream was open (zero if never)
	hwm                   int64
}

// measureScale plays the workload against st, sampling the processes' memory and CPU.
func measureScale(ctx context.Context, o Options, s scaleShape, w scaleWorkload, st *stack.Stack, lib *scenarios.Library, rep *Report) (*scaleMeasures, error) {
	m := &scaleMeasures{gen: &floorRole{name: "generator"}}
	roles := []*floorRole{m.gen}
	if st.Mock != nil && st.Runtime != nil {
		m.mock, m.rt = &floorRole{name: "mock", pid: st.Mock.PID()}, &floorRole{name: "runtime", pid: st.Runtime.PID()}
		roles = append(roles, m.mock, m.rt)
	}
	m.liveBefore = liveMemory()
	if _, err := procStatusKiB(0, "VmRSS"); err != nil {
		return nil, fmt.Errorf("generator memory: %w", err)
	}
	meter := startMeter(roles...)
	sample := func(p loadgen.Progress) { // on the run's collector goroutine alone
		meter.sample(p.Active)
		if m.liveAtTop.total() == 0 && p.Active >= int64(s.streams) {
			m.liveAtTop = liveMemory()
			if o.ProfileDir != "" {
				if err := writeProfiles(o.ProfileDir); err != nil {
					rep.note("profiles: %v", err)
				} else {
					rep.note("heap and goroutine profiles at %d open streams in %s", p.Active, o.ProfileDir)
				}
			}
		}
	}
	cfg := loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: w.mix, MixName: w.mix.Name, Library: lib,
		RunID: "bench-scale-" + time.Now().UTC().Format("150405"), Stages: w.stages, Sessions: w.sessions,
		Grace: s.length + time.Minute, StreamTimeout: s.length + time.Minute, HTTP2: o.HTTP2,
	}
	if w.families != nil {
		cfg.Outputs = append(cfg.Outputs, loadgen.SessionEndFunc(w.families.add))
	}
	var err error
	if m.run, _, err = runWithPeak(ctx, cfg, o, sample); err != nil {
		return nil, err
	}
	m.peak = meter.stop()
	m.hwm, _ = procStatusKiB(0, "VmHWM")
	return m, nil
}

// addRunOutcomes adds the peak against its target, between's figures, and how the sessions ended.
func addRunOutcomes(rep *Report, peak int64, streams int, run *measure.Run, between func()) {
	rep.addTarget("peak concurrent streams", float64(peak), "streams", fmt.Sprintf("= %d", streams), peak >= int64(streams))
	between()
	c := run.Summary.Counters
	rep.add("sessions ok", float64(c.SessionsOK), "sessions")
	rep.add("sessions failed", float64(c.SessionsFailed), "sessions")
	transport := c.Outcome(measure.OutcomeTransportError)
	rep.addTarget("transport errors", float64(transport), "errors", "0", transport == 0)
	others := c.Errors() - transport
	rep.addTarget("other error outcomes", float64(others), "errors", "0", others == 0)
	rep.addTarget("violations", float64(run.Summary.TotalViolations()), "violations", "0", run.Summary.TotalViolations() == 0)
}

// perFrame is CPU per frame (event, token) in µs.
func perFrame(cpu time.Duration, frames int64) float64 {
	if frames == 0 {
		return 0
	}
	return float64(cpu.Nanoseconds()) / 1e3 / float64(frames)
}

func addScaleFigures(ctx context.Context, rep *Report, s scaleShape, w scaleWorkload, st *stack.Stack, m *scaleMeasures) {
	run, peak := m.run, m.peak
	addRunOutcomes(rep, peak, s.streams, run, func() {})
	rep.addLeakChecks("leak checks over tolerance", run)
	if peak > 0 {
		addScaleMemory(rep, w, m)
	}
	rep.add("generator peak RSS (VmHWM)", float64(m.hwm)/1024, "MiB")
	c := run.Summary.Counters
	rep.add("frames received", float64(c.Frames), "frames")
	if c.Frames > 0 {
		rep.add("generator CPU per received frame", perFrame(m.gen.cpu, c.Frames), "µs")
		if m.rt != nil {
			rep.add("runtime CPU per relayed frame", perFrame(m.rt.cpu, c.Frames), "µs")
			rep.add("mock CPU per frame", perFrame(m.mock.cpu, c.Frames), "µs")
		}
	}
	addLatencyFigures(rep, run)
	if w.families != nil {
		// Opted-in sim-chat's long streams are the plain run's figure (simchat.Client.Label).
		h, _ := run.Histograms.Merged(func(k measure.Key) bool {
			return k.Metric == measure.FirstChunk && k.Scenario == scaleStreamName && k.Dialect == simchat.Name+"-optedin"
		})
		rep.add("TTFC p50, scale-stream on opted-in sim-chat", quantileMs(h, 50, 0), "ms")
		rep.add("TTFC p99, scale-stream on opted-in sim-chat", quantileMs(h, 99, 0), "ms")
		rep.note("TTFC and gaps above are merged over every scenario and dialect: the mix's own TTFTs, legacy sim-chat clients and "+
			"PII-redacted canvas blocks (their text arrives at the end, ~%s into a scale-stream) widen them", s.length)
	}
	if records, err := mockSessions(ctx, st.MockURL); err != nil {
		rep.note("mock records: %v", err)
	} else {
		rep.addP50P99("mock stream start − request arrival", streamStartLatency(records, "scale-stream"))
	}
	rep.add("open-files limit per process", float64(openFileLimit()), "files")
	if w.families != nil {
		w.families.report(rep)
	}
	runFailures(rep, run)
	if peak < int64(s.streams) {
		rep.fail("only %d of %d streams were open at once", peak, s.streams)
	}
	if need := uint64(s.streams) + 256; openFileLimit() < need {
		rep.note("the open-files limit %d is below %d streams + slack: raise `ulimit -n`", openFileLimit(), s.streams)
	}
}

func addScaleMemory(rep *Report, w scaleWorkload, m *scaleMeasures) {
	peak := m.peak
	perStream := float64(m.gen.rssKiB) * 1024 / float64(peak)
	if w.families == nil {
		rep.addTarget("generator RSS per open stream", perStream/1024, "KiB", "≤ 16 KiB", perStream > 0 && perStream <= 16<<10)
	} else {
		rep.add("generator RSS per open stream", perStream/1024, "KiB")
		rep.note("memory per open stream includes what the mix holds beyond its streams: the dense histograms of its many " +
			"scenario × client keys (a fixed cost spread over the streams) and the expected text of the thinking-over-cap " +
			"sessions in flight (over 512 KiB of thinking each); the ≤ 16 KiB target is the plain scale run's, one long stream per user")
	}
	if perStream <= 0 {
		rep.note("the generator's RSS fell during the load: the baseline held memory the load reused; run scale on its own for this figure")
	}
	if m.liveAtTop.total() > 0 {
		per := func(at, before uint64) float64 { return (float64(at) - float64(before)) / float64(peak) / 1024 }
		rep.add("generator live heap+stacks per open stream", per(m.liveAtTop.total(), m.liveBefore.total()), "KiB")
		rep.add("generator live heap per open stream", per(m.liveAtTop.heap, m.liveBefore.heap), "KiB")
		rep.add("generator goroutine stacks per open stream", per(m.liveAtTop.stacks, m.liveBefore.stacks), "KiB")
	}
	rep.add("generator RSS at peak", float64(m.gen.rssPeakKiB)/1024, "MiB")
	if m.rt != nil {
		rep.add("runtime RSS at peak", float64(m.rt.rssPeakKiB)/1024, "MiB")
		rep.add("runtime RSS at peak ÷ open streams", float64(m.rt.rssPeakKiB)/float64(peak), "KiB")
		rep.add("mock RSS at peak", float64(m.mock.rssPeakKiB)/1024, "MiB")
	}
}

// writeProfiles writes this process's heap profile and goroutine summary into dir.
func writeProfiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range []struct {
		name, file string
		debug      int
	}{{"heap", "heap.pprof", 0}, {"goroutine", "goroutines.txt", 1}} {
		w, err := os.Create(filepath.Join(dir, p.file))
		if err != nil {
			return err
		}
		err = pprof.Lookup(p.name).WriteTo(w, p.debug)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s profile: %w", p.name, err)
		}
	}
	return nil
}

func addLatencyFigures(rep *Report, run *measure.Run) {
	for _, m := range []struct {
		metric measure.Metric
		label  string
	}{{measure.Connect, "connect"}, {measure.Headers, "response headers"}, {measure.FirstChunk, "TTFC"}, {measure.ChunkGap, "inter-chunk gap"}} {
		rep.addP50P99(m.label, mergedMetric(run, m.metric))
	}
}
