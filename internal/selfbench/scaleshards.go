package selfbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/stack"
	"github.com/streambench/streambench/verdict"
)

// shardStartLead is how far ahead the shards' common --start-at lies: time for every generator to start.
const shardStartLead = 4 * time.Second

// shardSample is the processes' memory at one moment of a sharded scale run.
type shardSample struct {
	generatorKiB, mockKiB, rtKiB int64 // generators and runtimes summed over the shards
}

// scaleShards is bench scale with --shards N (N ≥ 2): one mock, N runtimes and N `streambench load
// --shard I/N` children of exe, results merged; logs are kept when anything failed (or with KeepDir).
func scaleShards(ctx context.Context, o Options, exe string) (rep *Report, err error) {
	if o.DefaultMix {
		return nil, errors.New("--default-mix is not supported with --shards")
	}
	s := newScaleShape(o)
	rep = shardsReport(o, s)
	w, err := newShardWork(s)
	defer func() {
		if w.dir == "" {
			return
		}
		if o.KeepDir || err != nil || (rep != nil && len(rep.Failures) > 0) {
			if rep != nil {
				rep.note("children's logs, shard results and the scenario directory kept: %s (logs in %s, scenarios in %s)", w.dir, w.logs(), w.scenarios)
			} else {
				err = fmt.Errorf("%w (children's logs in %s)", err, w.logs())
			}
			return
		}
		os.RemoveAll(w.scenarios)
		os.RemoveAll(w.dir)
	}()
	if err != nil {
		return nil, err
	}
	var procs procGroup
	defer procs.stop()
	mock, runtimes, err := startShardStack(exe, w, o, &procs)
	if err != nil {
		return nil, err
	}
	startAt := time.Now().Add(shardStartLead).Truncate(time.Second).Add(time.Second)
	gens, err := startShardGenerators(exe, w, o, s, startAt, mock, runtimes, &procs)
	if err != nil {
		return nil, err
	}
	use, err := meterShards(ctx, s, startAt, w.logs(), mock, runtimes, gens)
	if err != nil {
		return nil, err
	}
	run, nShards, err := mergeShards(w, len(gens), use.failed)
	if err != nil {
		return nil, err
	}
	addShardFigures(rep, s, o.Shards, run, nShards, use)
	return rep, nil
}

// shardsReport describes a sharded scale run.
func shardsReport(o Options, s scaleShape) *Report {
	shards := o.Shards
	return &Report{
		Name:    fmt.Sprintf("scale: %d concurrent streams in %d shards, mock, %d runtimes and %d generators in separate processes", s.streams, shards, shards, shards),
		Command: s.command(o, fmt.Sprintf(" --shards %d", shards)),
		Method: fmt.Sprintf("scenario: TTFT %s then %d tokens %s apart, one token per frame (streams last ~%s); "+
			"closed loop, one session per user, users ramped 0→%d over %s then held, split over %d shards "+
			"(`streambench load --shard I/%d`, users u≡I mod %d, a common --start-at), shard I's generator against runtime I, "+
			"every runtime against one mock; sim-chat opted in on openai-none and anthropic-none; the runtimes talk %s to the mock; "+
			"the generators use %s. Shard results merged as `streambench merge` does; peak concurrent streams is the merged "+
			"timeline's (open streams summed over the shards per wall-clock second). Memory: VmRSS from /proc every 250 ms, "+
			"summed over the generators (and over the runtimes), at the sample where the generators' sum peaked while streams were started "+
			"and held (up to ramp + 2 s + half a stream's length, at most 10 s, after the start; not the writing of results), minus the "+
			"generators' sum just before the start; CPU: /proc/PID/stat (runtimes, mock), the children's rusage minus CPU "+
			"before the start (generators). No leak check: a shard skips its own (--no-leak-check) and one baseline over %d runtimes "+
			"is not taken",
			s.ttft, s.tokens, s.itl, s.lasts(), s.streams, s.ramp, shards, shards, shards, o.providerProtocol(),
			o.generatorProtocol(), shards),
	}
}

// shardWork is a sharded run's scenario directory, and its work directory (logs, mix, results).
type shardWork struct {
	scenarios, dir, mixFile, runID string
}

func (w shardWork) logs() string { return filepath.Join(w.dir, "logs") }
func (w shardWork) out() string  { return filepath.Join(w.dir, "out") }

// newShardWork writes the scenario, the work directory and the shards' mix.
func newShardWork(s scaleShape) (shardWork, error) {
	w := shardWork{runID: "bench-scale-" + time.Now().UTC().Format("150405")}
	mix, err := chatMix("bench-scale", scaleStreamName, "openai-none", "anthropic-none")
	if err != nil {
		return w, err
	}
	if w.scenarios, _, err = writeScenarioDir(map[string]string{scaleStreamName: s.scenario()}); err != nil {
		return w, err
	}
	if w.dir, err = os.MkdirTemp("", "streambench-scale-shards-"); err != nil {
		os.RemoveAll(w.scenarios)
		return w, err
	}
	if err := os.MkdirAll(w.logs(), 0o755); err != nil {
		return w, err
	}
	mixData, err := yaml.Marshal(mix)
	if err != nil {
		return w, fmt.Errorf("mix: %w", err)
	}
	w.mixFile = filepath.Join(w.dir, "mix.yaml")
	if _, err := loadgen.ParseMix(w.mixFile, mixData); err != nil {
		return w, fmt.Errorf("mix written for the shards: %w", err)
	}
	return w, os.WriteFile(w.mixFile, mixData, 0o644)
}

