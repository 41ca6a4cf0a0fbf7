package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
)

// A session is never judged on bytes that were not its response (issue #28, connections).

// strayReply is an unsolicited second response a target sends after a complete one.
const strayReply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 27\r\n\r\nUNSOLICITED second response"

// lateStray is half the transport's rest before reuse (transport's connSettle, 50 ms).
const lateStray = 25 * time.Millisecond

// strayTarget serves the hostile server's unsolicited behaviours and counts, per connection,
// the stray replies sent on it and the requests that came after one.
type strayTarget struct {
	mu     sync.Mutex
	sent   map[net.Conn]bool
	strays atomic.Int64 // stray replies written
	reused atomic.Int64 // requests read on a connection after a stray reply was written on it
	// late counts strays written more than half the transport's rest after their response:
	// a machine too busy to wake the writer on time, which no client can tell from the next answer.
	late atomic.Int64
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
			ended := time.Now()
			time.Sleep(delay)
			_, err := io.WriteString(c, strayReply)
			if time.Since(ended) > lateStray { // written, so possibly read, that late
				st.late.Add(1)
			}
			if err != nil {
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
			run := runLoad(t, Config{
				Target: srv.URL(), Mix: m, MixName: "hostile", Clients: 10, Sessions: sessions,
				StreamTimeout: 10 * time.Second, NoLeakCheck: true, RuntimeMetricsURL: "-", Outputs: []Output{SessionEndFunc(ends.add)},
			})
			if st.strays.Load() == 0 {
				t.Fatal("the target sent no stray reply")
			}
			if n := st.late.Load(); n > 0 {
				t.Skipf("the machine is overloaded: %d of %d strays were written more than %v after their response, "+
					"past the transport's rest; a stray that late cannot be told from the next answer, so neither the sessions nor the warning's quote are judged", n, st.strays.Load(), lateStray)
			}
			for _, e := range ends.got {
				txt := fmt.Sprint(e.Err)
				for _, v := range e.Violations {
					txt += "; " + v.Detail
				}
				if strings.Contains(txt, "UNSOLICITED") {
					t.Errorf("session %s (%s) judged on another response's bytes: %.300s", e.Session, e.Target, txt)
				} else if e.Outcome != measure.OutcomeCompleted {
					t.Errorf("session %s (%s): %v, want ok: %.300s", e.Session, e.Target, e.Outcome, txt)
				}
			}
			if c := run.Summary.Counters; c.SessionsOK != sessions {
				t.Errorf("counters %+v: want %d ok sessions", c, sessions)
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

// proxyBodyRace is what the stock reverse proxy's own race does to a request (golang/go#40747):
// its HTTP/1 server drains and closes the inbound request body when the response head goes
// out ((*chunkWriter).writeHeader, on a keep-alive connection), while its Transport's
// writeLoop, having copied the Content-Length bytes upstream, reads that body once more to
// check it ends there (transferWriter.writeBody); read after the close, that is
// http.ErrBodyReadAfterClose, the writeLoop closes the upstream connection, the proxy's body
// copy fails with "use of closed network connection" and it aborts the client's response
// without its last chunk.
//
// proxyBodyRace watches the proxy's outbound request bodies for that read and notes the
// session whose request it was (the directive in its body names it), or the path of one that
// names none (a stop request).
type proxyBodyRace struct {
	mu       sync.Mutex
	sessions map[string]bool
	paths    []string
}

var directiveSession = regexp.MustCompile(`session=([A-Za-z0-9._-]+)`)

// watch wraps an outbound request's body: reads pass through unchanged.
func (p *proxyBodyRace) watch(r *http.Request) {
	if r.Body != nil {
		r.Body = &proxyWatchedBody{ReadCloser: r.Body, p: p, path: r.URL.Path}
	}
}

type proxyWatchedBody struct {
	io.ReadCloser
	p    *proxyBodyRace
	path string
	seen bytes.Buffer
}

func (b *proxyWatchedBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.seen.Write(buf[:n])
	if errors.Is(err, http.ErrBodyReadAfterClose) {
		b.p.mu.Lock()
		if m := directiveSession.FindSubmatch(b.seen.Bytes()); m != nil {
			b.p.sessions[string(m[1])] = true
		} else {
			b.p.paths = append(b.p.paths, b.path)
		}
		b.p.mu.Unlock()
	}
	return n, err
}

// lockedBuffer is a log sink for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestStockReverseProxy: the reference runtime behind Go's stock reverse proxy
// (httputil.NewSingleHostReverseProxy, FlushInterval -1, nothing else; plain HTTP), the
// default mix (scripted aborts and stops included) from 10 clients. The stock proxy cuts a
// response now and then by a race of its own (proxyBodyRace): every transport error must be
// one of those, attributed to its session. With the race made certain (the proxy's upstream
// writes slowed, as a busy machine may delay its writeLoop), it cuts most sessions the same
// way, every one attributed. With the race taken away (the handler put in full duplex first,
// so the server leaves the request body to the Transport) there is no transport error: the
// generator's connection reuse, aborts and stops close no connection but their own.
func TestStockReverseProxy(t *testing.T) {
	t.Parallel()
	for _, tc := range []proxyCase{
		{name: "stock", sessions: 200},
		{name: "race made certain", sessions: 40, slowWrites: true},
		{name: "full duplex", sessions: 200, fullDuplex: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			playThroughProxy(t, tc)
		})
	}
}

// proxyCase is a run through the stock reverse proxy.
type proxyCase struct {
	name       string
	sessions   int64
	slowWrites bool // the proxy's upstream connections pause 20 ms after each write
	fullDuplex bool // the proxy's handler in full duplex
}

// playThroughProxy plays tc.sessions of the default mix from 10 clients through the proxy to
// the reference runtime and checks that every transport error is the proxy's race.
func playThroughProxy(t *testing.T, tc proxyCase) {
	s := newStack(t, testScale)
	u, err := url.Parse(s.runtimeURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	var logs lockedBuffer
	rp.ErrorLog = log.New(&logs, "", 0)
	race := &proxyBodyRace{sessions: map[string]bool{}}
	director := rp.Director
	rp.Director = func(r *http.Request) { director(r); race.watch(r) }
	if tc.slowWrites {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		var d net.Dialer
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return slowWriteConn{c}, nil
		}
		t.Cleanup(tr.CloseIdleConnections)
		rp.Transport = tr
	}
	var h http.Handler = rp
	if tc.fullDuplex {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = http.NewResponseController(w).EnableFullDuplex()
			rp.ServeHTTP(w, r)
		})
	}
	proxy := httptest.NewServer(h)
	t.Cleanup(proxy.Close)

	m := mixWithoutLongAnswer(t)
	cfg := s.config(m, 10, tc.sessions)
	cfg.Target, cfg.NoLeakCheck, cfg.RunID = proxy.URL, true, "proxy"
	var ends sessionEnds
	cfg.Outputs = append(cfg.Outputs, SessionEndFunc(ends.add))
	run := runLoad(t, cfg)
	c := run.Summary.Counters
	if c.SessionsStarted != tc.sessions || (!tc.slowWrites && c.Outcome(measure.OutcomeAborted) == 0) {
		t.Fatalf("want %d sessions, some aborted or stopped: %+v", tc.sessions, c)
	}
	race.mu.Lock()
	defer race.mu.Unlock()
	stops := len(race.paths)
	var cut int64
	for _, e := range ends.got {
		if e.Outcome != measure.OutcomeTransportError {
			continue
		}
		switch msg := e.Err.Error(); {
		case race.sessions[e.Session] || strings.Contains(msg, "stop request") && stops > 0:
			if !race.sessions[e.Session] {
				stops--
			}
			if cut++; cut <= 3 {
				t.Logf("cut by the proxy's race: %v", e.Err)
			}
		default:
			t.Errorf("session %s (%s, %s): a transport error that is not the proxy's race: %v", e.Session, e.Scenario, e.Dialect, e.Err)
		}
	}
	if c.Outcome(measure.OutcomeTransportError) != cut {
		t.Errorf("%d transport errors counted, %d seen by the sessions", c.Outcome(measure.OutcomeTransportError), cut)
	}
	switch raced := len(race.sessions) + len(race.paths); {
	case tc.fullDuplex && raced > 0:
		t.Errorf("the proxy in full duplex read %d request bodies after their close", raced)
	case tc.slowWrites && cut == 0:
		t.Errorf("the proxy's race made certain cut no session of %d (%d request bodies read after their close)", tc.sessions, raced)
	}
	t.Logf("%d sessions: %d transport errors, each the proxy's race (%d request bodies read after their close); %d ok, %d aborted or stopped, %d failed",
		tc.sessions, cut, len(race.sessions)+len(race.paths), c.SessionsOK, c.Outcome(measure.OutcomeAborted), c.SessionsFailed)
	if l := logs.String(); l != "" {
		t.Logf("proxy log:\n%.2000s", l)
	}
}

// slowWriteConn pauses after each write, as a writer descheduled on a busy machine.
type slowWriteConn struct{ net.Conn }

func (c slowWriteConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	time.Sleep(20 * time.Millisecond)
	return n, err
}
