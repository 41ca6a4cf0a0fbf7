//go:build !linux

package stack

import "syscall"

// childAttr puts a child in its own process group (a terminal's Ctrl-C reaches only the
// parent, which drains first and then stops it). Only Linux can tie a child's life to its
// parent's (Pdeathsig): elsewhere a parent killed with SIGKILL leaves its children running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
