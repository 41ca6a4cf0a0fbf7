package loadgen

import (
	"fmt"

	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// Output takes what a run produces while it runs (Config.Outputs): it implements one or more of
// the *Output interfaces (none: refused); what no output takes costs the run nothing.
type Output interface{}

// SessionEndOutput is called once per measured session as it ends, from its goroutine:
// SessionEnded must be safe for concurrent use and quick.
type SessionEndOutput interface{ SessionEnded(SessionEnd) }

// LateViolationOutput takes a violation found after its session ended (R-abort, from the
// mock's records), from the run's goroutine after every SessionEnded.
type LateViolationOutput interface{ LateViolation(SessionEnd) }

// ProgressOutput is called once a second from the run's collector goroutine.
type ProgressOutput interface{ Progress(Progress) }

// LatencyOutput receives measured sessions' latencies as they reach the histograms, in the
// batches a session flushes. Latencies is called from the session's goroutine: it must be
// safe for concurrent use and quick, and must not keep ChunkGaps.
type LatencyOutput interface{ Latencies(session.Latencies) }

// RecordOutput takes every request as it ends (a session, or a conversation's turn), warm-up
// included, from the session's goroutine: Record must be safe for concurrent use and quick, and
// must not keep the record.
type RecordOutput interface{ Record(*measure.Record) }

// SnapshotOutput receives the results so far, marked incomplete, when the load starts, every
// Config.SnapshotInterval and once drained, so a process killed mid-run leaves them behind.
// Snapshot is called from one goroutine, one at a time (an interval is skipped while one runs
// or when snapshots would take over a tenth of the time); the Run is read-only and its own
// until it returns. An error stops the snapshots and fails the run.
type SnapshotOutput interface{ Snapshot(*measure.Run) error }

// SessionEndFunc is a function as a SessionEndOutput.
type SessionEndFunc func(SessionEnd)

// SessionEnded calls f.
func (f SessionEndFunc) SessionEnded(e SessionEnd) { f(e) }

// ProgressFunc is a function as a ProgressOutput.
type ProgressFunc func(Progress)

// Progress calls f.
func (f ProgressFunc) Progress(p Progress) { f(p) }

// SnapshotFunc is a function as a SnapshotOutput.
type SnapshotFunc func(*measure.Run) error

// Snapshot calls f.
func (f SnapshotFunc) Snapshot(r *measure.Run) error { return f(r) }

// outputs are a run's Outputs by what they take, each one function, nil when none takes it.
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
	out := outputs{
		sessionEnd: fanOut(outs, SessionEndOutput.SessionEnded),
		late:       fanOut(outs, LateViolationOutput.LateViolation),
		progress:   fanOut(outs, ProgressOutput.Progress),
		latencies:  fanOut(outs, LatencyOutput.Latencies),
		records:    fanOut(outs, RecordOutput.Record),
	}
	if snaps := takers[SnapshotOutput](outs); len(snaps) > 0 {
		out.snapshot = func(r *measure.Run) error {
			var first error
			for _, s := range snaps {
				if err := s.Snapshot(r); err != nil && first == nil {
					first = err
				}
			}
			return first
		}
	}
	return out
}

// takers are the outputs of outs that are Ts.
func takers[T any](outs []Output) []T {
	var ts []T
	for _, o := range outs {
		if t, ok := o.(T); ok {
			ts = append(ts, t)
		}
	}
	return ts
}

// fanOut is one function that calls method on each taker in turn; nil for none.
func fanOut[T, V any](outs []Output, method func(T, V)) func(V) {
	ts := takers[T](outs)
	if len(ts) == 0 {
		return nil
	}
	return func(v V) {
		for _, t := range ts {
			method(t, v)
		}
	}
}
