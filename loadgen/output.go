package loadgen

import (
	"fmt"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// Output takes what a run produces while it runs (Config.Outputs). An output implements one
// or more of SessionEndOutput, LateViolationOutput, ProgressOutput, LatencyOutput,
// RecordOutput and SnapshotOutput; the run works
// out once, at its start, which of them any output takes, so what no output takes costs
// nothing (no SessionEnd is built, no snapshot merged). The run's final results are Run's
// return value, not an output's.
//
// The func types (SessionEndFunc, ProgressFunc, LatencyFunc, SnapshotFunc) make an Output of a
// function. An output that implements none of them is refused (Validate).
type Output interface{}

// SessionEndOutput is called once per measured session as it ends, from the session's
// goroutine: SessionEnded must be safe for concurrent use and quick.
type SessionEndOutput interface{ SessionEnded(SessionEnd) }

// LateViolationOutput takes a violation found after its session ended (R-abort, judged from
// the mock's records once the load drained), so that what counts violations per session
// counts these too; called from the run's goroutine, after every SessionEnded.
type LateViolationOutput interface{ LateViolation(SessionEnd) }

// ProgressOutput is called once a second from the run's collector goroutine.
type ProgressOutput interface{ Progress(Progress) }

// LatencyOutput receives measured sessions' latencies as they reach the run's histograms, for
// live views (Live): chunk gaps in the batches a session already flushes (one call per 8
// chunks, never per frame), and the time to first chunk once, at the session's end. Warmup
// sessions are not passed. Latencies is called from the session's goroutine: it must be safe
// for concurrent use and quick, and must not keep ChunkGaps.
type LatencyOutput interface{ Latencies(session.Latencies) }

// RecordOutput takes every request as it ends (a session, or a conversation's turn), warm-up
// included, from the session's goroutine: Record must be safe for concurrent use and quick, and
// must not keep the record (measure.RecordsWriter queues it for records.jsonl).
type RecordOutput interface{ Record(*measure.Record) }

// SnapshotOutput receives the results so far, marked incomplete (Summary.Incomplete;
// Summary.Metrics left to the reader), when the load starts, every Config.SnapshotInterval
// while it runs and once when it has drained, so that a process killed mid-run leaves them
// behind (measure.WriteSnapshot into the run's directory). Snapshot is called from one
// goroutine, one snapshot at a time, and Run returns after the last call; the Run it gets is
// its own until it returns (shared, read-only, by every SnapshotOutput of the run). An
// interval is skipped when the previous call is still running, or when snapshots would take
// more than a tenth of the time (up to 5 intervals in a row). An error stops the snapshots and
// fails the run (the verdict names it); with several SnapshotOutputs each is called in turn,
// and the first error counts.
type SnapshotOutput interface{ Snapshot(*measure.Run) error }

// SessionEndFunc is a function as a SessionEndOutput.
type SessionEndFunc func(SessionEnd)

// SessionEnded calls f.
func (f SessionEndFunc) SessionEnded(e SessionEnd) { f(e) }

// ProgressFunc is a function as a ProgressOutput.
type ProgressFunc func(Progress)

// Progress calls f.
func (f ProgressFunc) Progress(p Progress) { f(p) }

// LatencyFunc is a function as a LatencyOutput.
type LatencyFunc func(session.Latencies)

// Latencies calls f.
func (f LatencyFunc) Latencies(l session.Latencies) { f(l) }

// SnapshotFunc is a function as a SnapshotOutput.
type SnapshotFunc func(*measure.Run) error

// Snapshot calls f.
func (f SnapshotFunc) Snapshot(r *measure.Run) error { return f(r) }

// outputs are a run's Outputs by what they take, each fanned out into one function, nil when
// no output takes it (the run's fast path: nothing built, nothing called).
type outputs struct {
	sessionEnd func(SessionEnd)
	late       func(SessionEnd)
	progress   func(Progress)
	latencies  func(session.Latencies)
	records    func(*measure.Record)
	snapshot   func(*measure.Run) error
}

// checkOutputs refuses a nil output and one that takes nothing.
func checkOutputs(outs []Output) error {
	for i, o := range outs {
		switch o.(type) {
		case SessionEndOutput, ProgressOutput, LatencyOutput, SnapshotOutput, LateViolationOutput, RecordOutput:
		case nil:
			return fmt.Errorf("Outputs[%d] is nil", i)
		default:
			return fmt.Errorf("Outputs[%d] (%T) takes nothing: it implements none of SessionEndOutput, LateViolationOutput, ProgressOutput, LatencyOutput, RecordOutput, SnapshotOutput", i, o)
		}
	}
	return nil
}

// outputsOf sorts outs by what they take, once, at the run's start.
func outputsOf(outs []Output) outputs {
	var (
		ends  []func(SessionEnd)
		lates []func(SessionEnd)
		progs []func(Progress)
		lats  []func(session.Latencies)
		recs  []func(*measure.Record)
		snaps []func(*measure.Run) error
	)
	for _, o := range outs {
		if x, ok := o.(SessionEndOutput); ok {
			ends = append(ends, x.SessionEnded)
		}
		if x, ok := o.(LateViolationOutput); ok {
			lates = append(lates, x.LateViolation)
		}
		if x, ok := o.(ProgressOutput); ok {
			progs = append(progs, x.Progress)
		}
		if x, ok := o.(LatencyOutput); ok {
			lats = append(lats, x.Latencies)
		}
		if x, ok := o.(RecordOutput); ok {
			recs = append(recs, x.Record)
		}
		if x, ok := o.(SnapshotOutput); ok {
			snaps = append(snaps, x.Snapshot)
		}
	}
	out := outputs{sessionEnd: fanOut(ends), late: fanOut(lates), progress: fanOut(progs), latencies: fanOut(lats), records: fanOut(recs)}
	switch len(snaps) {
	case 0:
	case 1:
		out.snapshot = snaps[0]
	default:
		out.snapshot = func(r *measure.Run) error {
			var first error
			for _, f := range snaps {
				if err := f(r); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
	}
	return out
}

// fanOut is one function that calls each of fns in turn: nil for none (the run's fast path),
// the function itself for one.
func fanOut[V any](fns []func(V)) func(V) {
	switch len(fns) {
	case 0:
		return nil
	case 1:
		return fns[0]
	}
	return func(v V) {
		for _, f := range fns {
			f(v)
		}
	}
}
