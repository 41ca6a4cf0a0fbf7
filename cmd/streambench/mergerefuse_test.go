package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// writeShards writes the two shards of run "sha" under a temporary OUT/sha/shard-I, each with
// 10 completed sessions, after spoil changes shard i's summary; it returns their directories.
func writeShards(t *testing.T, spoil func(i int, s *measure.Summary)) []string {
	t.Helper()
	out := t.TempDir()
	start := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	var dirs []string
	for i := range 2 {
		h := measure.NewHistograms()
		for n := range 10 {
			if err := h.Record(measure.Key{Metric: measure.FirstChunk, Scenario: "plain-answer", Dialect: "sim-chat"}, time.Duration(50+n)*time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
		run := &measure.Run{Histograms: h, Summary: measure.Summary{
			RunID: "sha", Started: start, Ended: start.Add(4 * time.Second),
			Config:      measure.Config{Seed: 1, Mix: "default", Clients: 10, Duration: 4 * time.Second},
			Environment: measure.Environment{GoVersion: "go1.26", GitRevision: "abc"},
			Counters: measure.Counters{SessionsStarted: 10, SessionsOK: 10, Frames: 100,
				Outcomes: map[measure.Outcome]int64{measure.OutcomeCompleted: 10}},
			Shard: &measure.ShardInfo{Index: i, Count: 2}, Verdict: measure.Verdict{Pass: true},
		}}
		if spoil != nil {
			spoil(i, &run.Summary)
		}
		dir := filepath.Join(out, "sha", fmt.Sprintf("shard-%d", i))
		if err := measure.WriteRun(dir, run); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// mergeExit runs merge with args and returns its exit code and error text.
func mergeExit(args ...string) (int, string) {
	err := mergeMain(append(args, "--no-render"), new(bytes.Buffer))
	if err == nil {
		return exitOK, ""
	}
	return exitCode(err), err.Error()
}

// TestMergeRefusesBadShards: shards merge to one passing run only when they are one finished
// run's; an incomplete shard, or shards judged by different settings (the merged run keeps the
// first shard's config), are bad input (104) naming them, never merged into a passing run.
func TestMergeRefusesBadShards(t *testing.T) {
	t.Parallel()
	dirs := writeShards(t, nil)
	if code, msg := mergeExit(append(dirs, "--out", filepath.Join(t.TempDir(), "m"))...); code != exitOK {
		t.Fatalf("clean shards: exit %d %s, want 0", code, msg)
	}
	for _, tc := range []struct {
		name  string
		spoil func(i int, s *measure.Summary)
		want  func(dirs []string) string // what the refusal must say
	}{
		// shard 1 was killed: its directory holds a snapshot
		{"incomplete", func(i int, s *measure.Summary) {
			if i == 1 {
				s.Incomplete, s.Verdict = true, measure.Verdict{}
			}
		}, func(dirs []string) string { return "incomplete: " + dirs[1] + " (shard 1 of 2)" }},
		// shard 0 ran with --allow R-converge, shard 1 without, against a runtime that breaks
		// R-converge: merged with shard 0's allow list, shard 1's violations passed
		{"allow", func(i int, s *measure.Summary) {
			if i == 0 {
				s.Config.Allow = []protocol.Rule{protocol.RConverge}
			} else {
				s.Violations = map[protocol.Rule]int64{protocol.RConverge: 3}
				s.Counters.SessionsOK, s.Counters.SessionsFailed = 7, 3
				s.Counters.FailedByRules = map[string]int64{string(protocol.RConverge): 3}
				s.Verdict.Pass = false
			}
		}, func(dirs []string) string {
			return fmt.Sprintf(`config.allow: %s has "R-converge", %s has ""`, dirs[0], dirs[1])
		}},
		// a mix threshold in one shard's config only
		{"thresholds", func(i int, s *measure.Summary) {
			if i == 1 {
				s.Config.Thresholds = []string{"ttfc.p99<1ms"}
			}
		}, func([]string) string { return "config.thresholds" }},
		// a goodput SLO in one shard only
		{"goodput slos", func(i int, s *measure.Summary) {
			if i == 1 {
				s.Tokens = &measure.TokenSummary{Goodput: measure.Goodput{SLOs: []string{"ttft<1ms"}}}
			}
		}, func([]string) string { return "tokens.goodput.slos" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dirs := writeShards(t, tc.spoil)
			code, msg := mergeExit(append(dirs, "--out", filepath.Join(t.TempDir(), "m"))...)
			if want := tc.want(dirs); code != exitUsage || !strings.Contains(msg, want) {
				t.Fatalf("exit %d %q, want 104 saying %q", code, msg, want)
			}
		})
	}
}

// TestMergeRefusesOut: --out that is a shard's directory, or already holds a run (an earlier
// merge), is bad input (104) naming it, and the files there are left as they were.
func TestMergeRefusesOut(t *testing.T) {
	t.Parallel()
	dirs := writeShards(t, nil)
	merged := filepath.Join(t.TempDir(), "m")
	if code, msg := mergeExit(append(dirs, "--out", merged)...); code != exitOK {
		t.Fatalf("first merge: exit %d %s", code, msg)
	}
	for _, out := range []string{merged, dirs[1]} {
		summary := filepath.Join(out, measure.SummaryFile)
		before, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		if code, msg := mergeExit(append(dirs, "--out", out)...); code != exitUsage || !strings.Contains(msg, "--out "+out) {
			t.Errorf("--out %s: exit %d %q, want 104 naming it", out, code, msg)
		}
		if after, err := os.ReadFile(summary); err != nil || !bytes.Equal(after, before) {
			t.Errorf("--out %s: its %s changed (%v)", out, measure.SummaryFile, err)
		}
	}
}
