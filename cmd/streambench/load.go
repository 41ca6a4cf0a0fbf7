package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/scenarios"
)

// workloadFlags are the flags load and run share: what to play and how hard.
type workloadFlags struct {
	dialect, slug, policy, mix, scenarioDir string
	optedIn                                 bool
	seed                                    uint64
	clients                                 int
	thinkTime                               time.Duration
	rate                                    float64
	arrival                                 string
	maxInflight                             int
	stages                                  string
	rateStages                              bool
	duration, warmup, grace, streamTimeout  time.Duration
	leakGrace                               time.Duration
	leakPerStream                           float64
	sessions                                int64
	http2, noLeakCheck, quiet               bool
	timeScale                               float64
	runID                                   string
	fs                                      *pflag.FlagSet
}

// Defaults of the workload when no shape or length is given: the default mix's 1,000 clients
// for 30 s.
const (
	defaultClients  = 1000
	defaultDuration = 30 * time.Second
)

// addWorkloadFlags registers the workload flags on fs (load and run share them).
func addWorkloadFlags(fs *pflag.FlagSet) *workloadFlags {
	w := &workloadFlags{fs: fs}
	fs.StringVar(&w.mix, "mix", "", "workload mix YAML file (default: the embedded mix)")
	fs.StringVar(&w.scenarioDir, "scenarios", "", "load scenarios from this directory instead of the embedded library")
	fs.StringVar(&w.dialect, "dialect", "", "only this client dialect: sim-chat, sim-canvas or compose (default: the mix's)")
	fs.StringVar(&w.slug, "slug", "", "send every session to this deployment slug / workflow id / agent id")
	fs.StringVar(&w.policy, "policy", "", "the --slug deployment's sim-chat policy: none, thinking, tools or all (default: from the slug's suffix, else none)")
	fs.BoolVar(&w.optedIn, "opted-in", false, "sim-chat: send the agent-events-v1 header (default: as the mix's profiles say)")
	fs.Uint64Var(&w.seed, "seed", 0, "session sequence seed (default: the mix's)")
	fs.IntVar(&w.clients, "clients", 0, fmt.Sprintf("closed loop: virtual users, each running sessions back to back (default %d when no --rate or --stages)", defaultClients))
	fs.DurationVar(&w.thinkTime, "think-time", 0, "closed loop: pause between a user's sessions")
	fs.Float64Var(&w.rate, "rate", 0, "open loop: sessions started per second")
	fs.StringVar(&w.arrival, "arrival", "constant", "open loop: constant or poisson arrivals")
	fs.IntVar(&w.maxInflight, "max-inflight", 10000, "open loop: most open streams; starts beyond it are dropped and counted")
	fs.StringVar(&w.stages, "stages", "", "ramp as DURATION:TARGET,... e.g. 30s:1000,60s:1000,10s:0 (virtual users; session rates with --rate-stages)")
	fs.BoolVar(&w.rateStages, "rate-stages", false, "--stages targets are session rates (open loop) instead of virtual users")
	fs.DurationVar(&w.duration, "duration", 0, fmt.Sprintf("stop starting sessions after this long (default %s when neither --sessions nor --stages)", defaultDuration))
	fs.Int64Var(&w.sessions, "sessions", 0, "stop after this many sessions")
	fs.DurationVar(&w.warmup, "warmup", 0, "sessions started in this first period are checked but not measured")
	fs.DurationVar(&w.grace, "grace", 30*time.Second, "after the last start, how long in-flight streams may finish before they are cancelled")
	fs.DurationVar(&w.streamTimeout, "stream-timeout", 2*time.Minute, "longest a single session may take")
	fs.DurationVar(&w.leakGrace, "leak-grace", 5*time.Second, "after the load drained, how long gauges may take to return to their baseline")
	fs.Float64Var(&w.leakPerStream, "leak-per-stream", 0.05, "goroutines, descriptors and handles per peak open stream the runtime and mock may keep after the run,\n"+
		"on top of 16, for pooled idle provider connections (HTTP/1.1 provider pools keep one connection, two goroutines, per stream they carried at once: 2)")
	fs.BoolVar(&w.noLeakCheck, "no-leak-check", false, "skip the leak check")
	fs.BoolVar(&w.http2, "http2", false, "use cleartext HTTP/2 (h2c) instead of one HTTP/1.1 connection per stream")
	fs.Float64Var(&w.timeScale, "time-scale", 1, "the mock's time scale (scripted client triggers scale with it)")
	fs.StringVar(&w.runID, "run-id", "", "name of the run (default: time-based); results go to OUT/RUN-ID")
	fs.BoolVar(&w.quiet, "quiet", false, "no progress output")
	return w
}

