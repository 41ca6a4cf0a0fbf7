package loadgen

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A session is never judged on bytes that were not its response (issue #28, connections).

// strayReply is an unsolicited second response a target sends after a complete one.
const strayReply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 27\r\n\r\nUNSOLICITED second response"

// strayTarget serves the hostile server's unsolicited behaviours and counts, per connection,
// the stray replies sent on it and the requests that came after one.
type strayTarget struct {
	mu     sync.Mutex
	sent   map[net.Conn]bool
	strays atomic.Int64 // stray replies written
	reused atomic.Int64 // requests read on a connection after a stray reply was written on it
}

// unsolicited answers like the hostile server's "ok", then writes strayReply on the same
// connection: in the write of the body's end (delay < 0), in a write of its own right after
// it (0), or delay later; the connection stays open for more requests.
func (st *strayTarget) unsolicited(delay time.Duration) hostileBehaviour {
	return func(s *hostileServer, c net.Conn, final string) bool {
		st.mu.Lock()
		if st.sent[c] {
			st.reused.Add(1)
		}
		st.mu.Unlock()
		writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
		for _, f := range validFrames(final) {
			writeChunk(c, f)
		}
		end := "0\r\n\r\n"
		if delay < 0 {
			end += strayReply
		}
		if _, err := io.WriteString(c, end); err != nil {
			return false
		}
		if delay >= 0 {
			time.Sleep(delay)
			if _, err := io.WriteString(c, strayReply); err != nil {
				return false
			}
		}
		st.mu.Lock()
		st.sent[c] = true
		st.mu.Unlock()
		st.strays.Add(1)
		return true
	}
}

// TestUnsolicitedResponseNeverJudged: a target that sends an unsolicited second response after
// complete ones, next to valid streams from the same host:port, from 10 clients: in the write of
// the body's end (found in the response reader when the body ends), in a write of its own right
// after it (found in the socket then, or before reuse), or 2 ms later (by when the closed loop
// would long have sent its next request on the connection, had it not rested). Every session
// gets its own answer: none fails on the stray's text, no connection that carried a stray is
// reused, and the run warns of the strays.
func TestUnsolicitedResponseNeverJudged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		delay time.Duration
	}{{"in the body's last write", -1}, {"right after", 0}, {"2ms later", 2 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := &strayTarget{sent: map[net.Conn]bool{}}
			srv := startHostileWith(t, map[string]hostileBehaviour{
				"ok":    hostileBehaviours()["ok"],
				"stray": st.unsolicited(tc.delay),
			})
			m := hostileMix(t, []string{"ok", "stray"})
			const sessions = 150
			var ends sessionEnds
			run, err := Run(context.Background(), Config{
				Target: srv.URL(), Mix: m, MixName: "hostile", Clients: 10, Sessions: sessions,
				StreamTimeout: 10 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-", OnSessionEnd: ends.add,
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ends.got {
				txt := fmt.Sprint(e.Err)
				for _, v := range e.Violations {
					txt += "; " + v.Detail
				}
				if strings.Contains(txt, "UNSOLICITED") {
					t.Errorf("session %s (%s) judged on another response's bytes: %.300s", e.Session, e.Target, txt)
				} else if e.Outcome != OutcomeOK {
					t.Errorf("session %s (%s): %v, want ok: %.300s", e.Session, e.Target, e.Outcome, txt)
				}
			}
			if c := run.Summary.Counters; c.SessionsOK != sessions {
				t.Errorf("counters %+v: want %d ok sessions", c, sessions)
			}
			if st.strays.Load() == 0 {
				t.Fatal("the target sent no stray reply")
			}
			if n := st.reused.Load(); n != 0 {
				t.Errorf("%d requests came on connections that had carried a stray reply (of %d strays)", n, st.strays.Load())
			}
			warned := false
			for _, w := range run.Summary.Verdict.Warnings {
				warned = warned || strings.Contains(w, srv.URL()+" sent bytes no request asked for") &&
					strings.Contains(w, `starting "HTTP/1.1 503 Service Unavailable`)
			}
			if !warned {
				t.Errorf("warnings %q: want one naming the target and quoting the stray", run.Summary.Verdict.Warnings)
			}
		})
	}
}
