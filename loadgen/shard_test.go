package loadgen

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/measure"
)

// schedule lists a pacer's due times (from elapsed 0) until it stops or until the run's
// length, as a generator would reach them.
func schedule(p Pacer, length time.Duration) []time.Duration {
	var out []time.Duration
	for started := uint64(0); ; started++ {
		wait, stop := p.Pace(0, started)
		if stop || wait >= length {
			return out
		}
		out = append(out, wait)
	}
}

// TestShardPacerUnionIsTheSchedule: the shards' schedules, merged, are the single-process
// schedule exactly, whichever base pacer, and shard I makes arrivals I, I+N, …
func TestShardPacerUnionIsTheSchedule(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		base   func() Pacer // a fresh one per shard: a Poisson pacer memoizes
		shards int
		length time.Duration
	}{
		// evenly spaced arrivals, split in four
		{"constant/4", func() Pacer { return ConstantRate{PerSecond: 100} }, 4, 2 * time.Second},
		// a count that does not divide the arrivals: shards differ by one at most
		{"constant/3", func() Pacer { return ConstantRate{PerSecond: 10} }, 3, time.Second + time.Millisecond},
		// seeded Poisson: each shard draws the same intervals as the single process
		{"poisson/4", func() Pacer { return &Poisson{PerSecond: 200, Seed: 7} }, 4, time.Second},
		// a rate ramp that stops by itself
		{"stages/2", func() Pacer { return Stages{{Duration: time.Second, Target: 50}, {Duration: time.Second, Target: 0}} }, 2, time.Hour},
		// one shard is the base itself
		{"constant/1", func() Pacer { return ConstantRate{PerSecond: 30} }, 1, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := schedule(tc.base(), tc.length)
			if len(want) < tc.shards {
				t.Fatalf("the base schedule has %d arrivals: too few to test", len(want))
			}
			var union []time.Duration
			for i := range tc.shards {
				mine := schedule(ShardPacer{Base: tc.base(), Shard: Shard{Index: i, Count: tc.shards}}, tc.length)
				for k, due := range mine {
					if g := i + k*tc.shards; want[g] != due {
						t.Fatalf("shard %d arrival %d at %v, want the base's arrival %d at %v", i, k, due, g, want[g])
					}
				}
				union = append(union, mine...)
			}
			slices.Sort(union)
			if !slices.Equal(union, want) {
				t.Fatalf("union of the shards: %d arrivals, want %d (the single schedule)", len(union), len(want))
			}
		})
	}
}

// TestShardPacerBehind: a shard behind its schedule gets the base's negative wait for its
// arrival, so latency counts from the intended start as in one process.
func TestShardPacerBehind(t *testing.T) {
	t.Parallel()
	p := ShardPacer{Base: ConstantRate{PerSecond: 10}, Shard: Shard{Index: 1, Count: 4}}
	// its 2nd arrival is the base's 9th (1 + 2·4), due at 900 ms
	if wait, stop := p.Pace(time.Second, 2); wait != -100*time.Millisecond || stop {
		t.Fatalf("Pace(1s, 2) = (%v, %v), want (-100ms, false)", wait, stop)
	}
}

func TestParseShard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    Shard
		wantErr bool
	}{
		{"0/4", Shard{0, 4}, false}, // the first of four
		{"3/4", Shard{3, 4}, false}, // the last of four
		{"0/1", Shard{0, 1}, false}, // a single shard is allowed (not Sharded)
		{"4/4", Shard{}, true},      // the index is 0-based: 4 is out of range
		{"-1/4", Shard{}, true},     // negative index
		{"1/0", Shard{}, true},      // no shards
		{"0/0", Shard{}, true},      // no shards either, though 0/0 is the zero (unsharded) Shard
		{"2", Shard{}, true},        // no count
		{"a/b", Shard{}, true},      // not integers
		{"1/4/2", Shard{}, true},    // one slash only
	} {
		got, err := ParseShard(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestShardSplitsIndices: the shards' indices and users partition the run's, each once.
func TestShardSplitsIndices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		count, n int
	}{
		{4, 10}, // uneven: shards 0 and 1 get three, 2 and 3 two
		{4, 3},  // fewer than shards: shard 3 gets none
		{1, 5},  // one shard gets all
		{3, 0},  // nothing to split
	} {
		seen := map[uint64]int{}
		total := 0
		for i := range tc.count {
			sh := Shard{Index: i, Count: tc.count}
			total += sh.owns(tc.n)
			for k := range sh.owns(tc.n) {
				g := sh.global(uint64(k))
				if g >= uint64(tc.n) || int(g)%tc.count != i && tc.count > 1 {
					t.Errorf("%d/%d of %d: index %d is not the shard's", i, tc.count, tc.n, g)
				}
				seen[g]++
			}
		}
		if total != tc.n || len(seen) != tc.n {
			t.Errorf("%d shards of %d: %d owned, %d distinct, want %d", tc.count, tc.n, total, len(seen), tc.n)
		}
	}
}

