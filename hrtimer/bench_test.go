package hrtimer

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// BenchmarkWakeLateness has 200 goroutines each wait for deadlines 0–20 ms ahead, the way
// paced streams do on a mostly idle process, and reports how late they woke (p50, p99, in
// µs) with the precise clock, the portable clock, a per-waiter one (the mock's) and a plain
// time.Timer per goroutine.
// (UntilSpinning is for a few waiters, such as one open-loop scheduler: 200 spinning
// goroutines would starve each other; `streambench bench fidelity` shows its start lag.)
func BenchmarkWakeLateness(b *testing.B) {
	for _, bc := range []struct {
		name string
		wait func(w *Waiter, t *time.Timer, due time.Time)
	}{
		{"precise", func(w *Waiter, _ *time.Timer, due time.Time) { w.Until(nil, due) }},
		{"portable", func(w *Waiter, _ *time.Timer, due time.Time) { w.Until(nil, due) }},
		{"per-waiter", func(w *Waiter, _ *time.Timer, due time.Time) { w.Until(nil, due) }},
		{"time.Timer", func(_ *Waiter, t *time.Timer, due time.Time) { t.Reset(time.Until(due)); <-t.C }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := New()
			switch bc.name { // the others use the precise clock or none
			case "portable":
				c = NewPortable()
			case "per-waiter":
				c = NewPerWaiter()
			}
			late := hdrhistogram.New(1, 10_000_000, 3)
			var mu sync.Mutex
			for b.Loop() {
				var wg sync.WaitGroup
				for g := range 200 {
					wg.Go(func() {
						rng := rand.New(rand.NewPCG(uint64(g), 3))
						w, t := c.NewWaiter(), time.NewTimer(time.Hour)
						local := hdrhistogram.New(1, 10_000_000, 3)
						for range 10 {
							due := time.Now().Add(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))
							bc.wait(w, t, due)
							_ = local.RecordValue(max(1, time.Since(due).Microseconds()))
						}
						mu.Lock()
						late.Merge(local)
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(late.ValueAtQuantile(50)), "late-p50-µs")
			b.ReportMetric(float64(late.ValueAtQuantile(99)), "late-p99-µs")
		})
	}
}

// BenchmarkDeadlines pushes and pops one deadline on a heap of 2,000 pending ones (the mock's
// streams), in the order paced streams add them: each new one about one interval after the
// earliest.
func BenchmarkDeadlines(b *testing.B) {
	c := &Clock{}
	base := time.Now()
	w := c.NewWaiter()
	for i := range 2000 {
		c.pending.push(c.deadline(base.Add(time.Duration(i)*25*time.Microsecond), w))
	}
	next := base.Add(50 * time.Millisecond)
	for b.Loop() {
		c.pending.pop()
		c.pending.push(c.deadline(next, w))
		next = next.Add(25 * time.Microsecond)
	}
}
