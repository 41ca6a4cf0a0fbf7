//go:build !linux

package rxstamp

import (
	"net"
	"time"
)

// Conn is a connection read with receive timestamps; off Linux Wrap never returns one.
type Conn struct {
	net.Conn
	stamps
}

// Wrap returns c and false: receive timestamps are read on Linux only.
func Wrap(c net.Conn) (net.Conn, bool) { return c, false }

// Kernel reports false: there are no kernel stamps.
func (c *Conn) Kernel() bool { return false }

// Latest returns false: nothing is stamped.
func (c *Conn) Latest() (time.Time, bool) { return time.Time{}, false }

// Arrived returns now.
func (c *Conn) Arrived(now time.Time) time.Time { return c.arrived(now) }
