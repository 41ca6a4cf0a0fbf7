package hrtimer

import (
	"os"
	"runtime"
)

// SpareProcs raises GOMAXPROCS two above its default, unless the GOMAXPROCS environment
// variable sets it, and returns a function that restores the previous value. Processes that
// keep time — the mock pacing tokens, the load generator starting sessions and timestamping
// frames — meet their deadlines better with a couple of Ps more than CPUs: when the thread
// holding a P is in a system call or descheduled by the OS (on 2 cores, next to the stack's
// other processes), a spare P runs the goroutine whose deadline has come. On this project's
// 2-core machine the mock's self-test pacing p99 went from ~4 ms with 2 Ps to 0.3–0.9 ms with
// 4, for ~10% more CPU per token (docs/BENCHMARKS.md).
func SpareProcs() (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(prev + 2)
	return func() { runtime.GOMAXPROCS(prev) }
}
