//go:build !linux

package stack

import "syscall"

// ProcAttr is the process attributes of every child the stack starts (StartChild; a caller
// that starts a process of its own uses it too). It puts a child in its own process group (a
// terminal's Ctrl-C reaches only the parent, which drains first and then stops it). Only
// Linux can tie a child's life to its parent's (Pdeathsig): elsewhere a parent killed with
// SIGKILL leaves its children running.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
