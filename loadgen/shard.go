package loadgen

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/hrtimer"
)

// Shard is this process's part of a load split over Count processes: shard Index plays the
// sessions and virtual users i ≡ Index (mod Count), and in the open loop every Count-th
// arrival of the whole schedule (ShardPacer). The zero value is an unsharded run.
type Shard struct {
	Index int // 0-based
	Count int
}

// ParseShard reads "I/N" (0 <= I < N).
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT, e.g. 0/4 (0-based index)", s)
	}
	idx, err1 := strconv.Atoi(i)
	cnt, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT as integers, e.g. 0/4", s)
	}
	if cnt < 1 {
		// The zero Shard means "not sharded"; a count given must be one.
		return Shard{}, fmt.Errorf("shard %q: the count must be at least 1", s)
	}
	sh := Shard{Index: idx, Count: cnt}
	return sh, sh.Validate()
}

// Sharded tells whether the run is one shard of several (a 1/1 split is not).
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is the form ParseShard reads.
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Validate says what is wrong with a shard given as values (ParseShard checks its text too).
func (s Shard) Validate() error {
	if s.Count < 0 || (s.Count == 0 && s.Index != 0) {
		return fmt.Errorf("shard %d/%d: the count must be at least 1", s.Index, s.Count)
	}
	if s.Count > 0 && (s.Index < 0 || s.Index >= s.Count) {
		return fmt.Errorf("shard %d/%d: the index must be 0 to %d (0-based)", s.Index, s.Count, s.Count-1)
	}
	return nil
}

// global is the index in the whole run's sequence of this shard's k-th session (or user); an
// unsharded run (index 0, count 0 or 1) is its own sequence.
func (s Shard) global(k uint64) uint64 { return uint64(s.Index) + k*uint64(max(s.Count, 1)) }

// owns is how many of the first n indices of the whole run are this shard's.
func (s Shard) owns(n int) int {
	if n <= s.Index {
		return 0
	}
	return (n-s.Index-1)/max(s.Count, 1) + 1
}

// ShardPacer paces one shard's part of Base: its k-th start is Base's (Index + k·Count)-th.
type ShardPacer struct {
	Base  Pacer
	Shard Shard
}

// Pace implements Pacer.
func (p ShardPacer) Pace(elapsed time.Duration, started uint64) (time.Duration, bool) {
	return p.Base.Pace(elapsed, p.Shard.global(started))
}

// waitStartAt blocks until at and reports how late the caller is past it; false when stop or
// ctx ended the wait. The waiter spins the last stretch, so starts due at once are on time.
func waitStartAt(ctx context.Context, clock *hrtimer.Clock, stop <-chan struct{}, at time.Time) (time.Duration, bool) {
	if late := time.Since(at); late > 0 {
		return late, true
	}
	ended := make(chan struct{}) // stop or ctx, whichever first
	waited := make(chan struct{})
	defer close(waited)
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		case <-waited:
			return
		}
		close(ended)
	}()
	return 0, clock.NewWaiter().UntilSpinning(ended, at, 250*time.Microsecond)
}

// JobIndexEnv is the variable a Kubernetes Indexed Job sets to each pod's completion index.
const JobIndexEnv = "JOB_COMPLETION_INDEX"