// sessionIDs runs cfg in memory (inside a synctest bubble) and returns its sessions' ids.
func sessionIDs(t *testing.T, cfg Config) ([]string, *measure.Run) {
	t.Helper()
	var mu sync.Mutex
	var ids []string
	cfg.Clock, cfg.Target, cfg.Transport = hrtimer.NewPortable(), "http://in-memory", handlerTransport{oddSimChat(t)}
	cfg.Mix, cfg.NoLeakCheck, cfg.RuntimeMetricsURL = legacyPlainMix(t), true, "-"
	cfg.Outputs = append(cfg.Outputs, SessionEndFunc(func(e SessionEnd) { mu.Lock(); ids = append(ids, e.Session); mu.Unlock() }))
	run := runLoad(t, cfg)
	slices.Sort(ids)
	return ids, run
}

// TestShardsPartitionTheSessions: four shards of a run play, between them, exactly the
// sessions one process plays (the same ids), each once, in both loops.
func TestShardsPartitionTheSessions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		// closed loop: 6 users over 4 shards (2, 2, 1, 1), a budget of 30 sessions
		{"closed", Config{Clients: 6, Sessions: 30}},
		// open loop: every 4th arrival of 50/s, a budget of 30 sessions
		{"open", Config{Rate: 50, Sessions: 30}},
		// open loop bounded by time: 1 s at 40/s
		{"open-duration", Config{Rate: 40, Duration: time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				single := tc.cfg
				single.RunID = "r"
				want, _ := sessionIDs(t, single)
				var union []string
				for i := range 4 {
					c := tc.cfg
					c.RunID, c.Shard = "r", Shard{Index: i, Count: 4}
					ids, run := sessionIDs(t, c)
					if run.Summary.Shard == nil || run.Summary.Shard.Index != i || run.Summary.Shard.Count != 4 {
						t.Fatalf("shard %d: summary shard %+v", i, run.Summary.Shard)
					}
					union = append(union, ids...)
				}
				slices.Sort(union)
				if len(want) == 0 || !slices.Equal(union, want) {
					t.Fatalf("shards played %d sessions %v\nwant %d %v", len(union), union, len(want), want)
				}
			})
		})
	}
}

// TestStartAt: a run waits for --start-at and starts its schedule there; one that begins
// after it says by how much and counts its overdue starts as late.
func TestStartAt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		at := time.Now().Add(2 * time.Second)
		_, run := sessionIDs(t, Config{RunID: "r", Rate: 20, Sessions: 10, StartAt: at, Shard: Shard{Index: 1, Count: 2}})
		s := run.Summary
		if !s.Started.Equal(at) || s.Counters.LateStarts != 0 || s.Shard.LateBy != 0 || len(s.Verdict.Warnings) != 0 {
			t.Errorf("in time: started %v (want %v), late starts %d, late by %v, warnings %v", s.Started, at, s.Counters.LateStarts, s.Shard.LateBy, s.Verdict.Warnings)
		}

		at = time.Now().Add(-300 * time.Millisecond)
		_, run = sessionIDs(t, Config{RunID: "r", Rate: 20, Sessions: 20, StartAt: at, Shard: Shard{Index: 0, Count: 2}})
		s = run.Summary
		// arrivals 0, 2, 4 (at 0, 100, 200 ms) were already due when it began
		// and they are not taken for an overloaded generator (no second warning)
		if s.Shard.LateBy != 300*time.Millisecond || s.Counters.LateStarts != 3 || len(s.Verdict.Warnings) != 1 ||
			!strings.Contains(s.Verdict.Warnings[0], "started 300ms after --start-at") || !strings.Contains(s.Verdict.Warnings[0], "3 starts already due") {
			t.Errorf("late: late by %v, late starts %d, warnings %q", s.Shard.LateBy, s.Counters.LateStarts, s.Verdict.Warnings)
		}

		_, run = sessionIDs(t, Config{RunID: "r", Clients: 3, Sessions: 6, StartAt: time.Now().Add(-time.Second)})
		// each user's first session is late; a user that claimed none (the budget went to
		// the others first) has none
		if s := run.Summary; s.Counters.LateStarts < 1 || s.Counters.LateStarts > 3 {
			t.Errorf("late closed loop: %d late starts, want one per user that started (1..3)", s.Counters.LateStarts)
		}
	})
}

