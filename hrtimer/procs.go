package hrtimer

import (
	"os"
	"runtime"
)

// SpareProcs raises GOMAXPROCS two above its default, unless the GOMAXPROCS environment
// variable sets it, and returns a function that restores it. A process that keeps time meets
// its deadlines better so: while the thread holding a P is in a system call or descheduled, a
// spare P runs the goroutine whose deadline has come (docs/BENCHMARKS.md, "Timekeeping").
func SpareProcs() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(prev + 2)
	return func() { runtime.GOMAXPROCS(prev) }
}
