package measure

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol"
)

// EqualHistograms tells whether a and b hold the same keys with equal histograms (for the
// tests of this package, measure_test's too).
func EqualHistograms(a, b *Histograms) bool {
	return slices.EqualFunc(a.Keys(), b.Keys(), func(x, y Key) bool { return x == y && a.Get(x).Equals(b.Get(y)) })
}

// shardRuns makes count shards of one run with seeded latencies, and the histograms of all
// their values recorded into one set.
func shardRuns(t *testing.T, count int) ([]ShardRun, *Histograms) {
	t.Helper()
	all := NewHistograms()
	start := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var out []ShardRun
	for i := range count {
		rng := rand.New(rand.NewPCG(uint64(i), 99))
		h := NewHistograms()
		for n := range 3000 + 500*i {
			k := Key{Metric: FirstChunk, Scenario: []string{"plain-answer", "tool-loop"}[n%2], Dialect: "sim-chat"}
			d := time.Duration(rng.ExpFloat64()*float64(40*time.Millisecond)) + time.Duration(i)*time.Millisecond
			for _, set := range []*Histograms{h, all} {
				if err := set.Record(k, d); err != nil {
					t.Fatal(err)
				}
			}
		}
		run := &Run{Histograms: h,
			Summary: Summary{Schema: SchemaVersion, RunID: "run-1", Started: start.Add(time.Duration(i) * 100 * time.Millisecond),
				Ended:       start.Add(10 * time.Second),
				Config:      Config{Seed: 7, Mix: "default", Clients: 40, Sessions: 400},
				Environment: Environment{GoVersion: "go1.26.8", GitRevision: "abc", Hostname: "pod-" + string(rune('a'+i))},
				Counters: Counters{SessionsStarted: 100, SessionsOK: 99, SessionsFailed: 1, Frames: 1000, LateStarts: int64(i),
					Outcomes:   map[Outcome]int64{OutcomeCompleted: 99, OutcomeHTTPError: 1},
					HTTPErrors: map[int]int64{503: 1}, FailedByRules: map[string]int64{"R-terminal": 1}},
				Violations: map[protocol.Rule]int64{protocol.RTerminal: 2},
				Shard:      &ShardInfo{Index: i, Count: count},
				Judging:    Judging{FirstErrors: []string{"shard error"}},
				Verdict:    Verdict{Warnings: []string{"late"}}},
			Timeline: []TimelinePoint{{Second: 1, Active: 5, Started: 5}, {Second: 2, Active: 0, Completed: 5, Frames: 50}},
			Samples: []ViolationSample{{Session: "s" + string(rune('0'+i)), Rule: protocol.RTerminal},
				{Session: "t" + string(rune('0'+i)), Rule: protocol.RTerminal}},
		}
		out = append(out, ShardRun{Dir: filepath.Join("shards", "shard-"+string(rune('0'+i))), Run: run})
	}
	return out, all
}

