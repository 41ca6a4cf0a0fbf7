// Package hrtimer wakes goroutines at deadlines with microsecond precision.
//
// When every P is idle the Go runtime sleeps in epoll_wait, whose timeout is whole
// milliseconds, so a process idling between events (a pacer, an open loop) wakes up to 1 ms
// late. A Clock keeps every pending deadline in one heap and arms one Linux timerfd, on Go's
// network poller, for the earliest; the fd's read deadline, a Go timer for the same instant,
// covers the busy case, where timers run more often than the poller. Elsewhere, and in portable
// clocks, Go timers alone pace; a per-waiter clock gives each Waiter a Go timer of its own.
package hrtimer

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Clock wakes Waiters at their deadlines. It is safe for concurrent use and needs no Close:
// while deadlines are pending it holds one alarm, released once none has been for linger.
type Clock struct {
	portable  bool
	perWaiter bool // NewPerWaiter's: the fields below stay unused

	mu        sync.Mutex
	pending   deadlines
	alarm     alarm     // nil while idle
	armedAt   time.Time // when alarm goes off
	lingering bool      // nothing pending: armedAt is when the idle alarm is released
	// epoch is what pending deadlines count from: int64 nanoseconds are half the bytes of a
	// time.Time to move at every sift.
	epoch time.Time
}

// linger is how long a Clock keeps its alarm with nothing pending, so a waiter that waits again
// and again with gaps does not create and close a timerfd each time.
const linger = 50 * time.Millisecond

// alarm calls its clock's fire at the armed time (or soon after).
type alarm interface {
	arm(due time.Time) // replaces any earlier arming
	release()          // stops the alarm for good
}

// New returns a Clock that wakes waiters within microseconds of their deadline on Linux (a
// timerfd), falling back to Go timers where that is unavailable.
func New() *Clock { return &Clock{} }

// NewPerWaiter returns a Clock whose Waiters each wait on a Go timer of their own, so a late
// wake delays only its own waiter: for a process kept busy by thousands of waiters (the mock),
// where a shared alarm is late for its whole batch. It works in synctest, and never spins.
func NewPerWaiter() *Clock { return &Clock{perWaiter: true} }

// NewPortable returns a Clock paced by Go timers only (up to 1 ms late while the process
// idles), for a testing/synctest bubble, where a goroutine blocked on a file descriptor would
// keep virtual time from advancing.
func NewPortable() *Clock { return &Clock{portable: true} }

// NewWaiter returns a Waiter for one goroutine's successive waits.
func (c *Clock) NewWaiter() *Waiter {
	w := &Waiter{clock: c, wake: make(chan struct{}, 1)}
	if c.perWaiter {
		w.timer = time.NewTimer(time.Hour)
		w.timer.Stop()
	}
	return w
}

// add schedules w's wake at due.
func (c *Clock) add(due time.Time, w *Waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.push(c.deadline(due, w))
	c.lingering = false
	if c.alarm == nil {
		c.alarm = c.newAlarm()
	} else if !due.Before(c.armedAt) {
		return // the alarm goes off first; a lingering one then re-arms for due
	}
	c.armedAt = due
	c.alarm.arm(due)
}

// newAlarm returns a timerfd alarm, else (the clock becoming portable for good) a Go timer's.
func (c *Clock) newAlarm() alarm {
	if !c.portable {
		if a, err := newTimerfdAlarm(c); err == nil {
			return a
		}
		c.portable = true
	}
	a := &goTimerAlarm{}
	a.timer = time.AfterFunc(time.Hour, func() { c.fire(a) })
	return a
}

// fire wakes every waiter whose deadline has passed (take) and reports whether a is still the
// clock's alarm. It wakes them after releasing the lock: a wake readies a goroutine (maybe an
// idle thread), and waiters on other Ps adding their next deadline would wait for the batch.
func (c *Clock) fire(a alarm) bool {
	var buf [64]*Waiter
	due, still := c.take(a, buf[:0])
	for _, w := range due {
		select {
		case w.wake <- struct{}{}:
		default: // a wake is already pending: the waiter re-checks the time anyway
		}
	}
	return still
}

// take pops every deadline that has passed into due and re-arms a for the earliest left; with
// none left it lingers, and releases a when it goes off still lingering.
func (c *Clock) take(a alarm, due []*Waiter) ([]*Waiter, bool) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.alarm != a {
		return due, false // released earlier, its last wake raced with that
	}
	for at := now.Sub(c.epoch); len(c.pending) > 0 && c.pending[0].at <= at; {
		due = append(due, c.pending.pop().waiter)
	}
	switch {
	case len(c.pending) > 0:
		c.armedAt = c.epoch.Add(c.pending[0].at)
	case c.lingering:
		c.alarm.release()
		c.alarm, c.armedAt, c.lingering = nil, time.Time{}, false
		return due, false
	default:
		c.lingering = true
		c.armedAt = now.Add(linger)
	}
	c.alarm.arm(c.armedAt)
	return due, true
}

