package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/streambench/streambench/loadgen"
)

// jobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index.
const jobIndexEnv = "JOB_COMPLETION_INDEX"

// shardFlags are load's flags for one shard of a sharded run.
type shardFlags struct {
	shard   string
	shards  int
	startAt string
}

func addShardFlags(fs *pflag.FlagSet) *shardFlags {
	s := &shardFlags{}
	fs.StringVar(&s.shard, "shard", "", "play shard INDEX/COUNT (0-based) of a sharded run, e.g. 2/4: closed loop the users u≡INDEX mod COUNT,\n"+
		"open loop every COUNT-th arrival from the INDEX-th, --sessions the indices i≡INDEX mod COUNT; needs --run-id\n"+
		"(or --start-at) shared by every shard; results go to OUT/RUN-ID/shard-INDEX; merge them with streambench merge")
	fs.IntVar(&s.shards, "shards", 0, "the run's shard count, this shard's index from $"+jobIndexEnv+" (as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&s.startAt, "start-at", "", "RFC3339 time to begin at (every shard waits for it); a shard that begins later says by how much\n"+
		"and counts its overdue starts as late")
	return s
}

// apply sets cfg's shard and start time from the flags and getenv (os.Getenv).
func (s *shardFlags) apply(cfg *loadgen.Config, getenv func(string) string) error {
	switch {
	case s.shard != "" && s.shards != 0:
		return usageError("--shard and --shards: give the shard as INDEX/COUNT or its count with $%s, not both", jobIndexEnv)
	case s.shard != "":
		sh, err := loadgen.ParseShard(s.shard)
		if err != nil {
			return usageError("--shard: %v", err)
		}
		cfg.Shard = sh
	case s.shards != 0:
		env := getenv(jobIndexEnv)
		if env == "" {
			return usageError("--shards %d: $%s is not set (a Kubernetes Indexed Job sets it; elsewhere use --shard INDEX/COUNT)", s.shards, jobIndexEnv)
		}
		i, err := strconv.Atoi(env)
		if err != nil {
			return usageError("$%s=%q: want the shard's 0-based index, an integer", jobIndexEnv, env)
		}
		sh := loadgen.Shard{Index: i, Count: s.shards}
		if _, err := loadgen.ParseShard(sh.String()); err != nil {
			return usageError("--shards with $%s: %v", jobIndexEnv, err)
		}
		cfg.Shard = sh
	}
	if s.startAt != "" {
		at, err := time.Parse(time.RFC3339, s.startAt)
		if err != nil {
			return usageError("--start-at %q: want an RFC3339 time such as 2026-12-01T15:00:00Z", s.startAt)
		}
		cfg.StartAt = at
	}
	if cfg.Shard.Sharded() && cfg.RunID == "" && cfg.StartAt.IsZero() {
		return usageError("--shard %s: give --run-id (or --start-at) so every shard's results and session ids belong to one run", cfg.Shard)
	}
	return nil
}

// shardDirName is a shard's directory under OUT/RUN-ID (load --out OUT --shard I/N).
func shardDirName(index int) string { return fmt.Sprintf("shard-%d", index) }
