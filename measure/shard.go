package measure

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ShardInfo is a shard's place in a sharded run; the summary's config is the whole run's.
type ShardInfo struct {
	Index int `json:"index"` // 0-based
	Count int `json:"count"`
	// StartAt is when every shard was told to start (zero: none); LateBy how late this one was.
	StartAt time.Time     `json:"start_at,omitzero"`
	LateBy  time.Duration `json:"late_by_ns,omitempty"`
}

// ShardFigures are one shard's key figures in a merged run, to tell an odd shard apart.
type ShardFigures struct {
	Index           int           `json:"index"`
	Dir             string        `json:"dir"` // the directory it was read from
	Hostname        string        `json:"hostname,omitempty"`
	Started         time.Time     `json:"started"`
	Ended           time.Time     `json:"ended"`
	LateBy          time.Duration `json:"late_by_ns,omitempty"`
	SessionsStarted int64         `json:"sessions_started"`
	SessionsOK      int64         `json:"sessions_ok"`
	SessionsFailed  int64         `json:"sessions_failed"`
	LateStarts      int64         `json:"late_starts"`
	DroppedStarts   int64         `json:"dropped_starts"`
	Violations      int64         `json:"violations"`
	Errors          int64         `json:"errors"`
	TTFCP99         int64         `json:"ttfc_p99_us"` // over every scenario × dialect
	Pass            bool          `json:"pass"`
}

// PeakStreams is an upper bound of a sharded run's peak open streams: the shards' peaks summed.
func PeakStreams(shards []ShardRun) int64 {
	var peak int64
	for _, s := range shards {
		var shardPeak int64
		for _, p := range s.Run.Timeline {
			shardPeak = max(shardPeak, p.Active)
		}
		peak += shardPeak
	}
	return peak
}

// ReadShards reads and checks each shard directory (CheckShards), letting go of histograms.
func ReadShards(dirs []string) ([]ShardRun, error) {
	var shards []ShardRun
	for _, dir := range dirs {
		r, err := ReadRun(dir)
		if err != nil {
			return nil, err
		}
		r.Histograms = nil
		shards = append(shards, ShardRun{Dir: dir, Run: r})
	}
	if err := CheckShards(shards); err != nil {
		return nil, err
	}
	return shards, nil
}

// CheckMergeOut refuses out for the merge of dirs when it is one of dirs or holds results.
func CheckMergeOut(out string, dirs []string) error {
	ost, err := os.Stat(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &MergeError{Field: "out", Detail: err.Error()}
	}
	absOut, _ := filepath.Abs(out)
	for _, d := range dirs {
		absD, _ := filepath.Abs(d)
		if st, err := os.Stat(d); (err == nil && os.SameFile(st, ost)) || absD == absOut {
			return &MergeError{Field: "out", Detail: fmt.Sprintf("--out %s is the shard directory %s: the merge would write over the shard's results; give a new directory", out, d)}
		}
	}
	if _, err := os.Lstat(filepath.Join(out, SummaryFile)); !errors.Is(err, fs.ErrNotExist) {
		return &MergeError{Field: "out", Detail: fmt.Sprintf("--out %s already holds a run's results (%s): the merge would write over them; give a new directory, or remove it first", out, SummaryFile)}
	}
	return nil
}
