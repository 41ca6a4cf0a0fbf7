package rxstamp

import "testing"

// The offset wall − monotonic is O; the VM this was written on steps the wall clock 0.5 ms
// forward every 100 ms, which these cases replay in nanoseconds.
const (
	offO = int64(1_700_000_000_000_000_000)
	step = int64(500_000)
)

func TestClockStepsNoStepIsPlainConversion(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 1_000, offO, 0)
	if a, ok := at(c, 5_000, offO, offO+4_200); !ok || a != 4_200 {
		t.Errorf("arrival = %d, %v; want 4200, true", a, ok)
	}
	if _, ok := at(c, 6_000, offO, 0); ok {
		t.Error("no stamp must say so")
	}
}

// The stamp was taken before the step, the read returned after it: converting with the
// offset at the return would time it 0.5 ms early.
func TestClockStepsUndoesAStepAfterTheStamp(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 100_000, offO, 0)      // a read returns: offset O
	at(c, 200_000, offO+step, 0) // another: the clock stepped in between
	stamp := offO + 150_000      // an arrival at mono 150 µs, before the step
	a, ok := at(c, 300_000, offO+step, stamp)
	// With the offset at return, 150_000 − 500_000 < 100_000: before the window, so the step came
	// after the stamp and is undone.
	if !ok || a != 150_000 {
		t.Errorf("arrival = %d, %v; want 150000 (the offset before the step)", a, ok)
	}
}

func TestClockStepsKeepsAStepBeforeTheStamp(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 100_000, offO, 0)
	at(c, 200_000, offO+step, 0)
	a, ok := at(c, 400_000, offO+step, offO+step+350_000) // arrived at mono 350 µs
	if !ok || a != 350_000 {
		t.Errorf("arrival = %d, %v; want 350000", a, ok)
	}
}

// A stamp inside the window where a step was seen reads two ways when both are possible; the
// later is taken, so an arrival is never timed early.
func TestClockStepsAmbiguousStampTimedLater(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 100_000, offO, 0)
	at(c, 2_000_000, offO+step, 0) // a wide window: 100 µs .. 2 ms
	// Stamp wall = O + 600 µs. Step before it: mono 100 µs (inside the window, consistent);
	// step after it: mono 600 µs (before the window's end, consistent). The later: 600 µs.
	if a, ok := at(c, 2_100_000, offO+step, offO+600_000); !ok || a != 600_000 {
		t.Errorf("arrival = %d, %v; want 600000", a, ok)
	}
	// Stamp wall = O + 500 µs + 1.9 ms: step-after would be mono 2.4 ms, past the window: only
	// the step-before reading (1.9 ms) is possible.
	if a, ok := at(c, 2_200_000, offO+step, offO+step+1_900_000); !ok || a != 1_900_000 {
		t.Errorf("arrival = %d, %v; want 1900000", a, ok)
	}
}

func TestClockStepsSeveralStepsUndone(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 100_000, offO, 0)
	at(c, 200_000, offO+step, 0)
	at(c, 300_000, offO+2*step, 0)
	at(c, 400_000, offO+3*step, 0)
	// Arrived at mono 50 µs, with offset O; read back at 450 µs after three steps.
	if a, ok := at(c, 450_000, offO+3*step, offO+50_000); !ok || a != 50_000 {
		t.Errorf("arrival = %d, %v; want 50000", a, ok)
	}
}

func TestClockStepsJitterIsNoStep(t *testing.T) {
	c := newClockSteps(offO)
	for i := int64(1); i <= 100; i++ {
		at(c, i*1_000, offO+(i%3-1)*40, 0) // ±40 ns: the two clocks read a moment apart
	}
	if c.n != 0 {
		t.Errorf("%d steps logged from jitter", c.n)
	}
}

// A log that no longer reaches back to the stamp says so rather than guess.
func TestClockStepsBeyondTheLog(t *testing.T) {
	c := newClockSteps(offO)
	off := offO
	for i := int64(1); i <= int64(len(c.ring))+5; i++ {
		off += step
		at(c, i*100_000, off, 0)
	}
	if _, ok := at(c, int64(len(c.ring)+6)*100_000, off, offO+10_000); ok {
		t.Error("a stamp older than every logged step was converted")
	}
	if a, ok := at(c, int64(len(c.ring)+7)*100_000, off, off+int64(len(c.ring)+6)*100_000+50_000); !ok || a != int64(len(c.ring)+6)*100_000+50_000 {
		t.Errorf("a recent stamp: %d, %v", a, ok)
	}
}

// at is arrival on the test's clock: the locked path's own sample is the one given.
func at(c *clockSteps, mono, off, k int64) (int64, bool) {
	c.now = func() (int64, int64) { return mono, off }
	return c.arrival(mono, off, k)
}

// A reader whose sample was taken before a step that another reader has logged since must not
// log the step again backwards: the locked path samples the clocks anew.
func TestClockStepsStaleSampleLogsNoStep(t *testing.T) {
	c := newClockSteps(offO)
	at(c, 100_000, offO, 0)
	at(c, 200_000, offO+step, 0) // logged: one step
	c.now = func() (int64, int64) { return 250_000, offO + step }
	if a, ok := c.arrival(150_000, offO, offO+140_000); !ok || a != 140_000 {
		t.Errorf("stale sample's stamp: %d, %v; want 140000 (before the step, the offset then)", a, ok)
	}
	if c.n != 1 {
		t.Errorf("%d steps logged, want 1: the stale sample logged the step back", c.n)
	}
}
