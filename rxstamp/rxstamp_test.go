//go:build linux

package rxstamp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// pair returns a wrapped client connection and the server's end of it.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); srv.Close() })
	w, ok := Wrap(c)
	if !ok {
		if runtime.GOOS != "linux" {
			t.Skip("receive timestamps are read on Linux only")
		}
		t.Fatal("Wrap refused a loopback TCP connection")
	}
	sc := w.(*Conn)
	// The kernel turns receive stamping on a moment after the first socket asks (a deferred
	// work item flips a static key): until then reads carry no stamp. Exchange bytes until one
	// does.
	buf := make([]byte, 8)
	for deadline := time.Now().Add(5 * time.Second); !sc.Kernel(); {
		if time.Now().After(deadline) {
			t.Fatal("no read carried a receive timestamp within 5s")
		}
		if _, err := srv.Write([]byte("w")); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.Read(buf); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	return sc, srv
}

// A read that happens well after its data arrived is timed at the arrival: the reader's delay
// is not counted. Without stamps Arrived would return now, and the test fails.
func TestArrivedIsWhenTheDataCameNotWhenItWasRead(t *testing.T) {
	c, srv := pair(t)
	const late = 80 * time.Millisecond
	sent := time.Now()
	if _, err := srv.Write([]byte("data: one\n\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(late) // the reader is busy elsewhere
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	now := time.Now()
	if err != nil || string(buf[:n]) != "data: one\n\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	at := c.Arrived(now)
	if got := now.Sub(at); got < late-10*time.Millisecond {
		t.Errorf("Arrived is %v before the read returned; the data waited %v in the socket", got, late)
	}
	if at.Before(sent) {
		t.Errorf("Arrived %v before the write (%v)", sent.Sub(at), sent)
	}
	if c.Arrived(at) != at {
		t.Errorf("Arrived(t) for a t before the stamp must be t: never later than it is given")
	}
	// Latest is the same time without a clock read.
	if latest, ok := c.Latest(); !ok || !latest.Equal(at) {
		t.Errorf("Latest = %v, %v; want %v (Arrived's), true", latest, ok, at)
	}
}

// Each read gets its own stamp: two reads, each long after its data came, are each timed
// within their own write, not when they were read. Each write is bracketed by the clock on both
// sides, so a busy machine that stalls the writer widens the bracket instead of failing the test.
func TestEachReadHasItsOwnStamp(t *testing.T) {
	c, srv := pair(t)
	buf := make([]byte, 64)
	const tolerance = time.Millisecond // the stamp is put on the monotonic clock by a sampled offset
	for _, b := range []string{"a", "b"} {
		before := time.Now()
		if _, err := srv.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		time.Sleep(30 * time.Millisecond) // the reader is busy elsewhere
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
		read := time.Now()
		at := c.Arrived(read)
		if at.Before(before.Add(-tolerance)) || at.After(after.Add(tolerance)) {
			t.Errorf("read %q is timed %v after its write began; the write took %v and the read returned %v after it began",
				b, at.Sub(before), after.Sub(before), read.Sub(before))
		}
	}
}

// Errors are net.TCPConn's: io.EOF at the peer's close, a deadline's os.ErrDeadlineExceeded,
// net.ErrClosed after Close, each in a *net.OpError naming the read.
func TestReadErrorsAreTheConnections(t *testing.T) {
	c, srv := pair(t)
	buf := make([]byte, 8)
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Errorf("empty read: %d, %v", n, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(buf)
	var op *net.OpError
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &op) || op.Op != "read" {
		t.Errorf("deadline: %v, want a read *net.OpError with os.ErrDeadlineExceeded", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	_, _ = srv.Write([]byte("xy"))
	srv.Close()
	if n, err := io.ReadFull(c, buf[:2]); n != 2 || err != nil {
		t.Fatalf("read before EOF: %d, %v", n, err)
	}
	if _, err := c.Read(buf); err != io.EOF {
		t.Errorf("after the peer's close: %v, want io.EOF", err)
	}
	c.Close()
	if _, err := c.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Errorf("after Close: %v, want net.ErrClosed", err)
	}
}

// A read blocked on an idle socket returns when another goroutine closes the connection, as
// a net.TCPConn's does (the generator's contexts cancel streams this way).
func TestCloseUnblocksARead(t *testing.T) {
	c, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock the read")
	}
}

// Wrap leaves what is not TCP alone.
func TestWrapRefusesWhatIsNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got, ok := Wrap(a); ok || got != a {
		t.Errorf("Wrap(pipe) = %T, %v; want the pipe itself and false", got, ok)
	}
}

func TestTimestampNSIgnoresMalformedControlData(t *testing.T) {
	for _, oob := range [][]byte{nil, make([]byte, 8), make([]byte, 64)} {
		if k := timestampNS(oob); k != 0 {
			t.Errorf("timestampNS(%d zero bytes) = %d, want 0", len(oob), k)
		}
	}
	junk := make([]byte, 64)
	junk[0] = 0xff // a length past the buffer
	if k := timestampNS(junk); k != 0 {
		t.Errorf("a length past the buffer gave %d", k)
	}
}

// cmsg encodes one control message as the kernel lays it out, padded to its space.
func cmsg(t *testing.T, level, typ int32, data any) []byte {
	t.Helper()
	var d bytes.Buffer
	if err := binary.Write(&d, binary.NativeEndian, data); err != nil {
		t.Fatal(err)
	}
	var h unix.Cmsghdr
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(d.Len()))
	var b bytes.Buffer
	if err := binary.Write(&b, binary.NativeEndian, h); err != nil {
		t.Fatal(err)
	}
	b.Write(make([]byte, unix.CmsgLen(0)-b.Len())) // the header's alignment
	b.Write(d.Bytes())
	b.Write(make([]byte, unix.CmsgSpace(d.Len())-b.Len()))
	return b.Bytes()
}

