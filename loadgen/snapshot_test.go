package loadgen

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// snapshotView is what a test keeps of one snapshot (the Run itself is reused after the call).
type snapshotView struct {
	incomplete bool
	ended      time.Time
	counters   measure.Counters
	violations int64
	ttfc       int64 // values in the ttfc histograms
	rows       int
	samples    []measure.ViolationSample
	verdict    measure.Verdict
}

func viewOf(r *measure.Run) snapshotView {
	ttfc, _ := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk })
	return snapshotView{
		incomplete: r.Summary.Incomplete, ended: r.Summary.Ended, counters: r.Summary.Counters,
		violations: r.Summary.TotalViolations(), ttfc: ttfc.TotalCount(), rows: len(r.Timeline),
		samples: r.Samples, verdict: r.Summary.Verdict,
	}
}

// TestSnapshotsDuringRun: a run hands out its results so far at the start, on its interval and
// once drained, each marked incomplete and failing, with counts that only grow; the last one
// holds every session and every latency the final results hold, and the violations known so
// far as samples without frames (the final results have their replayed frames).
func TestSnapshotsDuringRun(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale, "no-reset")
	cfg := s.config(mixOf(t, []string{"preamble-tool", "plain-answer"}, optedInAll()), 4, 0)
	cfg.RunID, cfg.Duration, cfg.NoLeakCheck = "snapshots", 1500*time.Millisecond, true
	cfg.SnapshotInterval = 100 * time.Millisecond
	var (
		mu    sync.Mutex
		views []snapshotView
		busy  bool
	)
	cfg.Outputs = append(cfg.Outputs, SnapshotFunc(func(r *measure.Run) error {
		mu.Lock()
		defer mu.Unlock()
		if busy {
			t.Error("Snapshot called while a call was running")
		}
		busy = true
		views = append(views, viewOf(r))
		busy = false
		return nil
	}))
	run := runLoad(t, cfg)
	mu.Lock()
	defer mu.Unlock()
	if len(views) < 4 {
		t.Fatalf("%d snapshots in a 1.5 s run at 100 ms, want the first, several on the interval and the last", len(views))
	}
	first, last := views[0], views[len(views)-1]
	if first.counters.SessionsStarted != 0 || first.rows != 0 {
		t.Errorf("first snapshot: %+v, want it taken before any session", first)
	}
	for i, v := range views {
		if !v.incomplete || v.verdict.Pass || len(v.verdict.Reasons) == 0 || !strings.HasPrefix(v.verdict.Reasons[0], "incomplete: ") {
			t.Errorf("snapshot %d: incomplete %v, verdict %+v: want incomplete and failing, saying so first", i, v.incomplete, v.verdict)
		}
		if i > 0 {
			p := views[i-1]
			if v.counters.SessionsStarted < p.counters.SessionsStarted || v.ttfc < p.ttfc || v.rows < p.rows || !v.ended.After(p.ended) {
				t.Errorf("snapshot %d went back: %+v after %+v", i, v, p)
			}
		}
	}
	c, lc := run.Summary.Counters, last.counters
	done := func(c measure.Counters) int64 {
		var n int64
		for _, k := range c.Outcomes {
			n += k
		}
		return n
	}
	if c.SessionsStarted == 0 || lc.SessionsStarted != c.SessionsStarted || done(lc) != done(c) || done(c) != c.SessionsStarted {
		t.Errorf("last snapshot sessions %+v, final %+v: want every session, drained", lc, c)
	}
	ttfc, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk })
	if last.ttfc != ttfc.TotalCount() || last.ttfc == 0 {
		t.Errorf("last snapshot has %d ttfc values, final %d: want all of them", last.ttfc, ttfc.TotalCount())
	}
	if last.violations == 0 || last.violations != run.Summary.TotalViolations() {
		t.Errorf("last snapshot %d violations, final %d: want the R-converge ones, all", last.violations, run.Summary.TotalViolations())
	}
	if len(last.samples) == 0 || last.samples[0].Rule != protocol.RConverge || len(last.samples[0].Frames) == 0 ||
		last.samples[0].Scenario != "preamble-tool" {
		t.Errorf("last snapshot samples %+v: want the R-converge session, with the frames it carried", last.samples)
	}
	if run.Summary.Incomplete || len(run.Samples) == 0 || len(run.Samples[0].Frames) == 0 {
		t.Errorf("final results: incomplete %v, samples %+v: want complete, with the run's frames", run.Summary.Incomplete, run.Samples)
	}
}

