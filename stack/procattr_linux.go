package stack

import "syscall"

// childAttr puts a child in its own process group (a terminal's Ctrl-C reaches only the
// parent, which drains first and then stops it) and has the kernel kill it when the parent
// dies, however it dies (kill -9 included), so no mock or runtime outlives a killed run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