// policyFromSlug reads the runtime's default deployment naming, <wire>-<policy>.
func policyFromSlug(slug, policy string) (loadgen.Target, error) {
	t := loadgen.Target{Slug: slug}
	if policy == "" {
		policy = "none"
		for _, p := range []string{"none", "thinking", "tools", "all"} {
			if strings.HasSuffix(slug, "-"+p) {
				policy = p
			}
		}
	}
	switch policy {
	case "none":
	case "thinking":
		t.IncludeThinking = true
	case "tools":
		t.IncludeToolCalls = true
	case "all":
		t.IncludeThinking, t.IncludeToolCalls = true, true
	default:
		return t, usageError("--policy %q: want none, thinking, tools or all", policy)
	}
	return t, nil
}

// config turns the flags into a loadgen.Config (without target, mock and metrics URLs).
func (w *workloadFlags) config() (loadgen.Config, error) {
	cfg := loadgen.Config{
		Seed: w.seed, RunID: w.runID, Clients: w.clients, ThinkTime: w.thinkTime,
		Rate: w.rate, Arrival: w.arrival, MaxInflight: w.maxInflight, RateStages: w.rateStages,
		Duration: w.duration, Sessions: w.sessions, Warmup: w.warmup, Grace: w.grace,
		StreamTimeout: w.streamTimeout, LeakGrace: w.leakGrace, NoLeakCheck: w.noLeakCheck, LeakPerStream: w.leakPerStream,
		HTTP2: w.http2, ScriptTimeScale: w.timeScale, MixName: "default",
	}
	if w.timeScale <= 0 {
		return cfg, usageError("--time-scale %g: want a positive factor", w.timeScale)
	}
	if w.stages != "" {
		st, err := loadgen.ParseStages(w.stages)
		if err != nil {
			return cfg, usageError("--stages: %v", err)
		}
		cfg.Stages = st
	}
	if cfg.Clients == 0 && cfg.Rate == 0 && len(cfg.Stages) == 0 {
		cfg.Clients = defaultClients
	}
	if cfg.Duration == 0 && cfg.Sessions == 0 && len(cfg.Stages) == 0 {
		cfg.Duration = defaultDuration
	}
	if w.scenarioDir != "" {
		lib, err := scenarios.LoadDir(w.scenarioDir)
		if err != nil {
			return cfg, usageError("--scenarios %s: %v", w.scenarioDir, err)
		}
		cfg.Library = lib
	}
	mix := loadgen.DefaultMix()
	if w.mix != "" {
		m, err := loadgen.LoadMix(w.mix)
		if err != nil {
			return cfg, usageError("--mix: %v", err)
		}
		mix, cfg.MixName = m, w.mix
	}
	var optedIn *bool
	if w.fs.Changed("opted-in") {
		optedIn = &w.optedIn
	}
	var target *loadgen.Target
	if w.slug != "" {
		t, err := policyFromSlug(w.slug, w.policy)
		if err != nil {
			return cfg, err
		}
		target = &t
	} else if w.policy != "" {
		return cfg, usageError("--policy describes --slug's deployment; give --slug too")
	}
	if w.dialect != "" && !slices.Contains([]string{loadgen.DialectSimChat, loadgen.DialectSimCanvas, loadgen.DialectCompose}, w.dialect) {
		return cfg, usageError("--dialect %q: want sim-chat, sim-canvas or compose", w.dialect)
	}
	if w.dialect != "" || optedIn != nil || target != nil {
		m, err := mix.Restrict(w.dialect, optedIn, target)
		if err != nil {
			return cfg, usageError("%v", err)
		}
		mix = m
	}
	cfg.Mix = mix
	return cfg, nil
}

// runLoad runs a load against any runtime.
func runLoad(args []string) error {
	fs := newFlagSet("load", "load --target URL [--dialect sim-chat|sim-canvas|compose] [--slug S] [--opted-in] [--mock URL] [--runtime-metrics URL] [--mix FILE] [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--out DIR] ...")
	target := fs.String("target", "", "the runtime's base URL, e.g. http://127.0.0.1:8080 (required)")
	mock := fs.String("mock", "", "the mock provider's base URL: its session records give cancel latency and R-abort")
	metrics := fs.String("runtime-metrics", "", "the runtime's Prometheus endpoint for the leak check (default TARGET/metrics; - to skip; an absent or unreadable one is reported as not checked, not a failure)")
	out := fs.String("out", "", "write results to OUT/RUN-ID (summary.json, histograms.hlog, timeline.csv, violations.jsonl)")
	w := addWorkloadFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer spareProcs()()
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if *target == "" {
		return usageError("--target is required (the runtime's base URL)")
	}
	cfg, err := w.config()
	if err != nil {
		return err
	}
	cfg.Target, cfg.MockURL, cfg.RuntimeMetricsURL = strings.TrimSuffix(*target, "/"), strings.TrimSuffix(*mock, "/"), *metrics
	run, table, err := executeLoad(cfg, w.quiet)
	if err != nil {
		return err
	}
	return finishRun(run, table, *out, report.Render)
}