// TestShardConfig: a sharded run needs a shared run id, from --run-id or the start time.
func TestShardConfig(t *testing.T) {
	t.Parallel()
	base := withDialects(Config{Target: "http://x", Clients: 1, Sessions: 1, Shard: Shard{Index: 0, Count: 2}})
	if _, err := base.withDefaults(); err == nil || !strings.Contains(err.Error(), "run id") {
		t.Errorf("no run id: %v, want an error naming the run id", err)
	}
	c := base
	c.StartAt = time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	if got, err := c.withDefaults(); err != nil || got.RunID != "20261201-150000" {
		t.Errorf("start time: run id %q, %v; want 20261201-150000", got.RunID, err)
	}
	c = base
	c.Shard = Shard{Index: 2, Count: 2}
	if _, err := c.withDefaults(); err == nil || !strings.Contains(err.Error(), "0 to 1") {
		t.Errorf("index out of range: %v", err)
	}
}

// TestShardSnapshotsGoToTheShardDir: a shard's snapshots are written where its final results
// go, OUT/RUN-ID/shard-I, as the run goes; after the run the tree holds that directory alone,
// no summary of its own in OUT/RUN-ID (which shards sharing a volume would write over, and a
// killed shard's partial results with them).
func TestShardSnapshotsGoToTheShardDir(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	shardDir := filepath.Join(out, "r", "shard-1")
	synctest.Test(t, func(t *testing.T) {
		write := measure.SnapshotWriter(out, nil)
		var mu sync.Mutex
		var midRun []string // what each snapshot after the first left in the shard's directory
		snaps := 0
		cfg := Config{RunID: "r", Rate: 20, Sessions: 10, Shard: Shard{Index: 1, Count: 2}, SnapshotInterval: 100 * time.Millisecond}
		cfg.Outputs = append(cfg.Outputs, SnapshotFunc(func(r *measure.Run) error {
			if err := write(r); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			snaps++
			if _, err := os.Stat(filepath.Join(out, "r", measure.SummaryFile)); err == nil {
				t.Errorf("snapshot %d wrote %s/r/%s: want it in %s", snaps, out, measure.SummaryFile, shardDir)
			}
			if s, err := measure.ReadSummary(filepath.Join(shardDir, measure.SummaryFile)); err != nil {
				t.Errorf("snapshot %d: %v", snaps, err)
			} else if snaps > 1 {
				midRun = append(midRun, fmt.Sprintf("incomplete %v, shard %+v, %d sessions", s.Incomplete, s.Shard, s.Counters.SessionsStarted))
			}
			return nil
		}))
		_, run := sessionIDs(t, cfg)
		mu.Lock()
		defer mu.Unlock()
		if len(midRun) == 0 {
			t.Fatalf("%d snapshots: want some after the first", snaps)
		}
		for _, m := range midRun {
			if !strings.HasPrefix(m, "incomplete true, shard &{Index:1 Count:2") {
				t.Errorf("a snapshot in %s: %s, want it incomplete, of shard 1 of 2", shardDir, m)
			}
		}
		// the final write, as load's
		if dir := measure.RunDir(out, &run.Summary); dir != shardDir {
			t.Fatalf("results go to %s, want %s", dir, shardDir)
		}
		if err := measure.WriteRun(shardDir, run); err != nil {
			t.Fatal(err)
		}
	})
	entries, err := os.ReadDir(filepath.Join(out, "r"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"shard-1"}) {
		t.Errorf("%s/r holds %q after the run, want shard-1 alone", out, names)
	}
	if s, err := measure.ReadSummary(filepath.Join(shardDir, measure.SummaryFile)); err != nil || s.Incomplete {
		t.Errorf("shard's summary after the run: %+v, %v; want complete", s, err)
	}
}
