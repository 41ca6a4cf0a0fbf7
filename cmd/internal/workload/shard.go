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

// Apply sets cfg's shard from --shard INDEX/COUNT (or --shards COUNT, the index from
// getenv(loadgen.JobIndexEnv), os.Getenv) and its start from --start-at (RFC3339); a shard needs
// --run-id or a start time. An error names the flag.
func (s *Shard) Apply(cfg *loadgen.Config, getenv func(string) string) error {
	var sh loadgen.Shard
	var err error
	switch {
	case s.shard != "" && s.shards != 0:
		return fmt.Errorf("--shard and --shards: give the shard as INDEX/COUNT or its count with $%s, not both", loadgen.JobIndexEnv)
	case s.shard != "":
		if sh, err = loadgen.ParseShard(s.shard); err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
	case s.shards != 0:
		env := getenv(loadgen.JobIndexEnv)
		if env == "" {
			return fmt.Errorf("--shards %d: $%s is not set (a Kubernetes Indexed Job sets it; elsewhere use --shard INDEX/COUNT)", s.shards, loadgen.JobIndexEnv)
		}
		i, err := strconv.Atoi(env)
		if err != nil {
			return fmt.Errorf("$%s=%q: want the shard's 0-based index, an integer", loadgen.JobIndexEnv, env)
		}
		sh = loadgen.Shard{Index: i, Count: s.shards}
		if err := sh.Validate(); err != nil {
			return fmt.Errorf("--shards with $%s: %w", loadgen.JobIndexEnv, err)
		}
	}
	var at time.Time
	if s.startAt != "" {
		if at, err = time.Parse(time.RFC3339, s.startAt); err != nil {
			return fmt.Errorf("--start-at %q: want an RFC3339 time such as 2026-12-01T15:00:00Z", s.startAt)
		}
	}
	if sh.Sharded() && cfg.RunID == "" && at.IsZero() {
		return fmt.Errorf("--shard %s: give --run-id (or --start-at) so every shard's results and session ids belong to one run", sh)
	}
	cfg.Shard, cfg.StartAt = sh, at
	return nil
}