// The stamp is found behind other control messages, and no prefix of the control data (a
// truncated message) yields anything but 0 or that stamp, or reads past its end.
func TestTimestampNSFindsTheStamp(t *testing.T) {
	ts := unix.NsecToTimespec(1_800_000_000_123_456_789)
	oob := append(cmsg(t, unix.SOL_SOCKET, unix.SCM_RIGHTS, []int32{7}),
		cmsg(t, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS, ts)...)
	if got := timestampNS(oob); got != ts.Nano() {
		t.Fatalf("timestampNS = %d, want %d", got, ts.Nano())
	}
	for n := range len(oob) {
		if got := timestampNS(oob[:n:n]); got != 0 && got != ts.Nano() {
			t.Errorf("timestampNS(first %d of %d bytes) = %d", n, len(oob), got)
		}
	}
	other := cmsg(t, unix.SOL_SOCKET, unix.SCM_TIMESTAMP, unix.NsecToTimeval(ts.Nano()))
	if got := timestampNS(other); got != 0 {
		t.Errorf("an SCM_TIMESTAMP (µs) message read as SCM_TIMESTAMPNS: %d", got)
	}
}

// A stamped read allocates nothing: the generator reads every frame through it. (x/sys/unix's
// Recvmsg would allocate a sockaddr buffer per read; the standard library's does not.)
func TestReadAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c, srv := pair(t)
	msg := []byte("data: x\n\n")
	buf := make([]byte, len(msg))
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := srv.Write(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		_ = c.Arrived(time.Now())
	})
	if allocs != 0 {
		t.Errorf("%v allocations per stamped read, want 0", allocs)
	}
}

// BenchmarkRead is a 64-byte read from a socket kept full, plain against stamped.
func BenchmarkRead(b *testing.B) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				msg := make([]byte, 64)
				for {
					if _, err := c.Write(msg); err != nil {
						return
					}
				}
			}()
		}
	}()
	for _, wrap := range []bool{false, true} {
		name := "plain"
		if wrap {
			name = "stamped"
		}
		b.Run(name, func(b *testing.B) {
			raw, _ := net.Dial("tcp", ln.Addr().String())
			defer raw.Close()
			c := raw
			if wrap {
				c, _ = Wrap(raw)
			}
			buf := make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLatestBeforeAnyRead says nothing is known until a read is noted.
func TestLatestBeforeAnyRead(t *testing.T) {
	var s stamps
	if _, ok := s.Latest(); ok {
		t.Error("latest before any read must say it knows nothing")
	}
	s.note(0)
	if at, ok := s.Latest(); !ok || at.IsZero() {
		t.Errorf("latest after a read without a stamp = %v, %v; want its return, true", at, ok)
	}
}
