// Package proctest is what the tests of child processes ask the OS about them.
package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Running tells whether process pid is alive: /proc/PID exists and is not a zombie (dead,
// waiting for whoever adopted it to reap it).
func Running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(stat), ") ")
	return ok && !strings.HasPrefix(rest, "Z")
}
