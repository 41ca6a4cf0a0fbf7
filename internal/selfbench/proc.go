package selfbench

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/streambench/streambench/loadgen"
)

// procStatusKiB reads a "Name: N kB" line (VmRSS, VmHWM) of /proc/PID/status (0: this process).
func procStatusKiB(pid int, field string) (int64, error) {
	p := "/proc/self/status"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", p, field, err)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s line", p, field)
}

// userHZ is the unit of /proc/PID/stat's CPU times, 100 on every Linux Go supports.
const userHZ = 100

// procCPU is a process's user+system CPU time from /proc/PID/stat (10 ms resolution), or
// getrusage for 0, this process.
func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return loadgen.ProcessCPU(), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: after its ')', utime (14) and stime (15) are
	// the 12th and 13th fields.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// liveMem is this process's memory in use after a full collection.
type liveMem struct {
	heap, stacks uint64 // live heap bytes; goroutine stack bytes (StackInuse)
}

func (l liveMem) total() uint64 { return l.heap + l.stacks }

// liveMemory is this process's live heap and goroutine stacks after a full collection, the
// part of RSS that scales with open streams (RSS also holds freed pages the runtime has not
// returned yet, and the garbage the heap may grow to before the next collection).
func liveMemory() liveMem {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return liveMem{heap: ms.HeapAlloc, stacks: ms.StackInuse}
}

func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}

// loadAverage is the 1-minute load average ("?" when unreadable).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// cpuTimes are the machine's CPU times from /proc/stat, in USER_HZ ticks: all, and steal (a
// hypervisor running others while this VM's vCPUs wanted to run).
type cpuTimes struct{ total, steal uint64 }

func machineCPU() (t cpuTimes, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return t, false
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice]: guest is counted in
	// user, so the sum stops at steal.
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return t, false
		}
		t.total += v
		if i == 7 {
			t.steal = v
		}
	}
	return t, true
}

func stealShare(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total)
}