// procGroup stops the children it started, last first.
type procGroup struct{ stops []func() }

func (g *procGroup) stop() {
	for i := len(g.stops) - 1; i >= 0; i-- {
		g.stops[i]()
	}
}

// startLogged starts exe args with start, the child's output going to logs/NAME.log.
func (g *procGroup) startLogged(start func(string, []string, io.Writer) (*stack.Child, error), exe, logs, name string, args []string) (*stack.Child, error) {
	f, err := os.Create(filepath.Join(logs, name+".log"))
	if err != nil {
		return nil, err
	}
	c, err := start(exe, args, f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	g.stops = append(g.stops, func() { c.Stop(); f.Close() })
	return c, nil
}

// startShardStack starts one mock and a runtime per shard, and waits until all are healthy.
func startShardStack(exe string, w shardWork, o Options, procs *procGroup) (*stack.Child, []*stack.Child, error) {
	mock, err := procs.startLogged(stack.StartChildLogged, exe, w.logs(), "mock", []string{"mock", "--addr", "127.0.0.1:0", "--time-scale", "1", "--scenarios", w.scenarios})
	if err != nil {
		return nil, nil, err
	}
	runtimes := make([]*stack.Child, o.Shards)
	urls := []string{mock.URL()}
	for i := range runtimes {
		runtimes[i], err = procs.startLogged(stack.StartChildLogged, exe, w.logs(), fmt.Sprintf("runtime-%d", i), []string{"runtime", "--addr", "127.0.0.1:0",
			"--provider", mock.URL(), "--tool-time-scale", "1", fmt.Sprintf("--provider-h2c=%t", !o.ProviderHTTP1)})
		if err != nil {
			return nil, nil, err
		}
		urls = append(urls, runtimes[i].URL())
	}
	return mock, runtimes, stack.WaitHealthy(urls...)
}

// startShardGenerators starts the `streambench load --shard I/N` generators, all starting at startAt.
func startShardGenerators(exe string, w shardWork, o Options, s scaleShape, startAt time.Time, mock *stack.Child, runtimes []*stack.Child, procs *procGroup) ([]*stack.Child, error) {
	stages := fmt.Sprintf("%s:%d,%s:%d", s.ramp, s.streams, 2*time.Second, s.streams)
	gens := make([]*stack.Child, len(runtimes))
	for i := range gens {
		args := []string{"load", "--target", runtimes[i].URL(), "--mock", mock.URL(), "--mix", w.mixFile, "--scenarios", w.scenarios,
			"--shard", fmt.Sprintf("%d/%d", i, len(runtimes)), "--start-at", startAt.UTC().Format(time.RFC3339),
			"--stages", stages, "--sessions", strconv.Itoa(s.streams),
			"--grace", (s.length + time.Minute).String(), "--stream-timeout", (s.length + time.Minute).String(),
			"--out", w.out(), "--run-id", w.runID, "--quiet", "--no-preflight", "--no-leak-check"}
		if o.HTTP2 {
			args = append(args, "--http2")
		}
		var err error
		if gens[i], err = procs.startLogged(stack.StartProcess, exe, w.logs(), fmt.Sprintf("load-%d", i), args); err != nil {
			return nil, err
		}
	}
	return gens, nil
}

// shardUsage is what a sharded run cost the processes.
type shardUsage struct {
	peak            shardSample
	sampled         bool
	before          int64 // generators' RSS just before the start
	genCPU, mockCPU time.Duration
	rtCPU           time.Duration // summed over the runtimes
	failed          []string      // generators that exited with an error
}

// meterShards samples the processes' memory and CPU from just before startAt until every generator ends.
func meterShards(ctx context.Context, s scaleShape, startAt time.Time, logs string, mock *stack.Child, runtimes, gens []*stack.Child) (*shardUsage, error) {
	rss := func(cs ...*stack.Child) (kib int64) {
		for _, c := range cs {
			v, _ := procStatusKiB(c.PID(), "VmRSS")
			kib += v
		}
		return kib
	}
	sum := func() shardSample { return shardSample{rss(gens...), rss(mock), rss(runtimes...)} }
	// Just before the start: the baseline.
	select {
	case <-time.After(time.Until(startAt.Add(-300 * time.Millisecond))):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	u := &shardUsage{before: sum().generatorKiB}
	for _, g := range gens {
		u.genCPU -= roleCPU(g.PID())
	}
	served := append([]*stack.Child{mock}, runtimes...) // CPU read while they run: the latest readable, a failed read 0
	cpu0, cpu1 := make([]time.Duration, len(served)), make([]time.Duration, len(served))
	for i, c := range served {
		cpu0[i] = roleCPU(c.PID())
	}
	readCPU := func() {
		for i, c := range served {
			cpu1[i] = max(cpu1[i], roleCPU(c.PID()))
		}
	}
	heldUntil := startAt.Add(s.ramp + 2*time.Second + min(s.length/2, 10*time.Second))
	var mu sync.Mutex
	stopSampling := sampleEvery(250*time.Millisecond, func() {
		smp := sum()
		mu.Lock()
		defer mu.Unlock()
		// While streams are started and held, not while the results are written.
		if time.Now().Before(heldUntil) && smp.generatorKiB >= u.peak.generatorKiB {
			u.peak = smp
		}
		u.sampled = true
		readCPU()
	})
	for i, g := range gens {
		select {
		case <-g.Done():
		case <-ctx.Done():
			stopSampling()
			return nil, ctx.Err()
		}
		cpu, werr := g.Wait()
		u.genCPU += cpu
		if werr != nil {
			u.failed = append(u.failed, fmt.Sprintf("shard %d: %v (its output: %s)", i, werr, filepath.Join(logs, fmt.Sprintf("load-%d.log", i))))
		}
	}
	stopSampling()
	readCPU()
	u.mockCPU = cpu1[0] - cpu0[0]
	for i := 1; i < len(served); i++ {
		u.rtCPU += cpu1[i] - cpu0[i]
	}
	return u, nil
}

// mergeShards merges and judges the shards' results (as `streambench merge`) into the work directory.
func mergeShards(w shardWork, shards int, failed []string) (*measure.Run, int, error) {
	dirs := make([]string, shards)
	for i := range dirs {
		dirs[i] = filepath.Join(w.out(), w.runID, fmt.Sprintf("shard-%d", i))
	}
	shardRuns, err := measure.ReadShards(dirs)
	if err != nil {
		if len(failed) > 0 {
			err = fmt.Errorf("%w; %v", err, failed)
		}
		return nil, 0, fmt.Errorf("read the shards' results: %w", err)
	}
	run, err := measure.Merge(shardRuns, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("merge the shards: %w", err)
	}
	if err := verdict.Stamp(run); err != nil {
		return nil, 0, fmt.Errorf("judge the merged run: %w", err)
	}
	if err := measure.WriteRun(filepath.Join(w.dir, "merged"), run); err != nil {
		return nil, 0, fmt.Errorf("write merged run: %w", err)
	}
	return run, len(shardRuns), nil
}

// addShardFigures reports the merged run's outcomes and what it cost the processes.
func addShardFigures(rep *Report, s scaleShape, shards int, run *measure.Run, nShards int, u *shardUsage) {
	var active int64
	for _, p := range run.Timeline {
		active = max(active, p.Active)
	}
	addRunOutcomes(rep, active, s.streams, run, func() { rep.add("shards", float64(nShards), "generators") })
	if active > 0 && u.sampled {
		pk := u.peak
		perStream := float64(pk.generatorKiB-u.before) / float64(s.streams)
		rep.addTarget("generator RSS per open stream (sum over shards)", perStream, "KiB", "≤ 16 KiB", perStream > 0 && perStream <= 16)
		rep.add("generators' RSS at peak (sum)", float64(pk.generatorKiB)/1024, "MiB")
		rep.add("runtimes' RSS at peak (sum)", float64(pk.rtKiB)/1024, "MiB")
		rep.add("runtimes' RSS at peak ÷ open streams", float64(pk.rtKiB)/float64(active), "KiB")
		rep.add("mock RSS at peak", float64(pk.mockKiB)/1024, "MiB")
	}
	c := run.Summary.Counters
	rep.add("frames received", float64(c.Frames), "frames")
	if c.Frames > 0 {
		rep.add("generator CPU per received frame (all shards)", perFrame(u.genCPU, c.Frames), "µs")
		rep.add("runtime CPU per relayed frame (all runtimes)", perFrame(u.rtCPU, c.Frames), "µs")
		rep.add("mock CPU per frame", perFrame(u.mockCPU, c.Frames), "µs")
	}
	addLatencyFigures(rep, run)
	rep.add("open-files limit per process", float64(openFileLimit()), "files")
	rep.note("no leak check in a sharded run: each shard runs with --no-leak-check")
	runFailures(rep, run)
	for _, f := range u.failed {
		rep.fail("generator %s", f)
	}
	if active < int64(s.streams) {
		rep.fail("only %d of %d streams were open at once", active, s.streams)
	}
	if per := uint64(s.streams/shards) + 256; openFileLimit() < per {
		rep.note("the open-files limit %d is below %d streams per shard + slack: raise `ulimit -n`", openFileLimit(), s.streams/shards)
	}
}
