package workload

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/loadgen"
)

// Shard are load's flags for one shard of a sharded run.
type Shard struct {
	shard   string
	shards  int
	startAt string
}

// AddShard registers --shard, --shards and --start-at on fs.
func AddShard(fs *pflag.FlagSet) *Shard {
	s := &Shard{}
	fs.StringVar(&s.shard, "shard", "", "play shard INDEX/COUNT (0-based) of a sharded run, e.g. 2/4: closed loop the users u≡INDEX mod COUNT,\n"+
		"open loop every COUNT-th arrival from the INDEX-th, --sessions the indices i≡INDEX mod COUNT; needs --run-id\n"+
		"(or --start-at) shared by every shard; results go to OUT/RUN-ID/shard-INDEX; merge them with streambench merge")
	fs.IntVar(&s.shards, "shards", 0, "the run's shard count, this shard's index from $"+loadgen.JobIndexEnv+" (as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&s.startAt, "start-at", "", "RFC3339 time to begin at (every shard waits for it); a shard that begins later says by how much\n"+
		"and counts its overdue starts as late")
	return s
}

// Apply sets cfg's shard and start time from the flags and getenv (os.Getenv); an error
// names the flag.
func (s *Shard) Apply(cfg *loadgen.Config, getenv func(string) string) error {
	sh, at, err := shardFromFlags(s.shard, s.shards, s.startAt, cfg.RunID, getenv)
	if err != nil {
		return err
	}
	cfg.Shard, cfg.StartAt = sh, at
	return nil
}

// shardFromFlags turns --shard INDEX/COUNT (or --shards COUNT, the index from getenv(loadgen.JobIndexEnv))
// and --start-at (RFC3339) into the shard and start time; a shard needs --run-id (runID) or a start time.
func shardFromFlags(shard string, shards int, startAt, runID string, getenv func(string) string) (loadgen.Shard, time.Time, error) {
	var sh loadgen.Shard
	switch {
	case shard != "" && shards != 0:
		return sh, time.Time{}, fmt.Errorf("--shard and --shards: give the shard as INDEX/COUNT or its count with $%s, not both", loadgen.JobIndexEnv)
	case shard != "":
		s, err := loadgen.ParseShard(shard)
		if err != nil {
			return sh, time.Time{}, fmt.Errorf("--shard: %w", err)
		}
		sh = s
	case shards != 0:
		env := getenv(loadgen.JobIndexEnv)
		if env == "" {
			return sh, time.Time{}, fmt.Errorf("--shards %d: $%s is not set (a Kubernetes Indexed Job sets it; elsewhere use --shard INDEX/COUNT)", shards, loadgen.JobIndexEnv)
		}
		i, err := strconv.Atoi(env)
		if err != nil {
			return sh, time.Time{}, fmt.Errorf("$%s=%q: want the shard's 0-based index, an integer", loadgen.JobIndexEnv, env)
		}
		s := loadgen.Shard{Index: i, Count: shards}
		if err := s.Validate(); err != nil {
			return sh, time.Time{}, fmt.Errorf("--shards with $%s: %w", loadgen.JobIndexEnv, err)
		}
		sh = s
	}
	var at time.Time
	if startAt != "" {
		t, err := time.Parse(time.RFC3339, startAt)
		if err != nil {
			return loadgen.Shard{}, time.Time{}, fmt.Errorf("--start-at %q: want an RFC3339 time such as 2026-12-01T15:00:00Z", startAt)
		}
		at = t
	}
	if sh.Sharded() && runID == "" && at.IsZero() {
		return loadgen.Shard{}, time.Time{}, fmt.Errorf("--shard %s: give --run-id (or --start-at) so every shard's results and session ids belong to one run", sh)
	}
	return sh, at, nil
}
