// Package rxstamp times what a TCP connection reads by when the kernel received it, not by
// when the reader got to it.
//
// A load generator that stamps a frame with time.Now() after its read returns counts its own
// scheduling delay (a goroutine waiting for a P, a thread waiting for a CPU, a GC pause)
// against the target: the busier the generator, the slower the target looks. On Linux, Wrap
// turns on SO_TIMESTAMPNS on the socket and reads with recvmsg(2); the kernel then hands each
// read the time it received the newest segment the read returns (tcp_recvmsg reports the last
// segment's stamp). Arrived gives that time on the reader's monotonic clock.
//
// The kernel's stamp is wall-clock time (CLOCK_REALTIME), and wall clocks step: on the VM this
// was written on something steps it 0.5 ms forward every 100 ms. A stamp converted with the
// wall-to-monotonic offset of the read's return would be 0.5 ms early whenever a step fell
// between the data's arrival and the read. So every read's return also samples that offset
// into one process-wide log of steps (clockSteps), and a stamp is converted with the offset in
// force when it was taken; a step seen between two samples that bracket the arrival is counted
// the way that makes the arrival later, never earlier.
//
// So the time of a read is never before its data arrived (to within the clocks' jitter), and
// Arrived never returns a time after the one it is given. Where no stamp is had (not Linux,
// not TCP, the option refused) Arrived returns its argument unchanged, which is the
// time.Now() the caller would have used. The kernel starts stamping a moment after the first
// socket of the machine asks (a deferred work item), so a process's first reads may carry
// none: such a read is timed when it returned.
package rxstamp

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// stamps is the receive time of a connection's newest read, shared by Linux's Conn and the
// portable fallback. Only the reading goroutine writes it (Conn's Read holds its lock); any
// goroutine may read it without a lock (a stream's reader asks after every read, its idle
// watch now and then).
type stamps struct {
	// at is when the newest read's data arrived, in monotonic ns since clockBase, plus one
	// (0: no read yet; the first read of the process may land at clockBase itself).
	at     atomic.Int64
	kernel atomic.Bool // the newest read's time is the kernel's stamp, not the read's return
}

// maxLag bounds a stamp's distance from the read's return: beyond it the stamp is not used.
const maxLag = time.Minute

// note records a read's stamp k (Unix ns, CLOCK_REALTIME; 0: the read carried none) on the
// monotonic clock. A read without a usable stamp is timed at its return. Times never go back:
// the next read's data may have arrived just before an unstamped read returned, and it is
// timed no earlier, so the times a reader gets from one connection are in the order it read.
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

// latest returns the newest read's arrival, and false when nothing was read yet.
func (s *stamps) latest() (time.Time, bool) {
	at := s.at.Load()
	if at == 0 {
		return time.Time{}, false
	}
	return clockBase.Add(time.Duration(at - 1)), true
}

// arrived returns the newest read's arrival, or now when that is later (or none was read).
func (s *stamps) arrived(now time.Time) time.Time {
	at, ok := s.latest()
	if !ok || now.Before(at) {
		return now
	}
	return at
}

// clockBase is the origin of the monotonic nanoseconds clockSteps keeps.
var clockBase = time.Now()

// steps is the process's log of wall-clock steps, fed by every read.
var steps = newClockSteps(clockBase.UnixNano())

// stepJitter is the largest change in the wall-to-monotonic offset that is not a step: the two
// clocks are read a few nanoseconds apart.
const stepJitter = 10_000 // ns

// A clockStep is a change of the wall clock against the monotonic one by delta ns, seen
// between two samples at monotonic low and high.
type clockStep struct{ low, high, delta int64 }

// clockSteps samples the offset wall − monotonic at every read's return and keeps the latest
// steps, so that a wall-clock stamp can be put on the monotonic clock with the offset that held
// when it was taken. Every read of every connection passes through it, so the usual case (no
// step since the latest sample, none logged after the stamp) takes no lock: the mutex is for
// logging a step and for converting a stamp that a logged step may lie after.
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

// sampleClocks reads the two clocks: monotonic ns since clockBase, and wall − monotonic.
func sampleClocks() (mono, off int64) {
	now := time.Now()
	mono = int64(now.Sub(clockBase))
	return mono, now.UnixNano() - mono
}

// arrival takes the clocks' sample (mono, off) of a read's return and returns the monotonic
// time of the read's wall-clock stamp k (0: none, and false); false also when the log no longer
// reaches back to k.
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

// arrivalLocked is arrival when the sample shows a step, or a logged step may lie after the
// stamp. It samples the clocks again under the lock: a sample taken before a step that another
// reader logged meanwhile would otherwise log the step backwards.
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
	// Walk back from now. A step wholly after the stamp is undone; one wholly before it ends the
	// walk (older ones are older still); one whose window holds the stamp is counted or not,
	// whichever of the two consistent readings times the arrival later.
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
			// The stamp falls in the step's window: the step came before it (a), or after it
			// (a + delta, possible only if that is still before the window's end). The later.
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
