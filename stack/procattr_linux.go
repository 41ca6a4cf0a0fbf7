package stack

import "syscall"

// ProcAttr is the process attributes of every child the stack starts (StartChild; a caller
// that starts a process of its own uses it too). It puts a child in its own process group (a
// terminal's Ctrl-C reaches only the parent, which drains first and then stops it) and has
// the kernel kill it when the parent dies, however it dies (kill -9 included), so no mock or
// runtime outlives a killed run.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
