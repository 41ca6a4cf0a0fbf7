package selfbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// shardStartLead is how far ahead of now the shards' common --start-at lies: time for every
// generator child to start, read its mix and wait.
const shardStartLead = 4 * time.Second

// shardSample is the processes' memory at one moment of a sharded scale run.
type shardSample struct {
	generatorKiB, mockKiB, rtKiB int64 // generators and runtimes summed over the shards
}

// scaleShards is bench scale with --shards N (N ≥ 2): one mock, N runtimes and N generators,
// each `streambench load --shard I/N` against its own runtime, all child processes of exe;
// the shards' results are merged (measure.Merge) and reported as the single-process run's.
// Every child's standard error goes to a log file in a temporary directory, kept and named in
// the notes when anything failed (or with Options.KeepDir).
func scaleShards(ctx context.Context, o Options, exe string) (rep *Report, err error) {
	shards := o.Shards
	streams := orDefault(o.Streams, 5000)
	ramp := orDefault(o.Ramp, 20*time.Second)
	length := orDefault(o.StreamLength, 30*time.Second)
	itl := orDefault(o.InterToken, 500*time.Millisecond)
	ttft := min(200*time.Millisecond, length/10)
	tokens := max(1, int((length-ttft)/itl))
	if o.DefaultMix {
		return nil, errors.New("--default-mix is not supported with --shards")
	}
	rep = &Report{
		Name: fmt.Sprintf("scale: %d concurrent streams in %d shards, mock, %d runtimes and %d generators in separate processes", streams, shards, shards, shards),
		Command: fmt.Sprintf("streambench bench scale --streams %d --ramp %s --stream-length %s --itl %s --shards %d%s",
			streams, ramp, length, itl, shards, o.transportFlags()),
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
			ttft, tokens, itl, ttft+time.Duration(tokens)*itl, streams, ramp, shards, shards, shards, o.providerProtocol(),
			map[bool]string{false: "one HTTP/1.1 connection per stream", true: "h2c"}[o.HTTP2], shards),
	}
	mix, err := chatMix("bench-scale", scaleStreamName, "openai-none", "anthropic-none")
	if err != nil {
		return nil, err
	}
	doc := fmt.Sprintf("name: scale-stream\ndescription: a long-lived paced answer, so many streams stay open at once\n"+
		"timing:\n  ttft: %s\n  itl: %s\n  tokensPerFrame: 1\nturns:\n  - text: {tokens: %d}\n", ttft, itl, tokens)
	dir, _, err := writeScenarioDir(map[string]string{scaleStreamName: doc})
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "streambench-scale-shards-")
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	keep := o.KeepDir
	defer func() {
		if keep || err != nil || (rep != nil && len(rep.Failures) > 0) {
			if rep != nil {
				rep.note("children's logs, shard results and the scenario directory kept: %s (logs in %s, scenarios in %s)", work, filepath.Join(work, "logs"), dir)
			} else {
				err = fmt.Errorf("%w (children's logs in %s)", err, filepath.Join(work, "logs"))
			}
			return
		}
		os.RemoveAll(dir)
		os.RemoveAll(work)
	}()
	logs := filepath.Join(work, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	mixData, err := yaml.Marshal(mix)
	if err != nil {
		return nil, fmt.Errorf("mix: %w", err)
	}
	mixFile := filepath.Join(work, "mix.yaml")
	if _, err := loadgen.ParseMix(mixFile, mixData); err != nil {
		return nil, fmt.Errorf("mix written for the shards: %w", err)
	}
	if err := os.WriteFile(mixFile, mixData, 0o644); err != nil {
		return nil, err
	}

	// The system under test: one mock, a runtime per shard.
	var stops []func()
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	startLogged := func(name string, args []string) (*stack.Child, error) {
		f, err := os.Create(filepath.Join(logs, name+".log"))
		if err != nil {
			return nil, err
		}
		c, err := stack.StartChildLogged(exe, args, f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		stops = append(stops, func() { c.Stop(); f.Close() })
		return c, nil
	}
	mock, err := startLogged("mock", []string{"mock", "--addr", "127.0.0.1:0", "--time-scale", "1", "--scenarios", dir})
	if err != nil {
		return nil, err
	}
	runtimes := make([]*stack.Child, shards)
	urls := []string{mock.URL()}
	for i := range runtimes {
		runtimes[i], err = startLogged(fmt.Sprintf("runtime-%d", i), []string{"runtime", "--addr", "127.0.0.1:0",
			"--provider", mock.URL(), "--tool-time-scale", "1", fmt.Sprintf("--provider-h2c=%t", !o.ProviderHTTP1)})
		if err != nil {
			return nil, err
		}
		urls = append(urls, runtimes[i].URL())
	}
	if err := stack.WaitHealthy(urls...); err != nil {
		return nil, err
	}

	// The generators: `streambench load --shard I/N`, all starting at one moment.
	runID := "bench-scale-" + time.Now().UTC().Format("150405")
	out := filepath.Join(work, "out")
	startAt := time.Now().Add(shardStartLead).Truncate(time.Second).Add(time.Second)
	stages := fmt.Sprintf("%s:%d,%s:%d", ramp, streams, 2*time.Second, streams)
	type generator struct {
		cmd  *exec.Cmd
		done chan error
		log  *os.File
	}
	gens := make([]*generator, shards)
	for i := range gens {
		args := []string{"load", "--target", runtimes[i].URL(), "--mock", mock.URL(), "--mix", mixFile, "--scenarios", dir,
			"--shard", fmt.Sprintf("%d/%d", i, shards), "--start-at", startAt.UTC().Format(time.RFC3339),
			"--stages", stages, "--sessions", strconv.Itoa(streams),
			"--grace", (length + time.Minute).String(), "--stream-timeout", (length + time.Minute).String(),
			"--out", out, "--run-id", runID, "--quiet", "--no-preflight", "--no-leak-check"}
		if o.HTTP2 {
			args = append(args, "--http2")
		}
		f, err := os.Create(filepath.Join(logs, fmt.Sprintf("load-%d.log", i)))
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.SysProcAttr = stack.ProcAttr()
		if err := cmd.Start(); err != nil {
			f.Close()
			return nil, fmt.Errorf("start shard %d: %w", i, err)
		}
		g := &generator{cmd: cmd, done: make(chan error, 1), log: f}
		go func() { g.done <- cmd.Wait() }()
		gens[i] = g
		stops = append(stops, func() {
			select {
			case err := <-g.done:
				g.done <- err
			default:
				_ = cmd.Process.Signal(os.Interrupt)
				select {
				case err := <-g.done:
					g.done <- err
				case <-time.After(15 * time.Second):
					_ = cmd.Process.Kill()
					g.done <- <-g.done
				}
			}
			f.Close()
		})
	}

	var (
		mu          sync.Mutex
		peak        shardSample
		before      int64 // generators' RSS just before the start
		genCPU0     time.Duration
		mockCPU0    time.Duration
		rtCPU0      = make([]time.Duration, shards)
		sampledOnce bool
	)
	sum := func() (s shardSample) {
		for _, g := range gens {
			kib, _ := procStatusKiB(g.cmd.Process.Pid, "VmRSS")
			s.generatorKiB += kib
		}
		for _, r := range runtimes {
			kib, _ := procStatusKiB(r.PID(), "VmRSS")
			s.rtKiB += kib
		}
		s.mockKiB, _ = procStatusKiB(mock.PID(), "VmRSS")
		return s
	}
	// Just before the start: the baseline.
	select {
	case <-time.After(time.Until(startAt.Add(-300 * time.Millisecond))):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	before = sum().generatorKiB
	for _, g := range gens {
		c, _ := procCPU(g.cmd.Process.Pid)
		genCPU0 += c
	}
	mockCPU0, _ = procCPU(mock.PID())
	for i, r := range runtimes {
		rtCPU0[i], _ = procCPU(r.PID())
	}
	heldUntil := startAt.Add(ramp + 2*time.Second + min(length/2, 10*time.Second))
	var mockCPU1 time.Duration
	rtCPU1 := make([]time.Duration, shards)
	stopSampling := sampleEvery(250*time.Millisecond, func() {
		s := sum()
		m, _ := procCPU(mock.PID())
		mu.Lock()
		defer mu.Unlock()
		// Memory counts while streams are started and held, not the writing of the results
		// after them.
		if time.Now().Before(heldUntil) && s.generatorKiB >= peak.generatorKiB {
			peak = s
		}
		sampledOnce = true
		mockCPU1 = max(mockCPU1, m)
		for i, r := range runtimes {
			c, _ := procCPU(r.PID())
			rtCPU1[i] = max(rtCPU1[i], c)
		}
	})

	var genCPU time.Duration
	var failed []string
	for i, g := range gens {
		var werr error
		select {
		case werr = <-g.done:
			g.done <- werr
		case <-ctx.Done():
			stopSampling()
			return nil, ctx.Err()
		}
		if st := g.cmd.ProcessState; st != nil {
			genCPU += st.UserTime() + st.SystemTime()
		}
		if werr != nil {
			failed = append(failed, fmt.Sprintf("shard %d: %v (its output: %s)", i, werr, g.log.Name()))
		}
	}
	stopSampling()
	if m, err := procCPU(mock.PID()); err == nil {
		mockCPU1 = max(mockCPU1, m)
	}
	for i, r := range runtimes {
		if c, err := procCPU(r.PID()); err == nil {
			rtCPU1[i] = max(rtCPU1[i], c)
		}
	}
	genCPU -= genCPU0

	dirs := make([]string, shards)
	for i := range dirs {
		dirs[i] = filepath.Join(out, runID, fmt.Sprintf("shard-%d", i))
	}
	shardRuns, err := measure.ReadShards(dirs)
	if err != nil {
		if len(failed) > 0 {
			err = fmt.Errorf("%w; %v", err, failed)
		}
		return nil, fmt.Errorf("read the shards' results: %w", err)
	}
	run, err := measure.Merge(shardRuns, nil)
	if err != nil {
		return nil, fmt.Errorf("merge the shards: %w", err)
	}
	if err := verdict.Stamp(run); err != nil {
		return nil, fmt.Errorf("judge the merged run: %w", err)
	}
	merged := filepath.Join(work, "merged")
	if err := measure.WriteRun(merged, run); err != nil {
		return nil, fmt.Errorf("write merged run: %w", err)
	}
	var active int64
	for _, p := range run.Timeline {
		active = max(active, p.Active)
	}
	c := run.Summary.Counters

	rep.addTarget("peak concurrent streams", float64(active), "streams", fmt.Sprintf("= %d", streams), active >= int64(streams))
	rep.add("shards", float64(len(shardRuns)), "generators")
	rep.add("sessions ok", float64(c.SessionsOK), "sessions")
	rep.add("sessions failed", float64(c.SessionsFailed), "sessions")
	transport := c.Outcome(measure.OutcomeTransportError)
	rep.addTarget("transport errors", float64(transport), "errors", "0", transport == 0)
	others := c.Errors() - transport
	rep.addTarget("other error outcomes", float64(others), "errors", "0", others == 0)
	rep.addTarget("violations", float64(run.Summary.TotalViolations()), "violations", "0", run.Summary.TotalViolations() == 0)
	mu.Lock()
	pk, ok := peak, sampledOnce
	mu.Unlock()
	if active > 0 && ok {
		perStream := float64(pk.generatorKiB-before) / float64(streams)
		rep.addTarget("generator RSS per open stream (sum over shards)", perStream, "KiB", "≤ 16 KiB", perStream > 0 && perStream <= 16)
		rep.add("generators' RSS at peak (sum)", float64(pk.generatorKiB)/1024, "MiB")
		rep.add("runtimes' RSS at peak (sum)", float64(pk.rtKiB)/1024, "MiB")
		rep.add("runtimes' RSS at peak ÷ open streams", float64(pk.rtKiB)/float64(active), "KiB")
		rep.add("mock RSS at peak", float64(pk.mockKiB)/1024, "MiB")
	}
	rep.add("frames received", float64(c.Frames), "frames")
	if c.Frames > 0 {
		var rtCPU time.Duration
		for i := range rtCPU1 {
			rtCPU += rtCPU1[i] - rtCPU0[i]
		}
		rep.add("generator CPU per received frame (all shards)", float64(genCPU.Nanoseconds())/1e3/float64(c.Frames), "µs")
		rep.add("runtime CPU per relayed frame (all runtimes)", float64(rtCPU.Nanoseconds())/1e3/float64(c.Frames), "µs")
		rep.add("mock CPU per frame", float64((mockCPU1-mockCPU0).Nanoseconds())/1e3/float64(c.Frames), "µs")
	}
	addLatencyFigures(rep, run)
	rep.add("open-files limit per process", float64(openFileLimit()), "files")
	rep.note("no leak check in a sharded run: each shard runs with --no-leak-check")
	runFailures(rep, run)
	for _, f := range failed {
		rep.fail("generator %s", f)
	}
	if active < int64(streams) {
		rep.fail("only %d of %d streams were open at once", active, streams)
	}
	if per := uint64(streams/shards) + 256; openFileLimit() < per {
		rep.note("the open-files limit %d is below %d streams per shard + slack: raise `ulimit -n`", openFileLimit(), streams/shards)
	}
	return rep, nil
}
