package hrtimer

import (
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// forEachClock runs f in parallel against each kind of Clock every behaviour test covers.
func forEachClock(t *testing.T, f func(t *testing.T, c *Clock)) {
	for _, tc := range []struct {
		name string
		new  func() *Clock
	}{{"precise", New}, {"portable", NewPortable}, {"per-waiter", NewPerWaiter}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f(t, tc.new())
		})
	}
}

// TestUntilNeverWakesEarly has many goroutines wait, repeatedly, for deadlines spread over a
// few milliseconds (some already past), and checks that no wait returns before its deadline,
// that every wait returns, and that the clock lets go of its timer once nothing is pending.
func TestUntilNeverWakesEarly(t *testing.T) {
	t.Parallel()
	forEachClock(t, func(t *testing.T, c *Clock) {
		var wg sync.WaitGroup
		for g := range 200 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(g), 1))
				w := c.NewWaiter()
				for i := range 50 {
					due := time.Now().Add(time.Duration(rng.Int64N(int64(3*time.Millisecond))) - 200*time.Microsecond)
					until := w.Until
					if i%2 == 1 { // every other wait spins its last 300 µs
						until = func(done <-chan struct{}, due time.Time) bool {
							return w.UntilSpinning(done, due, 300*time.Microsecond)
						}
					}
					if !until(nil, due) {
						t.Errorf("Until(nil, due) = false: only a closed done may end a wait")
						return
					}
					if now := time.Now(); now.Before(due) {
						t.Errorf("woke %s before the deadline", due.Sub(now))
						return
					}
				}
			})
		}
		wg.Wait()
		// The alarm lingers for 50 ms with nothing pending, then goes.
		deadline := time.Now().Add(5 * time.Second)
		for {
			c.mu.Lock()
			alarm, pending := c.alarm, len(c.pending)
			c.mu.Unlock()
			if alarm == nil && pending == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("5 s after every wait: alarm %v, %d pending; want both gone", alarm, pending)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// TestUntilReturnsWhenDoneCloses checks that a closed done ends a wait at once, and that a
// waiter whose wait was abandoned still waits its full time on the next deadline (the old
// deadline's wake, arriving later, must not end the new wait early).
func TestUntilReturnsWhenDoneCloses(t *testing.T) {
	t.Parallel()
	forEachClock(t, func(t *testing.T, c *Clock) {
		w := c.NewWaiter()
		done := make(chan struct{})
		time.AfterFunc(5*time.Millisecond, func() { close(done) })
		start := time.Now()
		if w.Until(done, start.Add(time.Hour)) {
			t.Fatal("Until = true for a deadline an hour away")
		}
		if waited := time.Since(start); waited > time.Second {
			t.Fatalf("closing done ended the wait after %s", waited)
		}
		// An abandoned wait whose deadline comes first.
		abandoned := make(chan struct{})
		close(abandoned)
		w.Until(abandoned, time.Now().Add(2*time.Millisecond))
		due := time.Now().Add(20 * time.Millisecond)
		if !w.Until(nil, due) || time.Now().Before(due) {
			t.Fatalf("after an abandoned wait, Until returned before its own deadline")
		}
	})
}

// TestUntilSpinningStopsWhenDoneCloses closes done while the waiter spins.
func TestUntilSpinningStopsWhenDoneCloses(t *testing.T) {
	t.Parallel()
	w := New().NewWaiter()
	done := make(chan struct{})
	time.AfterFunc(2*time.Millisecond, func() { close(done) })
	if w.UntilSpinning(done, time.Now().Add(time.Hour), 2*time.Hour) {
		t.Fatal("UntilSpinning = true for a deadline an hour away")
	}
}

// TestPortableClockKeepsVirtualTime runs the portable and the per-waiter clock inside a
// synctest bubble: every wake lands exactly on its deadline in virtual time, in deadline order.
func TestPortableClockKeepsVirtualTime(t *testing.T) {
	t.Parallel()
	for _, newClock := range []func() *Clock{NewPortable, NewPerWaiter} {
		portableKeepsVirtualTime(t, newClock)
	}
}

func portableKeepsVirtualTime(t *testing.T, newClock func() *Clock) {
	synctest.Test(t, func(t *testing.T) {
		c := newClock()
		start := time.Now()
		offsets := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 10 * time.Millisecond}
		var mu sync.Mutex
		var woke []time.Duration
		var wg sync.WaitGroup
		for _, off := range offsets {
			wg.Go(func() {
				c.NewWaiter().UntilSpinning(nil, start.Add(off), time.Millisecond) // portable: no spin

				mu.Lock()
				woke = append(woke, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
		if len(woke) != len(want) {
			t.Fatalf("woke %v, want %v", woke, want)
		}
		for i := range want {
			if woke[i] != want[i] {
				t.Fatalf("woke at %v, want %v", woke, want)
			}
		}
	})
}

// TestInterruptEndsWaits interrupts a waiter blocked with a nil done (the mock's per-token
// wait, hooked to its request's context by context.AfterFunc): that wait and every later one
// return false, while a waiter nobody interrupts still reaches its deadline.
func TestInterruptEndsWaits(t *testing.T) {
	t.Parallel()
	forEachClock(t, func(t *testing.T, c *Clock) {
		w := c.NewWaiter()
		time.AfterFunc(2*time.Millisecond, w.Interrupt)
		if w.Until(nil, time.Now().Add(time.Hour)) {
			t.Fatal("Until = true for a deadline an hour away")
		}
		if w.Until(nil, time.Now().Add(time.Millisecond)) {
			t.Error("a wait after Interrupt reached its deadline; want false at once")
		}
		w.Interrupt() // again: no effect, no block
		if !c.NewWaiter().Until(nil, time.Now().Add(time.Millisecond)) {
			t.Error("an uninterrupted waiter's wait returned false")
		}
	})
}

// TestInterruptBeforeArming plays the race a per-waiter clock must not lose: an Interrupt that
// lands after a wait checked the flag but before it armed its timer, whose immediate firing
// the arming then overrides. The wait must still end at once, not an hour later.
func TestInterruptBeforeArming(t *testing.T) {
	t.Parallel()
	w := NewPerWaiter().NewWaiter()
	w.Interrupt()
	ended := make(chan bool, 1)
	go func() { ended <- w.timerWait(nil, time.Hour) }()
	select {
	case ok := <-ended:
		if ok {
			t.Fatal("timerWait = true after Interrupt; want false")
		}
	case <-time.After(time.Minute):
		t.Fatal("a wait armed after Interrupt still waits a minute later: the Interrupt was lost")
	}
	// And the wake that Interrupt left in the timer's channel does not end a later wait of a
	// waiter that was not interrupted.
	v := NewPerWaiter().NewWaiter()
	v.timer.Reset(0)
	time.Sleep(time.Millisecond)
	due := time.Now().Add(20 * time.Millisecond)
	if !v.Until(nil, due) || time.Now().Before(due) {
		t.Fatal("a stale firing ended a later wait before its deadline")
	}
}

// TestDeadlinesHeapOrder pushes random deadlines and pops them in order.
func TestDeadlinesHeapOrder(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	var h deadlines
	for range 1000 {
		h.push(deadline{at: time.Duration(rng.IntN(500)) * time.Microsecond})
	}
	prev := time.Duration(-1)
	for len(h) > 0 {
		d := h.pop()
		if d.at < prev {
			t.Fatalf("popped %s after %s", d.at, prev)
		}
		prev = d.at
	}
}
