package mockprovider

import (
	"encoding/json"
	"sync"
	"time"
)

// DefaultSessionHistory is how many session records a Server keeps when Options.SessionHistory
// is zero. Records live in a ring that grows with use up to this size and then overwrites the
// oldest, so memory stays bounded (about 250 bytes per record plus its strings, ~50 MB at this
// size) however long the mock runs.
const DefaultSessionHistory = 200_000

// Outcome is how a request to the mock ended.
type Outcome string

// Request outcomes as reported in session records.
const (
	// OutcomeStreaming marks a record whose request is still being served.
	OutcomeStreaming Outcome = "streaming"
	// OutcomeCompleted: the turn was played to its end.
	OutcomeCompleted Outcome = "completed"
	// OutcomeProviderError: the scenario injected a mid-stream provider error.
	OutcomeProviderError Outcome = "provider-error"
	// OutcomeClientCancelled: the client went away before the turn ended.
	OutcomeClientCancelled Outcome = "client-cancelled"
	// OutcomeHTTPError: the request was answered with an HTTP error (bad input, an injected
	// HTTP fault, a full queue).
	OutcomeHTTPError Outcome = "http-error"
)

// SessionRecord is what the mock saw of one request. Times are wall-clock so that other
// processes (the load generator, the runtime) can compare them with their own clocks.
type SessionRecord struct {
	Session        string // the session id from the directive or X-Streambench-Session ("" when unset).
	Scenario       string // the script played, with Seed ("" and 0 when selection failed).
	Seed           uint64
	Wire           string        // "openai", "anthropic" or "openai-responses".
	Turn           int           // the zero-based turn played.
	PromptDigests  []string      // an endpoint request's mockrecords.PromptDigests of its prompt.
	Start          time.Time     // when the request arrived.
	Queued         time.Duration // how long the request waited for a stream slot (capacity model).
	FirstByte      time.Time     // when the first response frame was flushed (zero when none was).
	End            time.Time     // when the mock finished with the request (zero while it is still streaming).
	ClientGone     time.Time     // when the mock noticed the client had gone away (zero when it did not).
	Tokens, Frames int           // count what was sent.
	Outcome        Outcome       // how the request ended.
	Status         int           // the HTTP status answered.
	Error          string        // describes an http-error or provider-error outcome.
	// Child is the swarm child's path when the request was a child agent's (the
	// X-Streambench-Child header); "" for the root conversation.
	Child string
}

// sessionJSON is the wire form of a SessionRecord: RFC3339Nano times, null for unset ones.
type sessionJSON struct {
	Session    string     `json:"session"`
	Scenario   string     `json:"scenario"`
	Seed       uint64     `json:"seed"`
	Wire       string     `json:"wire"`
	Turn       int        `json:"turn"`
	Digests    []string   `json:"promptDigests,omitempty"`
	Start      time.Time  `json:"start"`
	QueuedMs   float64    `json:"queuedMs"`
	FirstByte  *time.Time `json:"firstByte"`
	End        *time.Time `json:"end"`
	ClientGone *time.Time `json:"clientGone"`
	Tokens     int        `json:"tokens"`
	Frames     int        `json:"frames"`
	Outcome    Outcome    `json:"outcome"`
	Status     int        `json:"status"`
	Error      string     `json:"error,omitempty"`
	Child      string     `json:"child,omitempty"`
}

// MarshalJSON writes the record in the documented JSON shape of GET /_streambench/sessions.
func (r SessionRecord) MarshalJSON() ([]byte, error) {
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.Round(0) // wall clock only: the monotonic reading means nothing to other processes
		return &t
	}
	return json.Marshal(sessionJSON{
		Session: r.Session, Scenario: r.Scenario, Seed: r.Seed, Wire: r.Wire, Turn: r.Turn, Digests: r.PromptDigests,
		Start: r.Start.Round(0), QueuedMs: float64(r.Queued) / float64(time.Millisecond),
		FirstByte: opt(r.FirstByte), End: opt(r.End), ClientGone: opt(r.ClientGone),
		Tokens: r.Tokens, Frames: r.Frames, Outcome: r.Outcome, Status: r.Status, Error: r.Error,
		Child: r.Child,
	})
}

// UnmarshalJSON reads the JSON shape MarshalJSON writes, so clients in Go can decode the
// sessions endpoint into SessionRecords.
func (r *SessionRecord) UnmarshalJSON(b []byte) error {
	var j sessionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	val := func(t *time.Time) time.Time {
		if t == nil {
			return time.Time{}
		}
		return *t
	}
	*r = SessionRecord{
		Session: j.Session, Scenario: j.Scenario, Seed: j.Seed, Wire: j.Wire, Turn: j.Turn, PromptDigests: j.Digests,
		Start: j.Start, Queued: time.Duration(j.QueuedMs * float64(time.Millisecond)),
		FirstByte: val(j.FirstByte), End: val(j.End), ClientGone: val(j.ClientGone),
		Tokens: j.Tokens, Frames: j.Frames, Outcome: j.Outcome, Status: j.Status, Error: j.Error,
		Child: j.Child,
	}
	return nil
}

// sessionLog is a bounded ring of records. A request owns a slot from its arrival to its end
// and updates it in place under the lock, so in-flight requests are visible too. The ring
// grows as records arrive up to its size, then overwrites the oldest. Safe for concurrent use.
type sessionLog struct {
	mu   sync.Mutex
	size int
	ring []sessionSlot
	next uint64 // records ever added; record seq (1-based) lives at index (seq-1) % size
}

// sessionSlot holds one record and the sequence number it was added with, so a request whose
// slot was recycled by newer requests (a ring overrun) stops writing to it.
type sessionSlot struct {
	seq uint64
	rec SessionRecord
}

// sessionRef is a request's handle on its record.
type sessionRef struct {
	log *sessionLog
	seq uint64
}

func newSessionLog(size int) *sessionLog {
	return &sessionLog{size: size, ring: make([]sessionSlot, 0, min(size, 1024))}
}

// slot returns the slot of record seq.
func (l *sessionLog) slot(seq uint64) *sessionSlot {
	return &l.ring[(seq-1)%uint64(l.size)]
}

// add stores rec and returns the handle its request updates it through.
func (l *sessionLog) add(rec SessionRecord) sessionRef {
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
func (ref sessionRef) update(fn func(*SessionRecord)) {
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
func (l *sessionLog) snapshot(session string) []SessionRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	first := uint64(1)
	if l.next > uint64(l.size) {
		first = l.next - uint64(l.size) + 1
	}
	out := []SessionRecord{} // never nil: the endpoint answers "sessions": [] when none match
	if session == "" {
		out = make([]SessionRecord, 0, len(l.ring))
	}
	for seq := first; seq <= l.next; seq++ {
		if slot := l.slot(seq); session == "" || slot.rec.Session == session {
			out = append(out, slot.rec)
		}
	}
	return out
}