// TestSnapshotErrorFailsTheRun: a snapshot that cannot be written stops the snapshots and
// fails the run, naming the error; without a SnapshotOutput a run takes none and passes.
func TestSnapshotErrorFailsTheRun(t *testing.T) {
	t.Parallel()
	s := newStack(t, testScale)
	for _, tc := range []struct {
		name    string
		fail    bool
		wantErr bool
	}{
		// the callback's error fails the run, once
		{"write fails", true, true},
		// a callback that succeeds leaves the verdict alone
		{"write succeeds", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := s.config(mixOf(t, []string{"plain-answer"}, optedInNone()), 2, 6)
			cfg.NoLeakCheck, cfg.SnapshotInterval = true, 20*time.Millisecond
			var calls int
			var mu sync.Mutex
			cfg.Outputs = append(cfg.Outputs, SnapshotFunc(func(*measure.Run) error {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if tc.fail {
					return errors.New("disk full")
				}
				return nil
			}))
			run := runLoad(t, cfg)
			reasons := strings.Join(run.Summary.Verdict.Reasons, "; ")
			failed := strings.Contains(reasons, "results were not saved as the run went: snapshot 1, 0s into the run: disk full")
			if failed != tc.wantErr || run.Summary.Verdict.Pass == tc.wantErr {
				t.Errorf("verdict %+v: want the snapshot error named %v", run.Summary.Verdict, tc.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if tc.fail && calls != 1 {
				t.Errorf("%d calls after the first failed, want the snapshots stopped", calls)
			}
			if !tc.fail && calls < 2 {
				t.Errorf("%d calls, want the first and the last at least", calls)
			}
		})
	}
}

// BenchmarkSnapshot measures one snapshot of a recorder holding what a few thousand sessions
// of the default mix leave (every metric of every scenario × dialect key on every shard): the
// collector's part (taking the shards, counters) and the writer's (measure.WriteSnapshot),
// per snapshot, in wall time and in the process's CPU time (which a loaded machine does not
// inflate).
func BenchmarkSnapshot(b *testing.B) {
	m := DefaultMix()
	r := &runner{cfg: Config{Mix: m, MixName: "default", Seed: m.Seed, Target: "http://127.0.0.1:1", RunID: "bench"}, rec: session.NewRecorder(4), start: time.Now()}
	const sessions = 3000
	fill := func() {
		for i := uint64(0); i < sessions; i++ {
			pick := m.Pick(m.Seed, i)
			d := time.Duration(200+i%50) * time.Millisecond
			for metric, v := range map[measure.Metric]time.Duration{
				measure.Connect: time.Millisecond, measure.Headers: d / 4, measure.FirstEvent: d / 2, measure.FirstChunk: d,
				measure.FirstThinking: d / 3, measure.StreamDuration: 10 * d, measure.StartLag: time.Duration(i%300) * time.Microsecond,
				measure.StopLatency: d / 5, measure.ToolCancelSettle: d / 6,
			} {
				r.rec.Record(i, measure.Key{Metric: metric, Scenario: pick.Scenario, Dialect: pick.Profile.Dialect}, v)
			}
			for g := 0; g < 40; g++ {
				r.rec.Record(i, measure.Key{Metric: measure.ChunkGap, Scenario: pick.Scenario, Dialect: pick.Profile.Dialect}, time.Duration(50+g*7+int(i%13))*time.Millisecond)
			}
			r.rec.Started.Add(1)
		}
	}
	fill()
	dir := b.TempDir()
	var collect, write, cpu time.Duration
	b.ResetTimer()
	for b.Loop() {
		fill() // new values in every shard, as between two snapshots
		c0, t0 := processCPUTime(), time.Now()
		snap := r.snapshot(nil, false)
		t1 := time.Now()
		if err := measure.WriteSnapshot(dir, snap); err != nil {
			b.Fatal(err)
		}
		collect += t1.Sub(t0)
		write += time.Since(t1)
		cpu += processCPUTime() - c0
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
	b.ReportMetric(ms(collect), "collect-ms/op")
	b.ReportMetric(ms(write), "write-ms/op")
	b.ReportMetric(ms(cpu), "cpu-ms/op") // the process's CPU for both, GC included
	keys := r.rec.TakeShards().Len()
	b.ReportMetric(ms(cpu)*1000/float64(keys), "cpu-µs/key")
	b.ReportMetric(float64(keys), "keys")
}

// TestSnapshotBackoff: snapshots come on every interval while writing them is quick, less
// often when writing takes more than a tenth of the time, never while one is being written,
// and at least every maxBackoff intervals once the writer is free. (Under synctest the write
// sleeps, so its cost is taken as wall time; a run takes the writer thread's CPU time.)
func TestSnapshotBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cost     time.Duration // how long each write takes
		min, max int           // writes over 10 s of 100 ms intervals
	}{
		// 5 ms of 100: every interval
		{"quick", 5 * time.Millisecond, 100, 100},
		// 50 ms: a tenth of the time means one every 500 ms
		{"slow", 50 * time.Millisecond, 18, 20},
		// 2 s: the writer is busy for 20 intervals; the next comes as soon as it is free,
		// as 20 intervals is more than maxBackoff
		{"very slow", 2 * time.Second, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				writes := 0
				wallTime := func() (time.Duration, bool) { return 0, false } // the fake write sleeps: its cost is wall time
				s := newSnapshotter(func(*measure.Run) error { time.Sleep(tc.cost); writes++; return nil }, 100*time.Millisecond, wallTime)
				build := func() *measure.Run { return &measure.Run{} }
				for range 100 {
					s.offer(build, false)
					time.Sleep(100 * time.Millisecond)
				}
				if err := s.close(); err != nil {
					t.Fatal(err)
				}
				if writes < tc.min || writes > tc.max {
					t.Errorf("%d writes of %s each in 10 s at 100 ms intervals, want %d..%d", writes, tc.cost, tc.min, tc.max)
				}
			})
		})
	}
}

// TestThreadCPU: the writer thread's CPU time grows while it works, not while it sleeps.
func TestThreadCPU(t *testing.T) {
	t.Parallel()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := threadCPU()
	if !ok {
		t.Skip("no thread CPU time here")
	}
	time.Sleep(50 * time.Millisecond)
	c1, _ := threadCPU()
	x := uint64(1)
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; {
		x = x*6364136223846793005 + 1
	}
	c2, _ := threadCPU()
	if slept, worked := c1-c0, c2-c1; slept > 10*time.Millisecond || worked <= 0 || x == 0 {
		t.Errorf("thread CPU %s while sleeping 50 ms, %s while working 30 ms: want ~0, then > 0", slept, worked)
	}
}