// fallBack replaces a failing alarm a with a Go timer, for good.
func (c *Clock) fallBack(a alarm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.alarm != a {
		return
	}
	a.release()
	c.portable = true
	c.alarm = c.newAlarm()
	c.alarm.arm(c.armedAt)
}

// Waiter is one goroutine's handle on a Clock. It is not safe for concurrent use: one
// goroutine waits on it at a time.
type Waiter struct {
	clock       *Clock
	wake        chan struct{}
	interrupted atomic.Bool // set by Interrupt, for good
	timer       *time.Timer // a per-waiter clock's, nil on the others
}

// Interrupt ends the wait in progress and every later one: they return false. It is safe to
// call from any goroutine, any number of times; given to context.AfterFunc, it lets each wait
// block on the waiter's channel alone (a nil done), cheaper than selecting on ctx at every token.
func (w *Waiter) Interrupt() {
	w.interrupted.Store(true)
	if w.timer != nil {
		// Fires at once; a wait that re-arms the timer after this checks the flag after
		// re-arming (timerWait), so none is lost.
		w.timer.Reset(0)
		return
	}
	select {
	case w.wake <- struct{}{}:
	default: // a wake is already pending: the waiter sees the flag when it takes it
	}
}

// Until blocks until due, until done closes (nil: never) or until Interrupt, and reports
// whether due was reached. A wait abandoned when done closed leaves its deadline pending; when
// it fires later, the next Until finds its own time has not come and waits on.
func (w *Waiter) Until(done <-chan struct{}, due time.Time) bool {
	return w.until(done, due, 0)
}

// UntilSpinning is Until that wakes early by up to spin and yields until due passes, trading
// CPU for the poller's wake latency: for few events that must be on time (open-loop starts).
// Portable and per-waiter clocks do not spin: in synctest a spinning goroutine stops virtual time.
func (w *Waiter) UntilSpinning(done <-chan struct{}, due time.Time, spin time.Duration) bool {
	if w.timer != nil || w.clock.isPortable() {
		spin = 0
	}
	return w.until(done, due, spin)
}

func (w *Waiter) until(done <-chan struct{}, due time.Time, spin time.Duration) bool {
	for {
		if w.interrupted.Load() {
			return false
		}
		left := time.Until(due)
		switch {
		case left <= 0:
			return true
		case left <= spin:
			select {
			case <-done:
				return false
			default:
				runtime.Gosched()
			}
			continue
		}
		if w.timer != nil {
			if !w.timerWait(done, left) {
				return false
			}
			continue
		}
		w.clock.add(due.Add(-spin), w)
		if done == nil {
			<-w.wake
			continue
		}
		select {
		case <-w.wake:
		case <-done:
			return false
		}
	}
}

// timerWait waits on a per-waiter clock's timer for d, false when done closed or Interrupt came.
// The flag is read after arming: an Interrupt whose firing this arming overrode has set it by then.
func (w *Waiter) timerWait(done <-chan struct{}, d time.Duration) bool {
	w.timer.Reset(d)
	if w.interrupted.Load() {
		return false
	}
	if done == nil {
		<-w.timer.C
		return true
	}
	select {
	case <-w.timer.C:
		return true
	case <-done:
		return false
	}
}

func (c *Clock) isPortable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.portable
}

type deadline struct {
	at     time.Duration // from the clock's epoch
	waiter *Waiter
}

// deadline returns the pending wake of w at due. c.mu must be held.
func (c *Clock) deadline(due time.Time, w *Waiter) deadline {
	if c.epoch.IsZero() {
		c.epoch = time.Now()
	}
	return deadline{at: due.Sub(c.epoch), waiter: w}
}

// deadlines is a binary min-heap by due time (not container/heap, which would box every
// deadline in an interface: an allocation per wait).
type deadlines []deadline

func (h *deadlines) push(d deadline) {
	*h = append(*h, d)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if q[i].at >= q[parent].at {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *deadlines) pop() deadline {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q[last] = deadline{}
	q = q[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(q) && q[l].at < q[least].at {
			least = l
		}
		if r < len(q) && q[r].at < q[least].at {
			least = r
		}
		if least == i {
			break
		}
		q[i], q[least] = q[least], q[i]
		i = least
	}
	*h = q
	return top
}

// goTimerAlarm is an alarm on a Go timer.
type goTimerAlarm struct{ timer *time.Timer }

func (a *goTimerAlarm) arm(due time.Time) { a.timer.Reset(time.Until(due)) }
func (a *goTimerAlarm) release()          { a.timer.Stop() }
