// Package rxstamp times what a TCP connection reads by when the kernel received it, not by
// when the reader got to it (time.Now() after a read counts the reader's scheduling delay
// against the target). On Linux, Wrap turns on SO_TIMESTAMPNS and reads with recvmsg(2), and
// Arrived gives each read's stamp on the reader's monotonic clock.
//
// The stamp is wall-clock time, and wall clocks step (docs/REFERENCE.md): every read's return
// samples the wall-to-monotonic offset into one process-wide log of steps (clockSteps), and a
// stamp is converted with the offset in force when it was taken; a step between two samples
// bracketing the arrival counts the way that makes the arrival later, never earlier.
//
// So a read's time is never before its data arrived (within the clocks' jitter), nor after the
// time Arrived is given. Without a stamp (not Linux, not TCP, the option refused, the first
// reads) Arrived returns its argument unchanged.
package rxstamp

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// stamps is the receive time of a connection's newest read. Only the reading goroutine writes
// it (Conn's Read holds its lock); any goroutine may read it without a lock.
type stamps struct {
	// at is the newest read's arrival in monotonic ns since clockBase, plus one (0: none; a read may land at clockBase).
	at     atomic.Int64
	kernel atomic.Bool // the newest read's time is the kernel's stamp, not the read's return
}

// maxLag bounds a stamp's distance from the read's return: beyond it the stamp is not used.
const maxLag = time.Minute

// note records a read's stamp k (Unix ns; 0: none, the read is timed at its return) on the
// monotonic clock. Times never go back, so one connection's times are in the order it read.
// Only one goroutine at a time may call it.
func (s *stamps) note(k int64) {
	now := time.Now()
	mono := int64(now.Sub(clockBase))
	a, ok := steps.arrival(mono, now.UnixNano()-mono, k)
	kernel := ok && a <= mono && mono-a <= int64(maxLag)
	t := mono
	if kernel {
		t = a
	}
	s.kernel.Store(kernel)
	if t+1 > s.at.Load() {
		s.at.Store(t + 1)
	}
}

// Latest returns when the newest read's data reached this host (its return where it carried no
// stamp), and false when nothing was read yet: Arrived without a clock read.
func (s *stamps) Latest() (time.Time, bool) {
	at := s.at.Load()
	if at == 0 {
		return time.Time{}, false
	}
	return clockBase.Add(time.Duration(at - 1)), true
}

// Arrived returns when the newest read's data reached this host, on now's clock; now itself
// when that read carried no stamp. Pass time.Now() taken after the read.
func (s *stamps) Arrived(now time.Time) time.Time {
	at, ok := s.Latest()
	if !ok || now.Before(at) {
		return now
	}
	return at
}

// Kernel reports whether the newest read was timed by the kernel's stamp.
func (s *stamps) Kernel() bool { return s.kernel.Load() }

var (
	clockBase = time.Now()                          // the origin of the monotonic ns kept
	steps     = newClockSteps(clockBase.UnixNano()) // the process's log of wall-clock steps
)

// stepJitter is the largest change in the wall-to-monotonic offset that is not a step (ns).
const stepJitter = 10_000

// A clockStep is a change of the wall clock against the monotonic one by delta ns, seen
// between two samples at monotonic low and high.
type clockStep struct{ low, high, delta int64 }

// clockSteps samples the offset wall − monotonic at every read's return and keeps the latest
// steps. The usual case (no step since the latest sample, none logged after the stamp) takes no
// lock: the mutex is for logging a step and converting a stamp a logged step may lie after.
type clockSteps struct {
	off      atomic.Int64 // the offset at the latest sample
	last     atomic.Int64 // the latest sample's monotonic time (a stale, earlier one only widens a step's window)
	stepHigh atomic.Int64 // the newest step's high; stored before off, so a reader that sees an offset sees its step

	mu   sync.Mutex
	now  func() (mono, off int64) // sampleClocks; the tests' own clock
	ring [32]clockStep
	n    int // steps logged, ever; the newest is ring[(n-1)%len]
}

func newClockSteps(off int64) *clockSteps {
	c := &clockSteps{now: sampleClocks}
	c.off.Store(off)
	c.stepHigh.Store(math.MinInt64)
	return c
}

func sampleClocks() (mono, off int64) {
	now := time.Now()
	mono = int64(now.Sub(clockBase))
	return mono, now.UnixNano() - mono
}

// arrival takes the clocks' sample (mono, off) at a read's return and returns the monotonic
// time of its stamp k; false for none (k 0) or when the log no longer reaches back to k.
func (c *clockSteps) arrival(mono, off, k int64) (int64, bool) {
	if d := off - c.off.Load(); d <= stepJitter && d >= -stepJitter {
		c.last.Store(mono)
		if k == 0 {
			return 0, false
		}
		if a := k - off; a > c.stepHigh.Load() {
			return a, true // no step since the latest sample, and none logged after the stamp
		}
	}
	return c.arrivalLocked(k)
}

// arrivalLocked is arrival when the sample shows a step or a logged step may lie after the
// stamp. It samples the clocks again under the lock, lest a sample taken before a step another
// reader logged meanwhile log the step backwards.
func (c *clockSteps) arrivalLocked(k int64) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	mono, off := c.now()
	if d := off - c.off.Load(); d > stepJitter || d < -stepJitter {
		c.ring[c.n%len(c.ring)] = clockStep{low: c.last.Load(), high: mono, delta: d}
		c.n++
		c.stepHigh.Store(mono)
		c.off.Store(off)
	}
	c.last.Store(max(mono, c.last.Load()))
	if k == 0 {
		return 0, false
	}
	// Walk back: a step wholly after the stamp is undone; one wholly before it ends the walk; one
	// whose window holds the stamp counts or not, whichever times the arrival later.
	a, o := k-off, off
	for i := 0; i < min(c.n, len(c.ring)); i++ {
		s := c.ring[(c.n-1-i)%len(c.ring)]
		switch {
		case s.high < a:
			return a, true // this step and every older one came before the stamp
		case s.low >= a:
			o -= s.delta // the whole step came after the stamp: undo it
			a = k - o
		default:
			// The step came before the stamp (a) or after it (a + delta, if still in the window).
			if s.delta > 0 && a+s.delta < s.high {
				a += s.delta
			}
			return a, true
		}
	}
	if c.n > len(c.ring) {
		return 0, false // older steps than the log keeps may lie after the stamp
	}
	return a, true
}
