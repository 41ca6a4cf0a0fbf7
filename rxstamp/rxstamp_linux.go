package rxstamp

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Conn is a TCP connection whose reads record the kernel's receive time of what they return.
// It is safe for concurrent use: Reads take turns, and Latest, Arrived and Kernel never wait
// for a Read ("the newest read" means something only to the goroutine that made it). It has no
// unsafe code: syscall.Recvmsg builds the msghdr from the read's buffer and oob, so the kernel
// writes only within their lengths, and the control data is parsed with bounds-checked slices.
type Conn struct {
	*net.TCPConn
	raw    syscall.RawConn
	readFn func(fd uintptr) bool // c.recvmsg, made once: a closure per read would allocate

	// mu is held for a whole Read: the fields below are that read's, filled by readFn.
	mu      sync.Mutex
	p       []byte
	n, oobn int
	rerr    error
	oob     [64]byte // one SCM_TIMESTAMPNS control message needs 32

	stamps // lock-free for its readers, so Latest never waits for a Read blocked on an idle socket
}

// Wrap returns c with receive timestamps on and true, or c and false when c is not TCP or the
// kernel refused the option.
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

// recvmsg is one attempt of a read (false: wait until readable), run by Read with c.mu held.
func (c *Conn) recvmsg(fd uintptr) bool {
	for {
		// syscall's Recvmsg allocates nothing here, unlike x/sys/unix's (TestReadAllocatesNothing).
		n, oobn, _, _, err := syscall.Recvmsg(int(fd), c.p, c.oob[:], 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			n, oobn = 0, 0
		}
		c.n, c.oobn, c.rerr = n, oobn, err
		return err != syscall.EAGAIN
	}
}

// Read reads like net.TCPConn's Read (*net.OpError errors, io.EOF at the peer's close,
// deadlines and Close apply) and records the stamp of what it read. The TCPConn's ReadFrom and
// WriteTo (io.Copy's splice) bypass it and record nothing.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p, c.n, c.oobn, c.rerr = p, 0, 0, nil
	err := c.raw.Read(c.readFn)
	c.p = nil // the caller's buffer is not kept past the read
	n, rerr, oob := c.n, c.rerr, c.oob[:min(max(c.oobn, 0), len(c.oob))]
	if err != nil || rerr != nil {
		return 0, c.readError(err, rerr)
	}
	if n == 0 {
		return 0, io.EOF
	}
	c.note(timestampNS(oob))
	return n, nil
}

// readError is a failed read's error as net.TCPConn gives it: err from the poller, else rerr.
// It is apart from Read, not inlined, so Read's frame stays small: Read sits under every
// blocked stream, and a deeper parked stack doubles a goroutine's stack (loadgen's runner.stream).
//
//go:noinline
func (c *Conn) readError(err, rerr error) error {
	if err == nil {
		err = os.NewSyscallError("read", rerr) // as net.TCPConn says it
	}
	return &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// timestampNS returns the SCM_TIMESTAMPNS time in oob (Unix ns), 0 when none or malformed.
func timestampNS(oob []byte) int64 {
	// ParseOneSocketControlMessage does not check that a header fits: check here.
	for len(oob) >= unix.CmsgLen(0) {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS {
			return timespecNS(data)
		}
		oob = rest
	}
	return 0
}

// timespecNS decodes a struct timespec of the platform's ABI (two 64- or 32-bit words) to Unix
// ns; 0 for any other length.
func timespecNS(b []byte) int64 {
	switch len(b) {
	case 16:
		sec, nsec := int64(binary.NativeEndian.Uint64(b)), int64(binary.NativeEndian.Uint64(b[8:]))
		return sec*1e9 + nsec
	case 8:
		sec, nsec := int64(int32(binary.NativeEndian.Uint32(b))), int64(int32(binary.NativeEndian.Uint32(b[4:])))
		return sec*1e9 + nsec
	}
	return 0
}
