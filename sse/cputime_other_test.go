//go:build !unix

package sse

// processCPUNanos is unavailable on this platform; benchmarks then report wall time only.
func processCPUNanos() (int64, bool) { return 0, false }