// TestMergeIsLossless: the merged histograms are the histograms of all the values (every
// count and percentile), the counters are the sums, the timeline is summed per second of
// wall clock, samples keep the per-rule bound, and the verdict is judged anew.
func TestMergeIsLossless(t *testing.T) {
	t.Parallel()
	shards, all := shardRuns(t, 4)
	// given out of order: the merge orders by shard index
	shards[0], shards[3] = shards[3], shards[0]
	m, err := Merge(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameHistograms(t, m.Histograms, all)
	s := m.Summary
	c := s.Counters
	if c.SessionsStarted != 400 || c.SessionsOK != 396 || c.LateStarts != 6 || c.HTTPErrors[503] != 4 || c.FailedByRules["R-terminal"] != 4 {
		t.Errorf("counters %+v", c)
	}
	if s.Violations[protocol.RTerminal] != 8 {
		t.Errorf("violations %v, want R-terminal×8", s.Violations)
	}
	if len(m.Samples) != 2 {
		t.Errorf("%d samples, want 2 (the most any shard kept for the rule)", len(m.Samples))
	}
	// shards 0..2 start within the same second (0, 100, 200 ms), shard 3 (300 ms) too: rounded
	if len(m.Timeline) != 2 || m.Timeline[0].Started != 20 || m.Timeline[1].Frames != 200 {
		t.Errorf("timeline %+v", m.Timeline)
	}
	if len(s.Shards) != 4 || s.Shards[0].Index != 0 || s.Shards[3].Hostname != "pod-d" || s.Shards[2].SessionsStarted != 100 {
		t.Errorf("shards %+v", s.Shards)
	}
	// The merge records what the judge quotes (package verdict judges it; cmd merge calls it).
	if s.Violations[protocol.RTerminal] != 8 || len(s.Judging.FirstErrors) != 4 || s.Judging.FirstErrors[0] != "shard error" ||
		len(s.Verdict.Warnings) != 4 || s.Counters.Outcome(OutcomeHTTPError) != 4 {
		t.Errorf("violations %v, judging %+v, warnings %q, outcomes %v", s.Violations, s.Judging, s.Verdict.Warnings, s.Counters.Outcomes)
	}
	if s.Shard != nil || !s.Started.Equal(shards[3].Run.Summary.Started) || s.Environment.Hostname != "pod-a,pod-b,pod-c,pod-d" {
		t.Errorf("summary shard %v started %v hostname %q", s.Shard, s.Started, s.Environment.Hostname)
	}
	// the merged run writes and reads back as any run
	dir := t.TempDir()
	if err := WriteRun(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadRun(dir)
	if err != nil || !EqualHistograms(back.Histograms, all) || len(back.Summary.Shards) != 4 {
		t.Fatalf("read back: %v", err)
	}
}

// sameHistograms fails t unless got holds want's histograms: every count and percentile.
func sameHistograms(t *testing.T, got, want *Histograms) {
	t.Helper()
	if !EqualHistograms(got, want) {
		t.Fatal("merged histograms differ from the histograms of all values")
	}
	for _, k := range want.Keys() {
		g, w := got.Get(k), want.Get(k)
		for _, q := range []float64{50, 90, 99, 99.9, 100} {
			if g.ValueAtQuantile(q) != w.ValueAtQuantile(q) {
				t.Errorf("%s p%g: %d, want %d", k, q, g.ValueAtQuantile(q), w.ValueAtQuantile(q))
			}
		}
		if g.TotalCount() != w.TotalCount() {
			t.Errorf("%s: count %d, want %d", k, g.TotalCount(), w.TotalCount())
		}
	}
}

// TestMergeRefuses: shards that are not one run's are refused, naming the field.
func TestMergeRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func([]ShardRun) []ShardRun
		field string
	}{
		// a shard of another run
		{"run id", func(s []ShardRun) []ShardRun { s[2].Run.Summary.RunID = "run-2"; return s }, "run_id"},
		// another seed
		{"seed", func(s []ShardRun) []ShardRun { s[1].Run.Summary.Config.Seed = 8; return s }, "config.seed"},
		// another mix
		{"mix", func(s []ShardRun) []ShardRun { s[3].Run.Summary.Config.Mix = "mix.yaml"; return s }, "config.mix"},
		// another build of streambench
		{"version", func(s []ShardRun) []ShardRun { s[1].Run.Summary.Environment.GitRevision = "def"; return s }, "environment.git_revision"},
		// another Go
		{"go", func(s []ShardRun) []ShardRun { s[1].Run.Summary.Environment.GoVersion = "go1.25"; return s }, "environment.go_version"},
		// shard 2 of 4 missing
		{"missing", func(s []ShardRun) []ShardRun { return append(s[:2], s[3]) }, "shard 2 of 4 missing"},
		// shard 1 twice
		{"repeated", func(s []ShardRun) []ShardRun { s[2] = s[1]; return s }, "shard 1 given twice"},
		// a run that is no shard
		{"unsharded", func(s []ShardRun) []ShardRun { s[0].Run.Summary.Shard = nil; return s }, "no shard field"},
		// shards of a split into 4 and one into 5
		{"count", func(s []ShardRun) []ShardRun { s[3].Run.Summary.Shard.Count = 5; return s }, "shard.count"},
		// nothing given
		{"none", func([]ShardRun) []ShardRun { return nil }, "no shard directory"},
		// a killed shard's snapshot
		{"incomplete", func(s []ShardRun) []ShardRun { s[2].Run.Summary.Incomplete = true; return s },
			"incomplete: " + filepath.Join("shards", "shard-2") + " (shard 2 of 4)"},
		// what the verdict is judged by: the merged run keeps the first shard's
		{"allow", func(s []ShardRun) []ShardRun {
			s[0].Run.Summary.Config.Allow = []protocol.Rule{protocol.RTerminal}
			return s
		}, "config.allow: " + filepath.Join("shards", "shard-0") + ` has "R-terminal", ` + filepath.Join("shards", "shard-1") + ` has ""`},
		{"thresholds", func(s []ShardRun) []ShardRun {
			s[3].Run.Summary.Config.Thresholds = []string{"violations<10"}
			return s
		}, "config.thresholds"},
		{"goodput slos", func(s []ShardRun) []ShardRun {
			s[1].Run.Summary.Tokens = &TokenSummary{Goodput: Goodput{SLOs: []string{"ttft<500ms"}}}
			return s
		}, "tokens.goodput.slos"},
		{"option", func(s []ShardRun) []ShardRun {
			s[2].Run.Summary.Config.Extra = map[string]string{"option.policy": "all"}
			return s
		}, `config.extra.option.policy: ` + filepath.Join("shards", "shard-0") + ` has none, ` + filepath.Join("shards", "shard-2") + ` has "all"`},
		{"stream timeout", func(s []ShardRun) []ShardRun { s[1].Run.Summary.Judging.StreamTimeout = time.Minute; return s }, "judging.stream_timeout_ns"},
		{"duration", func(s []ShardRun) []ShardRun { s[1].Run.Summary.Config.Duration = time.Minute; return s }, "config.duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			shards, _ := shardRuns(t, 4)
			_, err := Merge(tc.spoil(shards), nil)
			if err == nil || !errors.As(err, new(*MergeError)) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("err = %v, want a refusal naming %q", err, tc.field)
			}
		})
	}
	// the unspoiled shards merge (the refusals above are the spoiling's)
	shards, _ := shardRuns(t, 4)
	if _, err := Merge(shards, nil); err != nil {
		t.Fatal(err)
	}
	// an allow list or thresholds given in another order judge alike
	shards, _ = shardRuns(t, 2)
	shards[0].Run.Summary.Config.Allow = []protocol.Rule{protocol.RTerminal, protocol.RConverge}
	shards[1].Run.Summary.Config.Allow = []protocol.Rule{protocol.RConverge, protocol.RTerminal}
	if m, err := Merge(shards, nil); err != nil || len(m.Summary.Config.Allow) != 2 {
		t.Fatalf("allow lists in two orders: %v", err)
	}
}

