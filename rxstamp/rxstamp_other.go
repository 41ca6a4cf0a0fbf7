//go:build !linux

package rxstamp

import "net"

// Conn is a connection read with receive timestamps; off Linux Wrap never returns one.
type Conn struct {
	net.Conn
	stamps
}

// Wrap returns c and false: receive timestamps are read on Linux only.
func Wrap(c net.Conn) (net.Conn, bool) { return c, false }
