//go:build unix

package sse

import "syscall"

// processCPUNanos returns the CPU time (user+system) this process has used. Benchmarks report
// CPU ns per event next to wall-clock ns/op because CI machines are shared: under contention
// wall time inflates with other processes' load, CPU time much less.
func processCPUNanos() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
