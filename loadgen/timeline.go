package loadgen

import (
	"github.com/streambench/streambench/loadgen/session"
	"github.com/streambench/streambench/measure"
)

// timeline samples the counters once per tick into per-second points.
type timeline struct {
	points                                  []measure.TimelinePoint
	started, completed, frames, errs, viols int64
}

func (t *timeline) tick(r *session.Recorder, second int) {
	st, co := r.Started.Load(), r.Completed()
	fr, er, vi := r.Frames.Load(), r.Errors(), r.Violations.Load()
	t.points = append(t.points, measure.TimelinePoint{
		Second: second, Active: r.Active.Load(),
		Started: st - t.started, Completed: co - t.completed, Frames: fr - t.frames,
		Errors: er - t.errs, Violations: vi - t.viols,
	})
	t.started, t.completed, t.frames, t.errs, t.viols = st, co, fr, er, vi
}
