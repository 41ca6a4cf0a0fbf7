package stack

import "syscall"

// ProcAttr is the process attributes of every child the stack starts: its own process group (a
// terminal's Ctrl-C reaches only the parent, which drains first and then stops it), killed by
// the kernel when the parent dies however it dies, so no child outlives a killed run.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