// TestMergeLeakCheck: the whole run's leak check goes into the merged run and its verdict; a
// merge without one says the run was not checked.
func TestMergeLeakCheck(t *testing.T) {
	t.Parallel()
	shards, _ := shardRuns(t, 2)
	for i := range shards {
		shards[i].Run.Summary.Violations = nil // a clean run but for the leak
		shards[i].Run.Samples = nil
		shards[i].Run.Summary.Counters = Counters{SessionsStarted: 10, SessionsOK: 10}
	}
	leak := Leak{Source: "runtime", Name: "streams_open", Before: 0, After: 4, Delta: 4}
	m, err := Merge(shards, &MergeLeaks{Leaks: []Leak{leak}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.FailedLeaks() != 1 {
		t.Errorf("leaked: leaks %+v, want the one over its tolerance", m.Summary.Leaks)
	}
	m, err = Merge(shards, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Summary.FailedLeaks() != 0 || len(m.Summary.LeaksNotChecked) != 1 || m.Summary.LeaksNotChecked[0].Source != "run" {
		t.Errorf("unchecked: leaks %+v, not checked %+v", m.Summary.Leaks, m.Summary.LeaksNotChecked)
	}
}

// TestPeakStreams: the shards' timeline peaks add up, whenever each was reached.
func TestPeakStreams(t *testing.T) {
	t.Parallel()
	shard := func(active ...int64) ShardRun {
		r := &Run{}
		for _, a := range active {
			r.Timeline = append(r.Timeline, TimelinePoint{Active: a})
		}
		return ShardRun{Run: r}
	}
	if got := PeakStreams([]ShardRun{shard(1, 5, 2), shard(4, 0), shard()}); got != 9 {
		t.Fatalf("PeakStreams = %d, want 9 (5 + 4 + 0)", got)
	}
}

// TestReadShards: an unreadable directory is an error, and so are no directories at all.
func TestReadShards(t *testing.T) {
	t.Parallel()
	if _, err := ReadShards([]string{filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing shard directory: no error")
	}
	if _, err := ReadShards(nil); err == nil || !strings.Contains(err.Error(), "no shard directory") {
		t.Errorf("no shards: err %v", err)
	}
}

// TestCheckMergeOut: merge writes into a new directory or an empty one, never over a shard's
// directory (however named) or a directory that holds a run.
func TestCheckMergeOut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	shard := filepath.Join(root, "sha", "shard-0")
	run := filepath.Join(root, "old")
	empty := filepath.Join(root, "empty")
	for _, d := range []string{shard, run, empty} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{shard, run} {
		if err := os.WriteFile(filepath.Join(d, SummaryFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(shard, link); err != nil {
		t.Fatal(err)
	}
	dirs := []string{shard, filepath.Join(root, "sha", "shard-1")}
	for _, tc := range []struct {
		out  string
		want string // "" for none
	}{
		{filepath.Join(root, "merged"), ""},
		{empty, ""},
		{shard, "is the shard directory " + shard},
		{filepath.Join(root, "sha", ".", "shard-0") + "/", "is the shard directory " + shard},
		{link, "is the shard directory " + shard},
		{run, "--out " + run + " already holds a run's results"},
	} {
		err := CheckMergeOut(tc.out, dirs)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !errors.As(err, new(*MergeError)) || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("--out %s: %v, want %q", tc.out, err, tc.want)
		}
	}
}

// TestMergeHeapIsBounded: reading and merging 16 shards of a short run's shape (300 keys of 40
// values each, the keys of metric × scenario × dialect a run records) holds memory in
// proportion to the values: under 16 MiB live after the merge (about 3 MiB: the merged run; the
// shards' histograms are read one at a time), and under 640 MiB allocated on the way, which
// bounds the heap's peak (about 420 MiB, nearly all of it the zlib reader the library makes per
// interval, garbage at once, each shard's hlog read twice: checked, then merged). Decoded as
// the library's log reader decodes them, dense, and held together, the shards took 188 KB a
// key: 16 × 300 keys, 965 MB live, 1.2 GB allocated. Not parallel: it reads the process's heap.
func TestMergeHeapIsBounded(t *testing.T) {
	const shards, scenarios, values = 16, 10, 40
	dirs := make([]string, shards)
	for i := range shards {
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		h := NewHistograms()
		for _, m := range AllMetrics()[:15] {
			for s := range scenarios {
				for _, dialect := range []string{"sim-chat", "compose"} {
					k := Key{Metric: m, Scenario: "scenario-" + string(rune('a'+s)), Dialect: dialect}
					for range values {
						_ = h.Record(k, time.Duration(rng.ExpFloat64()*float64(50*time.Millisecond)))
					}
				}
			}
		}
		run := &Run{Histograms: h, Summary: Summary{RunID: "heap", Config: Config{Seed: 1}, Shard: &ShardInfo{Index: i, Count: shards},
			Counters: Counters{SessionsStarted: 10, SessionsOK: 10, Outcomes: map[Outcome]int64{OutcomeCompleted: 10}}}}
		dirs[i] = filepath.Join(t.TempDir(), "shard")
		if err := WriteRun(dirs[i], run); err != nil {
			t.Fatal(err)
		}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	read, err := ReadShards(dirs)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := Merge(read, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	live, allocated := int64(after.HeapAlloc)-int64(before.HeapAlloc), after.TotalAlloc-before.TotalAlloc
	t.Logf("16 shards of %d keys: %.1f MiB live after the merge, %.1f MiB allocated", merged.Histograms.Len(), float64(live)/(1<<20), float64(allocated)/(1<<20))
	if live > 16<<20 || allocated > 640<<20 {
		t.Errorf("merging 16 shards: %d bytes live after, %d allocated; want at most 16 MiB and 640 MiB", live, allocated)
	}
}
