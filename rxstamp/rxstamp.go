// Package rxstamp times what a TCP connection reads by when the kernel received it, not by
// when the reader got to it.
//
// A load generator that stamps a frame with time.Now() after its read returns counts its own
// scheduling delay (a goroutine waiting for a P, a thread waiting for a CPU, a GC pause)
// against the target: the busier the generator, the slower the target looks. On Linux, Wrap
// turns on SO_TIMESTAMPNS on the socket and reads with recvmsg(2); the kernel then hands each
// read the time it received the last segment the read returns (for TCP, tcp_recvmsg reports
// the newest segment's stamp). Arrived maps that stamp onto the caller's clock.
//
// The stamp of a read is never earlier than the data it returned arrived, and Arrived never
// returns a time after the one it is given: a frame completed by the newest read is timed at
// that read's arrival (or later), never before its last byte came. Where no stamp is had (not
// Linux, not TCP, a socket option refused, a read that carried no stamp) Arrived returns its
// argument unchanged, which is the time.Now() the caller would have used. The kernel starts
// stamping a moment after the first socket of the machine asks (a deferred work item), so the
// first reads of a process may carry none.
package rxstamp

import (
	"sync/atomic"
	"time"
)

// stamps is the receive time of a connection's newest read, shared by Linux's Conn and the
// portable fallback.
type stamps struct {
	last atomic.Int64 // the kernel's receive time of the newest read (Unix ns, CLOCK_REALTIME); 0 none
}

// maxLag bounds the stamp's distance from now: beyond it (or ahead of now) the wall clock
// stepped between the two, and the stamp is not used.
const maxLag = time.Minute

// arrived returns when the newest read's data arrived, on now's clock (its monotonic
// reading kept): now less the wall-clock distance from the stamp to now.
func (s *stamps) arrived(now time.Time) time.Time {
	k := s.last.Load()
	if k == 0 {
		return now
	}
	lag := time.Duration(now.UnixNano() - k)
	if lag <= 0 || lag > maxLag {
		return now
	}
	return now.Add(-lag)
}
