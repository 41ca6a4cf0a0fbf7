package mockprovider

import (
	"sync"

	"github.com/streambench/streambench/mockrecords"
)

// DefaultSessionHistory is the default Options.SessionHistory: the ring of records overwrites
// the oldest past it, so memory stays bounded (~250 bytes a record plus strings, ~50 MB).
const DefaultSessionHistory = 200_000

// sessionLog is a bounded ring of records; a request updates its slot in place under the lock
// from arrival to end, so in-flight requests are visible too. Safe for concurrent use.
type sessionLog struct {
	mu   sync.Mutex
	size int
	ring []sessionSlot
	next uint64 // records ever added; record seq (1-based) lives at index (seq-1) % size
}

// sessionSlot holds one record and its sequence number (a recycled slot is not written).
type sessionSlot struct {
	seq uint64
	rec mockrecords.Record
}

type sessionRef struct {
	log *sessionLog
	seq uint64
}

func newSessionLog(size int) *sessionLog {
	return &sessionLog{size: size, ring: make([]sessionSlot, 0, min(size, 1024))}
}

func (l *sessionLog) slot(seq uint64) *sessionSlot {
	return &l.ring[(seq-1)%uint64(l.size)]
}

func (l *sessionLog) add(rec mockrecords.Record) sessionRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	if len(l.ring) < l.size {
		l.ring = append(l.ring, sessionSlot{})
	}
	*l.slot(l.next) = sessionSlot{seq: l.next, rec: rec}
	return sessionRef{log: l, seq: l.next}
}

// update applies fn to the record if it is still in the ring.
func (ref sessionRef) update(fn func(*mockrecords.Record)) {
	if ref.log == nil {
		return
	}
	l := ref.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if slot := l.slot(ref.seq); slot.seq == ref.seq {
		fn(&slot.rec)
	}
}

// snapshot returns the records of session (all when session is ""), oldest first.
func (l *sessionLog) snapshot(session string) []mockrecords.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := uint64(1)
	if l.next > uint64(l.size) {
		first = l.next - uint64(l.size) + 1
	}
	out := []mockrecords.Record{} // never nil: the endpoint answers "sessions": [] when none match
	if session == "" {
		out = make([]mockrecords.Record, 0, len(l.ring))
	}
	for seq := first; seq <= l.next; seq++ {
		if slot := l.slot(seq); session == "" || slot.rec.Session == session {
			out = append(out, slot.rec)
		}
	}
	return out
}