// keyTable aggregates sessions and violations per scenario × dialect for the summary table.
type keyTable struct {
	cpu        time.Duration // this process's CPU time during the run
	mu         sync.Mutex
	cut        int64 // sessions cancelled at the end of the grace period
	sessions   map[measure.Key]int64
	violations map[measure.Key]int64
}

func (t *keyTable) add(e loadgen.SessionEnd) {
	k := measure.Key{Scenario: e.Scenario, Dialect: e.Dialect}
	t.mu.Lock()
	if e.Outcome == "cut" {
		t.cut++
	}
	t.sessions[k]++
	t.violations[k] += int64(len(e.Violations))
	t.mu.Unlock()
}

// executeLoad runs cfg with progress output and Ctrl-C handling: the first interrupt stops new
// sessions and drains, the second cancels in-flight streams; results are returned either way.
func executeLoad(cfg loadgen.Config, quiet bool) (*measure.Run, *keyTable, error) {
	interrupt := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintf(os.Stderr, "\ninterrupted: no new sessions; draining in-flight streams for up to %s (Ctrl-C again to stop now)\n", cfg.Grace)
				close(interrupt)
				continue
			}
			fmt.Fprintln(os.Stderr, "\ninterrupted again: cancelling in-flight streams and writing what was measured")
			cancel()
			return
		}
	}()
	cfg.Interrupt = interrupt
	table := &keyTable{sessions: map[measure.Key]int64{}, violations: map[measure.Key]int64{}}
	cfg.OnSessionEnd = table.add
	var prog *progressView
	if !quiet {
		prog = newProgressView(os.Stderr)
		cfg.OnProgress = prog.update
	}
	cpuBefore := processCPU()
	run, err := loadgen.Run(ctx, cfg)
	if prog != nil {
		prog.close()
	}
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	table.cpu = processCPU() - cpuBefore
	return run, table, nil
}

// finishRun prints the summary, writes the results and turns the verdict into the exit code.
// render, when set, renders the report into the run's directory.
func finishRun(run *measure.Run, table *keyTable, out string, render func(dir string) error) error {
	printSummary(os.Stdout, run, table)
	if out != "" {
		dir := filepath.Join(out, run.Summary.RunID)
		if err := measure.WriteRun(dir, run); err != nil {
			return fmt.Errorf("write results: %w", err)
		}
		fmt.Printf("results: %s\n", dir)
		if render != nil {
			if err := render(dir); err != nil {
				return fmt.Errorf("render report in %s: %w", dir, err)
			}
		}
	}
	if !run.Summary.Verdict.Pass {
		return &exitError{code: exitFailure, err: fmt.Errorf("run failed: %s", strings.Join(run.Summary.Verdict.Reasons, "; "))}
	}
	return nil
}

