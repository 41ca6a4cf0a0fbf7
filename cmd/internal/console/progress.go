// Package console is a run's live console for load, run and sweep: its progress, the
// scenario × dialect tally its summary prints, its live metrics' address, and Ctrl-C.
package console

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/streambench/streambench/loadgen"
)

// Progress shows a live run's progress (loadgen.Progress): mpb bars on a terminal, a
// plain line every 5 s otherwise (logs, CI). Safe for concurrent use.
type Progress struct {
	w    io.Writer
	tty  bool
	p    *mpb.Progress
	bar  *mpb.Bar
	mu   sync.Mutex
	last loadgen.Progress
}

// NewProgress returns a view writing to f.
func NewProgress(f *os.File) *Progress {
	st, err := f.Stat() // a terminal, where bars can redraw
	v := &Progress{w: f, tty: err == nil && st.Mode()&os.ModeCharDevice != 0}
	if v.tty {
		v.p = mpb.New(mpb.WithOutput(f), mpb.WithWidth(30), mpb.WithRefreshRate(250*time.Millisecond))
		locked := func(show func() string) func(decor.Statistics) string {
			return func(decor.Statistics) string {
				v.mu.Lock()
				defer v.mu.Unlock()
				return show()
			}
		}
		elapsed := func() string { return fmt.Sprintf("%s/%s", v.last.Elapsed, v.last.Planned) }
		v.bar = v.p.AddBar(100, mpb.PrependDecorators(decor.Any(locked(elapsed), decor.WC{W: 12})),
			mpb.AppendDecorators(decor.Any(locked(v.describe))))
	}
	return v
}

func (v *Progress) describe() string {
	p := v.last
	s := fmt.Sprintf("active %d  sessions %d/%d  errors %d  violations %d", p.Active, p.Completed, p.Started, p.Errors, p.Violations)
	if p.Draining {
		s += "  (draining)"
	}
	return s
}

// Update takes the run's progress: it moves the bar, or prints a line every 5 s.
func (v *Progress) Update(p loadgen.Progress) {
	v.mu.Lock()
	v.last = p
	line := v.describe()
	v.mu.Unlock()
	if v.tty {
		pct := int64(0)
		switch {
		case p.Planned > 0:
			pct = int64(100 * p.Elapsed / p.Planned)
		case p.PlannedSessions > 0:
			pct = 100 * p.Started / p.PlannedSessions
		}
		v.bar.SetCurrent(min(pct, 99))
		return
	}
	if int(p.Elapsed/time.Second)%5 == 0 {
		fmt.Fprintf(v.w, "[%s] %s\n", p.Elapsed, line)
	}
}

// Close completes the bar and waits for its last redraw.
func (v *Progress) Close() {
	if v.tty {
		v.bar.SetTotal(-1, true)
		v.p.Wait()
	}
}
