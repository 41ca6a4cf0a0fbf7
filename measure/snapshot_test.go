package measure_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/streambench/streambench/measure"
)

// TestSnapshotThenFinal: a snapshot reads back incomplete, with the metrics its summary.json
// leaves out computed from its histograms; the final write into the same directory replaces
// it and reads back complete.
func TestSnapshotThenFinal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	snap := writeSnapshot(t, dir)
	raw, err := measure.ReadSummary(filepath.Join(dir, measure.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Metrics) != 0 || !raw.Incomplete {
		t.Errorf("snapshot summary.json: %d metrics, incomplete %v; want none (left to the reader) and incomplete", len(raw.Metrics), raw.Incomplete)
	}
	got, err := measure.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Summary.Incomplete || !reflect.DeepEqual(got.Summary.Metrics, snap.Summary.Metrics) || len(got.Timeline) != 2 || len(got.Samples) != 1 {
		t.Errorf("snapshot read back: incomplete %v, metrics %v, %d rows, %d samples; want incomplete, the metrics from its histograms, everything else",
			got.Summary.Incomplete, got.Summary.Metrics, len(got.Timeline), len(got.Samples))
	}

	final := seededRun(t)
	if got = writeRead(t, dir, final); got.Summary.Incomplete || !reflect.DeepEqual(got.Summary.Metrics, final.Summary.Metrics) {
		t.Errorf("final read back incomplete %v: want the final write to replace the snapshot", got.Summary.Incomplete)
	}
}

// writeSnapshot writes a snapshot of seededRun into dir and returns the run.
func writeSnapshot(t *testing.T, dir string) *measure.Run {
	t.Helper()
	snap := seededRun(t)
	snap.Summary.Incomplete = true
	if err := measure.WriteSnapshot(dir, snap); err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestSummaryIsWrittenLast: a write that fails part-way (here at histograms.hlog, which a
// directory stands in the way of) leaves the previous summary.json, so a snapshot's
// "incomplete" is never replaced by a summary whose files are not all there.
func TestSummaryIsWrittenLast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		blocked string
		want    bool // summary still the snapshot's (incomplete)
	}{
		// the histograms cannot be written: the summary is not either
		{"histograms blocked", measure.HistogramsFile, true},
		// the samples cannot be written: nor is the summary
		{"samples blocked", measure.SamplesFile, true},
		// nothing in the way: the final summary replaces the snapshot's
		{"nothing blocked", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeSnapshot(t, dir)
			if tc.blocked != "" {
				path := filepath.Join(dir, tc.blocked)
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			err := measure.WriteRun(dir, seededRun(t))
			if (err != nil) != (tc.blocked != "") {
				t.Fatalf("final write: %v", err)
			}
			s, rerr := measure.ReadSummary(filepath.Join(dir, measure.SummaryFile))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if s.Incomplete != tc.want {
				t.Errorf("after the final write (error %v), summary incomplete %v, want %v", err, s.Incomplete, tc.want)
			}
		})
	}
}

// TestRunDir: an unsharded run's results go to OUT/RUN-ID, a shard's to OUT/RUN-ID/shard-I,
// so the shards of one run on a shared volume do not write over each other.
func TestRunDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		s    measure.Summary
		want string
	}{
		// one process
		{"unsharded", measure.Summary{RunID: "r1"}, filepath.Join("out", "r1")},
		// shard 2 of 4
		{"shard", measure.Summary{RunID: "r1", Shard: &measure.ShardInfo{Index: 2, Count: 4}}, filepath.Join("out", "r1", "shard-2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := measure.RunDir("out", &tc.s); got != tc.want {
				t.Fatalf("RunDir = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNewRunDirIsCompleteWhenSeen: the first write of a run (its first snapshot) appears as a
// whole: a reader watching the parent never sees the run's directory without its summary.json
// (a process killed between making the directory and writing the summary left an empty one
// report could not render), and no temporary directory stays behind.
func TestNewRunDirIsCompleteWhenSeen(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	snap := seededRun(t)
	snap.Summary.Incomplete = true
	const runs = 40
	done := make(chan struct{})
	seenEmpty := make(chan string, runs)
	go func() {
		defer close(seenEmpty)
		for {
			select {
			case <-done:
				return
			default:
			}
			for i := range runs {
				dir := filepath.Join(parent, fmt.Sprint("run-", i))
				if _, err := os.Stat(dir); err != nil {
					continue
				}
				if _, err := os.Stat(filepath.Join(dir, measure.SummaryFile)); err != nil {
					seenEmpty <- dir
					return
				}
			}
		}
	}()
	for i := range runs {
		if err := measure.WriteSnapshot(filepath.Join(parent, fmt.Sprint("run-", i)), snap); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	for dir := range seenEmpty {
		t.Errorf("%s was visible without its %s", dir, measure.SummaryFile)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != runs {
		t.Errorf("%d entries in the parent, want the %d runs and nothing else", len(entries), runs)
	}
	for _, e := range entries {
		if info, err := os.Stat(filepath.Join(parent, e.Name())); err != nil || info.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v (%v), want 0755", e.Name(), info.Mode().Perm(), err)
		}
	}
}
