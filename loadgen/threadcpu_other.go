//go:build !linux

package loadgen

import "time"

// threadCPU cannot tell a thread's CPU time here: callers fall back to wall time.
func threadCPU() (time.Duration, bool) { return 0, false }
