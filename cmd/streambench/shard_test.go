package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/streambench/streambench/cmd/internal/workload"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
	"github.com/streambench/streambench/sweep"
	"github.com/streambench/streambench/verdict"
)

// runShardProcess runs this test binary as `streambench load ARGS` with the Indexed Job's
// environment ($JOB_COMPLETION_INDEX=index), as a pod of the Job runs it.
func runShardProcess(index int, args []string) (int, string, error) {
	cmd := exec.Command(os.Args[0], append([]string{"load"}, args...)...)
	cmd.Env = append(os.Environ(), benchChildEnv+"=1", loadgen.JobIndexEnv+"="+strconv.Itoa(index))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), nil
	}
	return 0, out.String(), err
}

// TestShardedRunMergesToTheSingleRun is the Indexed Job simulated here: a leak baseline, four
// shard processes started as the Job's pods are (--shards 4, $JOB_COMPLETION_INDEX, one
// --start-at), and a merge that verifies the leak check. The merged counters are the sums of
// the shards'; the merged run plays the single run's sessions (same seed and --sessions), so it
// has its session counts, outcomes, violations and histogram counts (docs/CAPACITY.md says what
// is equal, and why the mix leaves out clients that act at a time); its histograms are those of
// all the shards' values, and it renders, compares and gates like any run; a shard of another
// run is refused by name.
func TestShardedRunMergesToTheSingleRun(t *testing.T) {
	t.Parallel()
	// The mock and the runtime in processes of their own, as the Job's are: the leak check
	// reads their goroutines and descriptors, which in this process would be every parallel
	// test's.
	st, err := stack.StartChildren(stack.Options{TimeScale: 0.02})
	stopAtEnd(t, st, err)
	out := t.TempDir()
	metrics := st.RuntimeURL + "/metrics"
	// No --mock for the load: its cancel check waits 5 s after the last abort for the mock's
	// records, in every process; the mock is still read by the leak check.
	common := []string{"--target", st.RuntimeURL, "--seed", "5", "--sessions", "48",
		"--clients", "8", "--time-scale", "0.02", "--quiet", "--out", out, "--mix", frameTriggeredMix(t, out)}

	// The single run in process, from the same flags (the load command would also render
	// its report, seconds of plotting that prove nothing here).
	began := time.Now()
	fs := newFlagSet("load", "")
	w := workload.Add(fs)
	target, dir := fs.String("target", "", ""), fs.String("out", "", "")
	if err := fs.Parse(append([]string{"--run-id", "single", "--no-leak-check"}, common...)); err != nil {
		t.Fatal(err)
	}
	cfg, err := config(w)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Target, cfg.RuntimeMetricsURL = *target, "-"
	singleRun, err := loadgen.Run(context.Background(), cfg)
	if err != nil || !singleRun.Summary.Verdict.Pass {
		t.Fatalf("single run: %v %+v", err, singleRun.Summary.Verdict)
	}
	if err := measure.WriteRun(filepath.Join(*dir, "single"), singleRun); err != nil {
		t.Fatal(err)
	}
	t.Logf("single run: %v", time.Since(began))
	baseline := filepath.Join(out, "leaks.json")
	if code := run([]string{"leaks", "baseline", "--runtime-metrics", metrics, "--mock", st.MockURL, "--out", baseline}); code != exitOK {
		t.Fatalf("leaks baseline: exit %d", code)
	}

	t.Logf("leak baseline: %v", time.Since(began))
	startAt := time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)
	shardsBegan := time.Now()
	var wg sync.WaitGroup
	outputs := make([]string, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, text, err := runShardProcess(i, append([]string{"--shards", "4", "--run-id", "sharded", "--start-at", startAt, "--no-leak-check"}, common...))
			if err != nil || code != exitOK {
				t.Errorf("shard %d: exit %d, %v\n%s", i, code, err, text)
			}
			outputs[i] = text
			t.Logf("shard %d: %v", i, time.Since(shardsBegan))
		}()
	}
	wg.Wait()
	t.Logf("single run and shards: %v", time.Since(began))
	if t.Failed() {
		t.FailNow()
	}
	var dirs []string
	var shardCounters []measure.Counters
	all := measure.NewHistograms()
	for i := range 4 {
		dir := filepath.Join(out, "sharded", "shard-"+strconv.Itoa(i))
		r, err := measure.ReadRun(dir)
		if err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, outputs[i])
		}
		if r.Summary.Shard == nil || r.Summary.Shard.Index != i || r.Summary.Shard.Count != 4 {
			t.Fatalf("shard %d: summary shard %+v", i, r.Summary.Shard)
		}
		all.Merge(r.Histograms)
		shardCounters = append(shardCounters, r.Summary.Counters)
		dirs = append(dirs, dir)
	}

	merged := filepath.Join(out, "merged")
	args := append(append([]string{"merge"}, dirs...), "--out", merged, "--leak-baseline", baseline,
		"--runtime-metrics", metrics, "--mock", st.MockURL, "--no-render")
	if code := run(args); code != exitOK {
		t.Fatalf("merge: exit %d", code)
	}
	t.Logf("merged with the leak check: %v", time.Since(began))
	m, err := measure.ReadRun(merged)
	if err != nil {
		t.Fatal(err)
	}
	single, err := measure.ReadRun(filepath.Join(out, "single"))
	if err != nil {
		t.Fatal(err)
	}

	// The merge loses and invents nothing: its counters are the sums of the shards'.
	if got, want := countersText(m.Summary.Counters), sumCounters(shardCounters); got != want {
		t.Errorf("merged counters %s\nsum of the shards' %s", got, want)
	}

	// Equal to the single run: the same sessions (index → scenario, client, target, seed), so
	// the same session counts, outcomes and violations, and per scenario × dialect as many
	// values in every histogram (the values differ by timing). Not compared: frames, bytes and
	// output tokens, which include what a client that aborts or stops still read after it
	// acted (the rest of a read; after a stop request, what the runtime sent until it acted on
	// it): timing, more so on a busy machine.
	mc, sc := m.Summary.Counters, single.Summary.Counters
	if mc.SessionsStarted != 48 || mc.SessionsStarted != sc.SessionsStarted || mc.SessionsOK != sc.SessionsOK ||
		mc.SessionsFailed != sc.SessionsFailed || fmt.Sprint(mc.Outcomes) != fmt.Sprint(sc.Outcomes) ||
		fmt.Sprint(mc.HTTPErrors) != fmt.Sprint(sc.HTTPErrors) || fmt.Sprint(mc.FailedByRules) != fmt.Sprint(sc.FailedByRules) ||
		mc.GoodputSessions != sc.GoodputSessions || mc.GoodputJudged != sc.GoodputJudged {
		t.Errorf("merged counters %+v\nsingle %+v", mc, sc)
	}
	if m.Summary.TotalViolations() != single.Summary.TotalViolations() {
		t.Errorf("violations %v, single %v", m.Summary.Violations, single.Summary.Violations)
	}
	for _, k := range single.Histograms.Keys() {
		if k.Metric == measure.GeneratorLag || k.Metric == measure.Connect {
			continue // sampled on a clock; recorded only when a new connection was dialled
		}
		if (k.Metric == measure.ChunkGap || k.Metric == measure.InterTokenLatency) && clientActs(k.Scenario) {
			// what the client still reads after it acted (the rest of a read; after a stop
			// request, what the runtime sends until it acts on it) is timing
			continue
		}
		if got, want := m.Histograms.Count(k), single.Histograms.Count(k); got != want {
			t.Errorf("%s: %d values merged, %d in the single run", k, got, want)
		}
	}
	// percentiles: those of one histogram of all the shards' values
	same := func(a, b measure.Key) bool { return a == b && m.Histograms.Get(a).Equals(all.Get(b)) }
	if !slices.EqualFunc(m.Histograms.Keys(), all.Keys(), same) {
		t.Error("merged histograms differ from the histograms of all the shards' values")
	}
	for _, k := range all.Keys() {
		got, want := m.Histograms.Get(k), all.Get(k)
		for _, q := range []float64{50, 90, 99, 99.9} {
			if got.ValueAtQuantile(q) != want.ValueAtQuantile(q) {
				t.Errorf("%s p%g: %d merged, %d of all values", k, q, got.ValueAtQuantile(q), want.ValueAtQuantile(q))
			}
		}
	}
	if len(m.Summary.Shards) != 4 || len(m.Summary.Leaks) == 0 || m.Summary.FailedLeaks() != 0 || !m.Summary.Verdict.Pass {
		t.Errorf("shards %d, leaks %+v, verdict %+v", len(m.Summary.Shards), m.Summary.Leaks, m.Summary.Verdict)
	}

	// a merged run renders, compares and gates like any run
	if code := run([]string{"report", merged}); code != exitOK {
		t.Errorf("report: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(merged, "report.html")); err != nil {
		t.Errorf("report: %v", err)
	}
	if code := run([]string{"compare", filepath.Join(out, "single"), merged}); code != exitOK {
		t.Errorf("compare: exit %d", code)
	}
	if code := run([]string{"gate", merged, "--threshold", "violations==0", "--threshold", "errors==0"}); code != exitOK {
		t.Errorf("gate: exit %d", code)
	}

	// and a sweep whose step is a merged run re-judges it as any step
	sweepDir := filepath.Join(out, "sweep")
	if err := measure.WriteRun(filepath.Join(sweepDir, m.Summary.RunID), m); err != nil {
		t.Fatal(err)
	}
	slo, err := verdict.ParseThreshold("errors<1%")
	if err != nil {
		t.Fatal(err)
	}
	slos := []verdict.Threshold{slo}
	step := sweep.JudgeStep(sweep.Step{Clients: 8}, m, slos)
	if err := sweep.Analyze([]sweep.StepResult{step}, slos).Write(sweepDir); err != nil {
		t.Fatal(err)
	}
	var sweepOut bytes.Buffer
	if err := reportMain([]string{sweepDir}, &sweepOut); err != nil || !strings.Contains(sweepOut.String(), "48") {
		t.Errorf("sweep of a merged run: %v\n%s", err, sweepOut.String())
	}

	// a shard of another run is refused, naming the field
	other := filepath.Join(out, "other-shard")
	r3, _ := measure.ReadRun(dirs[3])
	r3.Summary.RunID = "another-run"
	if err := measure.WriteRun(other, r3); err != nil {
		t.Fatal(err)
	}
	err = mergeMain(append(append([]string{}, dirs[:3]...), other, "--out", filepath.Join(out, "refused")), &bytes.Buffer{})
	if exitCode(err) != exitUsage || !strings.Contains(fmtErr(err), "run_id") || !strings.Contains(fmtErr(err), "another-run") {
		t.Errorf("merge of another run's shard: exit %d, %v", exitCode(err), err)
	}
	// and so is a missing shard
	err = mergeMain(append(append([]string{}, dirs[:3]...), "--out", filepath.Join(out, "refused")), &bytes.Buffer{})
	if exitCode(err) != exitUsage || !strings.Contains(fmtErr(err), "shard 3 of 4 missing") {
		t.Errorf("merge without shard 3: exit %d, %v", exitCode(err), err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// clientActs tells whether a scenario of the default library has its client abort or stop.
func clientActs(scenario string) bool {
	sc, ok := scenarios.Embedded().Get(scenario)
	return ok && (sc.Client.Abort != nil || sc.Client.Stop != nil)
}

// frameTriggeredMix writes the default mix without the scenarios whose client may act at a
// time rather than on a frame it counts (clientActsOnClock) into dir and returns its path.
// Where such an action lands is timing: a timer that wakes late on a busy machine lets the
// stream complete first, so the two runs' outcomes could differ. The scenarios whose client
// aborts or stops after a number of chunks stay, weighted up.
func frameTriggeredMix(t *testing.T, dir string) string {
	t.Helper()
	m := loadgen.DefaultMix()
	var dropped []string
	for name := range m.Scenarios {
		if clientActsOnClock(name) {
			delete(m.Scenarios, name)
			dropped = append(dropped, name)
		}
	}
	for i := range m.Profiles {
		for name := range m.Profiles[i].Scenarios {
			if clientActsOnClock(name) {
				delete(m.Profiles[i].Scenarios, name)
				dropped = append(dropped, name)
			}
		}
	}
	kept := 0
	for name := range m.Scenarios {
		if clientActs(name) {
			m.Scenarios[name] = 4 // more sessions that abort or stop (on a chunk count)
			kept++
		}
	}
	if len(dropped) == 0 || kept == 0 {
		t.Fatalf("default mix: dropped %q, kept %d scenarios whose client acts on a frame: want some of each", dropped, kept)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mix.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// clientActsOnClock tells whether a scenario of the default library has its client abort or
// stop at a time rather than on a frame it counts: `after`, or during thinking or a tool, which
// a client that is not sent those frames times by the script.
func clientActsOnClock(scenario string) bool {
	sc, ok := scenarios.Embedded().Get(scenario)
	if !ok {
		return false
	}
	t := sc.Client.Abort
	if t == nil {
		t = sc.Client.Stop
	}
	return t != nil && (t.After > 0 || t.DuringThinking || t.DuringTool)
}

// sumCounters sums the shards' counters field by field, as written here and not by the
// merge's code, so the test checks the merge rather than restating it.
func sumCounters(cs []measure.Counters) string {
	var n [11]int64
	outcomes, failedBy, httpErr := map[measure.Outcome]int64{}, map[string]int64{}, map[int]int64{}
	for _, c := range cs {
		for i, v := range []int64{c.SessionsStarted, c.SessionsOK, c.SessionsFailed, c.Frames, c.Bytes,
			c.LateStarts, c.DroppedStarts, c.RecordErrors, c.OutputTokens, c.GoodputSessions, c.GoodputJudged} {
			n[i] += v
		}
		for k, v := range c.Outcomes {
			outcomes[k] += v
		}
		for k, v := range c.FailedByRules {
			failedBy[k] += v
		}
		for k, v := range c.HTTPErrors {
			httpErr[k] += v
		}
	}
	return fmt.Sprint(n, outcomes, failedBy, httpErr)
}

// countersText is c as sumCounters writes a sum.
func countersText(c measure.Counters) string {
	return sumCounters([]measure.Counters{c})
}