// printSummary writes the per scenario × dialect table, counters, violations and leaks.
func printSummary(w io.Writer, run *measure.Run, table *keyTable) {
	s := &run.Summary
	ms := func(us int64) string { return fmt.Sprintf("%.1fms", float64(us)/1000) }
	sorted := slices.SortedFunc(maps.Keys(table.sessions), measure.Key.Compare)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tdialect\tsessions\tttfc p50\tttfc p99\tgap p99\tviolations\t")
	for _, k := range sorted {
		ttfc, _ := s.Metric(measure.Key{Metric: measure.FirstChunk, Scenario: k.Scenario, Dialect: k.Dialect})
		gap, _ := s.Metric(measure.Key{Metric: measure.ChunkGap, Scenario: k.Scenario, Dialect: k.Dialect})
		row := []string{k.Scenario, k.Dialect, fmt.Sprint(table.sessions[k]), "-", "-", "-", fmt.Sprint(table.violations[k])}
		if ttfc.Count > 0 {
			row[3], row[4] = ms(ttfc.P50), ms(ttfc.P99)
		}
		if gap.Count > 0 {
			row[5] = ms(gap.P99)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	c := s.Counters
	fmt.Fprintf(w, "\nrun %s: %s, sessions started %d, ok %d, failed %d, aborted %d (scripted errors %d), frames %d, bytes %d\n",
		s.RunID, s.Ended.Sub(s.Started).Round(time.Millisecond), c.SessionsStarted, c.SessionsOK, c.SessionsFailed, c.SessionsAborted, c.ScriptedErrors, c.Frames, c.Bytes)
	fmt.Fprintf(w, "errors: http %v, transport %d, decode %d; late starts %d, dropped starts %d\n",
		c.HTTPErrors, c.TransportErrors, c.DecodeErrors, c.LateStarts, c.DroppedStarts)
	if table.cut > 0 {
		fmt.Fprintf(w, "%d sessions (counted as aborted) were still streaming when the grace period ended and were cancelled\n", table.cut)
	}
	if c.Frames > 0 && table.cpu > 0 {
		fmt.Fprintf(w, "this process: %.1f µs CPU per received frame (%s CPU for %d frames)\n",
			float64(table.cpu.Microseconds())/float64(c.Frames), table.cpu.Round(time.Millisecond), c.Frames)
	}
	if len(s.Violations) > 0 {
		fmt.Fprint(w, "violations:")
		for _, r := range slices.Sorted(maps.Keys(s.Violations)) {
			fmt.Fprintf(w, " %s=%d", r, s.Violations[r])
		}
		fmt.Fprintln(w)
	}
	printLeakCheck(w, s)
	if s.Verdict.Pass {
		fmt.Fprintln(w, "verdict: PASS")
	} else {
		fmt.Fprintln(w, "verdict: FAIL")
		for _, r := range s.Verdict.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
}

// printLeakCheck says what the leak check compared per process, what it found and what it
// could not check (not checked never fails a run).
func printLeakCheck(w io.Writer, s *measure.Summary) {
	checked := map[string][]string{}
	var sources []string
	for _, l := range s.Leaks {
		if checked[l.Source] == nil {
			sources = append(sources, l.Source)
		}
		checked[l.Source] = append(checked[l.Source], l.Name)
	}
	for _, src := range sources {
		fmt.Fprintf(w, "leak check %s: %d gauges (%s)\n", src, len(checked[src]), strings.Join(checked[src], ", "))
	}
	for _, l := range s.Leaks {
		if !l.OK {
			fmt.Fprintf(w, "LEAK %s %s: %g → %g (tolerance %g)\n", l.Source, l.Name, l.Before, l.After, l.Tolerance)
		}
	}
	for _, n := range s.LeaksNotChecked {
		what := n.Source
		if n.Name != "" {
			what += " " + n.Name
		}
		fmt.Fprintf(w, "leak check %s: not checked — %s\n", what, n.Reason)
	}
}

// progressView shows the run's progress: mpb bars on a terminal, a plain line every 5 s
// otherwise (logs, CI).
type progressView struct {
	w     io.Writer
	tty   bool
	p     *mpb.Progress
	bar   *mpb.Bar
	mu    sync.Mutex
	last  loadgen.Progress
	lines int
}

// isTerminal tells whether f is a character device (a terminal), where bars can redraw.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newProgressView(f *os.File) *progressView {
	v := &progressView{w: f, tty: isTerminal(f)}
	if v.tty {
		v.p = mpb.New(mpb.WithOutput(f), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond))
		v.bar = v.p.AddBar(100,
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
				v.mu.Lock()
				defer v.mu.Unlock()
				return fmt.Sprintf("%s/%s", v.last.Elapsed, v.last.Planned)
			}, decor.WC{W: 12})),
			mpb.AppendDecorators(decor.Any(func(decor.Statistics) string {
				v.mu.Lock()
				defer v.mu.Unlock()
				return v.describe()
			})),
		)
	}
	return v
}

func (v *progressView) describe() string {
	p := v.last
	s := fmt.Sprintf("active %d  sessions %d/%d  errors %d  violations %d", p.Active, p.Completed, p.Started, p.Errors, p.Violations)
	if p.Draining {
		s += "  (draining)"
	}
	return s
}

// update is the run's OnProgress: it moves the bar, or prints a line every 5 s.
func (v *progressView) update(p loadgen.Progress) {
	v.mu.Lock()
	v.last = p
	line := v.describe()
	v.mu.Unlock()
	if v.tty {
		pct := int64(0)
		switch {
		case p.Planned > 0:
			pct = int64(100 * p.Elapsed / p.Planned)
		case p.PlannedSessions > 0:
			pct = 100 * p.Started / p.PlannedSessions
		}
		v.bar.SetCurrent(min(pct, 99))
		return
	}
	if int(p.Elapsed/time.Second)%5 == 0 {
		fmt.Fprintf(v.w, "[%s] %s\n", p.Elapsed, line)
	}
}

// close completes the bar and waits for its last redraw.
func (v *progressView) close() {
	if v.tty {
		v.bar.SetTotal(-1, true)
		v.p.Wait()
	}
}

// processCPU is this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
