//go:build !linux

package stack

import "syscall"

// ProcAttr is the process attributes of every child the stack starts: its own process group (a
// terminal's Ctrl-C reaches only the parent). Only Linux ties a child's life to its parent's.
func ProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
