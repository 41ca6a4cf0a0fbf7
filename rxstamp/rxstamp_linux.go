package rxstamp

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is a TCP connection whose reads record the kernel's receive time of what they return.
// One goroutine reads at a time (as net.Conn's readers do), and Arrived is called by the
// goroutine that reads.
type Conn struct {
	*net.TCPConn
	raw syscall.RawConn
	stamps
	// The read in progress, kept here so that the function given to raw.Read is made once,
	// not per read.
	p       []byte
	n, oobn int
	rerr    error
	oob     [64]byte // one SCM_TIMESTAMPNS control message needs 32
	iov     unix.Iovec
	msg     unix.Msghdr // unix.Recvmsg would allocate a sockaddr per read
	readFn  func(fd uintptr) bool
}

// Wrap returns c with receive timestamps on, and true; or c itself and false when c is not a
// TCP connection or the kernel refused the option.
func Wrap(c net.Conn) (net.Conn, bool) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, false
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c, false
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c, false
	}
	sc := &Conn{TCPConn: tc, raw: raw}
	sc.readFn = sc.recvmsg
	return sc, true
}

// Arrived returns when the newest read's data reached this host, on now's clock; now itself
// when that read carried no stamp. Pass time.Now() taken after the read.
func (c *Conn) Arrived(now time.Time) time.Time { return c.arrived(now) }

// Kernel reports whether the newest read was timed by the kernel's stamp (false: at its
// return).
func (c *Conn) Kernel() bool { return c.kernel }

// recvmsg is one attempt of a read; false asks raw.Read to wait until the socket is readable.
func (c *Conn) recvmsg(fd uintptr) bool {
	for {
		c.iov.Base = &c.p[0]
		c.iov.SetLen(len(c.p))
		c.msg = unix.Msghdr{Iov: &c.iov, Control: &c.oob[0]}
		c.msg.SetIovlen(1)
		c.msg.SetControllen(len(c.oob))
		n, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), 0)
		c.n, c.oobn, c.rerr = int(n), int(c.msg.Controllen), nil
		if errno != 0 {
			c.n, c.oobn, c.rerr = 0, 0, errno
		}
		if c.rerr != unix.EINTR {
			break
		}
	}
	return c.rerr != unix.EAGAIN
}

// Read reads like net.TCPConn's Read (its errors are *net.OpError, io.EOF at the peer's close,
// deadlines and Close apply) and records the stamp of what it read. The TCPConn's ReadFrom and
// WriteTo (io.Copy's splice) bypass it and record nothing.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.p = p
	err := c.raw.Read(c.readFn)
	c.p = nil
	n := c.n
	if err == nil && c.rerr != nil {
		err = os.NewSyscallError("read", c.rerr) // as net.TCPConn says it
	}
	if err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.note(timestampNS(c.oob[:c.oobn]))
	return n, nil
}

// timestampNS returns the SCM_TIMESTAMPNS time in oob (Unix ns), 0 when there is none.
func timestampNS(oob []byte) int64 {
	hdr := unix.CmsgLen(0) // the header, aligned: where a message's data starts
	for len(oob) >= hdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len)
		if l < hdr || l > len(oob) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && l-hdr >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&oob[hdr]))
			return ts.Nano()
		}
		next := unix.CmsgSpace(l - hdr)
		if next > len(oob) {
			return 0
		}
		oob = oob[next:]
	}
	return 0
}
