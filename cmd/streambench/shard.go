package main

import (
	"github.com/spf13/pflag"

	"github.com/streambench/streambench/loadgen"
)

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
	fs.IntVar(&s.shards, "shards", 0, "the run's shard count, this shard's index from $"+loadgen.JobIndexEnv+" (as a Kubernetes Indexed Job sets it)")
	fs.StringVar(&s.startAt, "start-at", "", "RFC3339 time to begin at (every shard waits for it); a shard that begins later says by how much\n"+
		"and counts its overdue starts as late")
	return s
}

// apply sets cfg's shard and start time from the flags and getenv (os.Getenv).
func (s *shardFlags) apply(cfg *loadgen.Config, getenv func(string) string) error {
	sh, at, err := loadgen.ShardFromFlags(s.shard, s.shards, s.startAt, cfg.RunID, getenv)
	if err != nil {
		return usageError("%v", err)
	}
	cfg.Shard, cfg.StartAt = sh, at
	return nil
}
