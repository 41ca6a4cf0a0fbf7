package loadgen

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

// DefaultSnapshotInterval is how often a run hands its SnapshotOutputs its results so far.
const DefaultSnapshotInterval = 2 * time.Second

// snapshotter hands the run's snapshots to its SnapshotOutputs on a goroutine of its own, so a slow
// disk never holds up the timeline; a snapshot (the recorder's taken set itself) is built only while
// the writer is idle, an interval skipped when busy or sooner than maxShare allows (at most maxBackoff).
type snapshotter struct {
	write    func(*measure.Run) error
	interval time.Duration
	cpu      func() (time.Duration, bool)
	todo     chan *measure.Run
	idle     chan struct{} // holds a token while the writer waits for work
	done     chan struct{}

	// Written by the writer before it hands the idle token back.
	err      error // the first write error
	written  int
	lastEnd  time.Time
	lastCost time.Duration // building the last snapshot (wall time) and writing it (CPU time)
	built    time.Duration // how long the snapshot in hand took to build
}

// maxShare bounds the share of time snapshots take; maxBackoff how many intervals that skips.
const (
	maxShare   = 0.1
	maxBackoff = 5
)

// newSnapshotter starts the writer; cpu tells its thread's CPU time (threadCPU).
func newSnapshotter(write func(*measure.Run) error, interval time.Duration, cpu func() (time.Duration, bool)) *snapshotter {
	s := &snapshotter{write: write, interval: interval, cpu: cpu, todo: make(chan *measure.Run), idle: make(chan struct{}, 1), done: make(chan struct{})}
	s.idle <- struct{}{}
	go s.loop()
	return s
}

func (s *snapshotter) loop() {
	defer close(s.done)
	// Its cost is its thread's CPU time: on a loaded machine a write's wall time is mostly
	// waiting for a CPU, which costs the run nothing.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for run := range s.todo {
		if s.err == nil {
			start := time.Now()
			cpu0, ok := s.cpu()
			if err := s.write(run); err != nil {
				at := run.Summary.Ended.Sub(run.Summary.Started).Round(time.Millisecond)
				s.err = fmt.Errorf("snapshot %d, %s into the run: %w", s.written+1, at, err)
			} else {
				s.written++
			}
			cost := time.Since(start)
			if cpu1, ok1 := s.cpu(); ok && ok1 {
				cost = cpu1 - cpu0
			}
			s.lastEnd, s.lastCost = time.Now(), s.built+cost
		}
		s.idle <- struct{}{}
	}
}

// offer builds and hands over a snapshot unless the writer is busy or the last was too recent;
// wait blocks until the writer is idle and skips nothing.
func (s *snapshotter) offer(build func() *measure.Run, wait bool) {
	if wait {
		<-s.idle
	} else {
		select {
		case <-s.idle:
		default:
			return
		}
		pause := min(time.Duration(float64(s.lastCost)/maxShare), maxBackoff*s.interval)
		if since := time.Since(s.lastEnd) + s.lastCost; since < pause {
			s.idle <- struct{}{}
			return
		}
	}
	start := time.Now()
	run := build()
	s.built = time.Since(start)
	s.todo <- run
}

// close waits for the last snapshot to be written and returns the first write error.
func (s *snapshotter) close() error {
	close(s.todo)
	<-s.done
	return s.err
}

// snapshot is the run so far, incomplete, its verdict failing; collector goroutine only.
func (r *runner) snapshot(points []measure.TimelinePoint, interrupted bool) *measure.Run {
	now := time.Now()
	run := &measure.Run{Histograms: r.rec.TakeShards(), Timeline: slices.Clone(points), Samples: r.samples.collected(),
		Summary: r.summary(now, interrupted, nil)}
	// Judged as if finished (the judge refuses snapshots), then marked.
	finished := *run
	run.Summary.Incomplete = true
	var v measure.Verdict
	if res, err := verdict.Judge(&finished, verdict.Config{}); err == nil {
		v = res.Verdict(nil)
	} else {
		v.Reasons = []string{err.Error()}
	}
	v.Pass = false
	v.Reasons = append([]string{fmt.Sprintf("incomplete: a snapshot taken %s into the run, at %s; the run was killed or is still running",
		now.Sub(r.start).Round(time.Second), now.UTC().Format(time.TimeOnly)+" UTC")}, v.Reasons...)
	run.Summary.Verdict = v
	r.redactor.Run(run)
	return run
}
