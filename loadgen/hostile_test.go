package loadgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// hostileStall is how long the stall behaviour holds a stream mid-answer: far past the
// stream timeout of the test's runs, so only the generator's own limit can end the session in
// time. The timeout leaves the valid sessions seconds to spare on a loaded machine.
const (
	hostileStall         = 10 * time.Second
	hostileStreamTimeout = 6 * time.Second
	hostileIdle          = 3 * time.Second
)

// hostileServer is an HTTP/1.1 server on a raw TCP listener that misbehaves in one way per
// sim-chat slug (POST /api/chat/{slug}), so one run's sessions meet every behaviour at once.
// net/http's server cannot send a malformed chunk, a reset, garbage instead of a status line
// or a half-written chunk, hence the raw listener. The slug "ok" is a valid opted-in stream on
// a keep-alive connection, which the generator parks and reuses for later sessions (of any
// slug). Close ends every connection, stalled ones included.
type hostileServer struct {
	ln         net.Listener
	lib        *scenarios.Library
	behaviours map[string]hostileBehaviour
	done       chan struct{}
	wg         sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	hits  map[string]int // requests served, by slug
}

// hostileBehaviour writes one response to a request of its slug; final is the scenario's
// answer. It reports whether the connection may serve another request.
type hostileBehaviour func(s *hostileServer, c net.Conn, final string) (keepAlive bool)

// hostileBehaviours are the raw server's slugs. Each writes through c directly: the bytes on
// the wire are exactly the ones written here.
func hostileBehaviours() map[string]hostileBehaviour {
	return map[string]hostileBehaviour{
		"ok": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			for _, f := range validFrames(final) {
				writeChunk(c, f)
			}
			_, err := io.WriteString(c, "0\r\n\r\n")
			return err == nil
		},
		// Not HTTP at all: a TLS record header and binary junk where the status line should be.
		"garbage-head": func(s *hostileServer, c net.Conn, _ string) bool {
			_, _ = c.Write(append([]byte("\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"), junk(64)...))
			return false
		},
		// A valid head, then 4 KiB of binary junk, closing the connection mid-line.
		"garbage-body": func(s *hostileServer, c net.Conn, _ string) bool {
			writeHead(c, "text/event-stream", "Connection: close")
			_, _ = c.Write(junk(4 << 10))
			return false
		},
		// One line of 80 KiB, over the decoder's 64 KiB line limit.
		"long-line": func(s *hostileServer, c net.Conn, _ string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			writeChunk(c, `data: {"blockId":"b1","chunk":"`+strings.Repeat("x", 80<<10)+`"}`+"\n\n")
			_, _ = io.WriteString(c, "0\r\n\r\n")
			return false
		},
		// The whole valid stream, but its frames end in one LF instead of a blank line: one event
		// that is never dispatched, discarded when the stream ends.
		"never-dispatch": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			for _, f := range validFrames(final) {
				writeChunk(c, strings.TrimSuffix(f, "\n"))
			}
			_, _ = io.WriteString(c, "0\r\n\r\n")
			return false
		},
		// 40 data lines of 32 KiB in one event: 1.25 MiB, over the decoder's 1 MiB event limit,
		// each line well under the line limit.
		"huge-event": func(s *hostileServer, c net.Conn, _ string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			line := "data: " + strings.Repeat("y", 32<<10) + "\n"
			for range 40 {
				if !writeChunk(c, line) {
					return false
				}
			}
			writeChunk(c, "\n")
			_, _ = io.WriteString(c, "0\r\n\r\n")
			return false
		},
		// A status line, then header lines without end (2 MiB, or until the client leaves).
		"endless-head": func(s *hostileServer, c net.Conn, _ string) bool {
			line := "X-Filler: " + strings.Repeat("z", 16<<10) + "\r\n"
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n"); err != nil {
				return false
			}
			for range 128 {
				if _, err := io.WriteString(c, line); err != nil {
					return false
				}
			}
			return false
		},
		// The request is read; nothing ever comes back.
		"headers-never": func(s *hostileServer, c net.Conn, _ string) bool {
			<-s.done
			return false
		},
		// A proxy's HTML error page served as 200.
		"wrong-type": func(s *hostileServer, c net.Conn, _ string) bool {
			page := "<html><body><h1>Upstream unavailable</h1></body></html>\n"
			writeHead(c, "text/html; charset=utf-8", fmt.Sprintf("Content-Length: %d", len(page)))
			_, _ = io.WriteString(c, page)
			return true
		},
		// A chunk announced as 256 bytes, 40 of them sent, then the connection closes.
		"close-mid-chunk": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			writeChunk(c, validFrames(final)[0])
			_, _ = io.WriteString(c, "100\r\n"+`data: {"blockId":"b1","chunk":"more text tha`)
			return false
		},
		// A valid chunk, then a chunk size that is not hexadecimal.
		"chunked-error": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			writeChunk(c, validFrames(final)[0])
			_, _ = io.WriteString(c, "zz\r\nnot a chunk\r\n")
			return false
		},
		// The valid stream gzip-compressed, though the client did not ask for it.
		"gzip": func(s *hostileServer, c net.Conn, final string) bool {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			for _, f := range validFrames(final) {
				_, _ = io.WriteString(zw, f)
			}
			_ = zw.Close()
			writeHead(c, "text/event-stream", "Content-Encoding: gzip", fmt.Sprintf("Content-Length: %d", b.Len()))
			_, _ = c.Write(b.Bytes())
			return true
		},
		// A redirect to itself, for ever (307 keeps the method and body, so a client that follows
		// redirects posts again and again).
		"redirect-loop": func(s *hostileServer, c net.Conn, _ string) bool {
			_, err := io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /api/chat/redirect-loop\r\nContent-Length: 0\r\n\r\n")
			return err == nil
		},
		// A head and one frame, then a TCP reset (SO_LINGER 0) instead of the rest.
		"reset": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			writeChunk(c, validFrames(final)[0])
			_ = c.(*net.TCPConn).SetLinger(0)
			return false
		},
		// A valid head and 4 KiB of binary junk on one unterminated line, then nothing for
		// hostileStall: not a byte of it is SSE.
		"garbage-stall": func(s *hostileServer, c net.Conn, _ string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			writeChunk(c, string(junk(4<<10)))
			select {
			case <-time.After(hostileStall):
			case <-s.done:
			}
			return false
		},
		// Half the answer, then nothing for hostileStall (the rest comes if anyone still listens).
		"stall": func(s *hostileServer, c net.Conn, final string) bool {
			writeHead(c, "text/event-stream", "Transfer-Encoding: chunked")
			frames := validFrames(final)
			writeChunk(c, frames[0])
			select {
			case <-time.After(hostileStall):
			case <-s.done:
				return false
			}
			for _, f := range frames[1:] {
				writeChunk(c, f)
			}
			_, _ = io.WriteString(c, "0\r\n\r\n")
			return false
		},
	}
}

// validFrames is a complete opted-in sim-chat stream of the answer final.
func validFrames(final string) []string {
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []string{
		`data: {"blockId":"b1","chunk":` + quote(final) + "}\n\n",
		`data: {"event":"final","data":{"success":true,"output":{"content":` + quote(final) + "}}}\n\n",
		"data: \"[DONE]\"\n\n",
	}
}

// writeHead writes a 200 head with the opted-in protocol echo and the extra header lines.
func writeHead(c net.Conn, contentType string, extra ...string) {
	h := "HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\nCache-Control: no-cache\r\nX-Sim-Stream-Protocol: agent-events-v1\r\n"
	for _, e := range extra {
		h += e + "\r\n"
	}
	_, _ = io.WriteString(c, h+"\r\n")
}

// writeChunk writes data as one chunk of a chunked body; false once the client is gone.
func writeChunk(c net.Conn, data string) bool {
	_, err := fmt.Fprintf(c, "%x\r\n%s\r\n", len(data), data)
	return err == nil
}

// junk is n bytes of fixed pseudo-random binary without CR or LF, so nothing in it ends a
// line.
func junk(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		for b[i] = byte(r.Uint32()); b[i] == '\r' || b[i] == '\n'; b[i] = byte(r.Uint32()) {
		}
	}
	return b
}

// startHostile starts a hostile server on 127.0.0.1; the test's cleanup closes it.
func startHostile(t *testing.T) *hostileServer {
	t.Helper()
	return startHostileWith(t, hostileBehaviours())
}

// startHostileWith is startHostile with the given behaviours by slug.
func startHostileWith(t *testing.T, behaviours map[string]hostileBehaviour) *hostileServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hostileServer{ln: ln, lib: scenarios.Embedded(), behaviours: behaviours, done: make(chan struct{}),
		conns: map[net.Conn]struct{}{}, hits: map[string]int{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// URL is the server's base URL.
func (s *hostileServer) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and ends every connection, waiting for their goroutines.
func (s *hostileServer) Close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Hits returns how many requests each slug was sent.
func (s *hostileServer) Hits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.hits))
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

func (s *hostileServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

// serve answers requests on c until a behaviour ends the connection.
func (s *hostileServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		_ = c.Close()
	}()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var body struct {
			Input string `json:"input"`
		}
		err = json.NewDecoder(req.Body).Decode(&body)
		_, _ = io.Copy(io.Discard, req.Body)
		slug, _ := strings.CutPrefix(req.URL.Path, "/api/chat/")
		behave := s.behaviours[slug]
		d, ok, derr := scenarios.ParseDirective(body.Input)
		sc, known := s.lib.Get(d.Scenario)
		if err != nil || !ok || derr != nil || !known || behave == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
		s.mu.Lock()
		s.hits[slug]++
		s.mu.Unlock()
		if !behave(s, c, sc.Render(d.Seed).Expected().FinalText()) {
			return
		}
	}
}

// hostileH2 is the hostile server for HTTP/2 (h2c): the behaviours net/http's handlers can
// express, by the same slugs. HTTP/2 has no chunked encoding and frames its own heads, so
// garbage-head, endless-head and chunked-error have no counterpart; a cut body is a stream
// reset or a short Content-Length.
func hostileH2(t *testing.T) (url string, hits func() map[string]int) {
	t.Helper()
	lib := scenarios.Embedded()
	done := make(chan struct{})
	var mu sync.Mutex
	seen := map[string]int{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input string `json:"input"`
		}
		err := json.NewDecoder(r.Body).Decode(&body)
		d, ok, derr := scenarios.ParseDirective(body.Input)
		sc, known := lib.Get(d.Scenario)
		if err != nil || !ok || derr != nil || !known {
			http.Error(w, "bad directive in "+body.Input, http.StatusBadRequest)
			return
		}
		slug := r.PathValue("slug")
		mu.Lock()
		seen[slug]++
		mu.Unlock()
		frames := validFrames(sc.Render(d.Seed).Expected().FinalText())
		hd := w.Header()
		hd.Set("Content-Type", "text/event-stream")
		hd.Set("X-Sim-Stream-Protocol", "agent-events-v1")
		write := func(s string) bool {
			_, err := io.WriteString(w, s)
			w.(http.Flusher).Flush()
			return err == nil
		}
		switch slug {
		case "ok":
			for _, f := range frames {
				write(f)
			}
		case "garbage-body":
			write(string(junk(4 << 10)))
		case "long-line":
			write(`data: {"blockId":"b1","chunk":"` + strings.Repeat("x", 80<<10) + `"}` + "\n\n")
		case "never-dispatch":
			for _, f := range frames {
				write(strings.TrimSuffix(f, "\n"))
			}
		case "huge-event":
			for range 40 {
				if !write("data: " + strings.Repeat("y", 32<<10) + "\n") {
					return
				}
			}
			write("\n")
		case "headers-never":
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case "wrong-type":
			hd.Set("Content-Type", "text/html; charset=utf-8")
			write("<html><body><h1>Upstream unavailable</h1></body></html>\n")
		case "close-mid-chunk":
			// HTTP/2's cut body: fewer bytes than the Content-Length announced.
			hd.Set("Content-Length", "4096")
			write(frames[0])
		case "gzip":
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			for _, f := range frames {
				_, _ = io.WriteString(zw, f)
			}
			_ = zw.Close()
			hd.Set("Content-Encoding", "gzip")
			write(b.String())
		case "redirect-loop":
			hd.Set("Location", r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "reset":
			write(frames[0])
			panic(http.ErrAbortHandler) // RST_STREAM, the connection stays up
		case "garbage-stall":
			write(string(junk(4 << 10)))
			select {
			case <-time.After(hostileStall):
			case <-r.Context().Done():
			case <-done:
			}
		case "stall":
			write(frames[0])
			select {
			case <-time.After(hostileStall):
			case <-r.Context().Done():
				return
			case <-done:
				return
			}
			for _, f := range frames[1:] {
				write(f)
			}
		default:
			http.Error(w, "no behaviour "+slug, http.StatusNotFound)
		}
	})
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat/{slug}", h)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the aborted handlers' reports
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) }) // first: release the stalled handlers
	return srv.URL, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(seen)
	}
}

// hostileMix plays plain-answer (ASCII) through opted-in sim-chat, one target per slug.
func hostileMix(t *testing.T, slugs []string) *Mix {
	t.Helper()
	slugs = slices.Sorted(slices.Values(slugs))
	targets := make([]Target, 0, len(slugs))
	for _, slug := range slugs {
		targets = append(targets, Target{Slug: slug})
	}
	m, err := NewMix("hostile", 11, map[string]float64{"plain-answer": 1}, []Profile{
		{Name: "opted-in", Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1, Targets: targets},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sessionsCovering is the smallest session count whose picks reach every target of m at
// least n times (picks are a pure function of the seed and the index).
func sessionsCovering(m *Mix, n int) int64 {
	seen := map[string]int{}
	for i := uint64(0); ; i++ {
		seen[m.Pick(m.Seed, i).Target.Slug]++
		covered := true
		for _, tg := range m.Profiles[0].Targets {
			covered = covered && seen[tg.Slug] >= n
		}
		if covered {
			return int64(i + 1)
		}
	}
}

// sessionEnds collects every SessionEnd.
type sessionEnds struct {
	mu  sync.Mutex
	got []SessionEnd
}

func (e *sessionEnds) add(s SessionEnd) {
	e.mu.Lock()
	e.got = append(e.got, s)
	e.mu.Unlock()
}

// hostileWant is how a session against one behaviour must end.
type hostileWant struct {
	outcome measure.Outcome
	status  int             // HTTPErrors key, for outcome http_error
	rules   []protocol.Rule // exactly these rules, in any order and number
	text    string          // in the error message (an error outcome), else in a violation's detail
}

// hostileTable is each behaviour's classification over HTTP/1.1 (h2 false) or HTTP/2. Each
// misbehaviour is one root cause: an error outcome, and no rule restating it.
func hostileTable(h2 bool) map[string]hostileWant {
	table := map[string]hostileWant{
		// A valid stream: the other sessions' misbehaviour must not reach it.
		"ok": {outcome: measure.OutcomeCompleted},
		// Not HTTP: net/http's response parser names it.
		"garbage-head": {outcome: measure.OutcomeTransportError, text: "read response head: malformed HTTP response"},
		// A head that never ends is cut at the transport's bound.
		"endless-head": {outcome: measure.OutcomeTransportError, text: "read response head: response head longer than 1048576 bytes"},
		// Junk after a valid head: nothing decodes, the stream ends mid-line without a terminal.
		"garbage-body": {outcome: measure.OutcomeTruncated,
			text: "without its terminal, inside an undispatched event or an unterminated line"},
		// The decoder's line limit.
		"long-line": {outcome: measure.OutcomeDecodeError,
			text: "decode stream from 127.0.0.1:PORT: sse: line exceeds limit of 65536 bytes"},
		// Data that never becomes an event: no answer, no terminal, and the cut event is named.
		"never-dispatch": {outcome: measure.OutcomeTruncated,
			text: "without its terminal, inside an undispatched event or an unterminated line"},
		// The decoder's event limit.
		"huge-event": {outcome: measure.OutcomeDecodeError,
			text: "decode stream from 127.0.0.1:PORT: sse: event exceeds limit of 1048576 bytes"},
		// No response head: stalled at the idle timeout (the user saw nothing at all).
		"headers-never": {outcome: measure.OutcomeStalled,
			text: "no byte from 127.0.0.1:PORT for the " + hostileIdle.String() + " idle timeout (no response headers)"},
		// HTML served as 200: R-headers names the type; the page is one line that never makes
		// an event, so the stream is truncated too (no terminal): a finding and an outcome.
		"wrong-type": {outcome: measure.OutcomeTruncated, rules: []protocol.Rule{protocol.RHeaders},
			text: `without its terminal, inside an undispatched event or an unterminated line (its data discarded); its body (Content-Type "text/html; charset=utf-8", not text/event-stream) began: "<html><body><h1>Upstream unavailable</h1></body></html>"`},
		// The connection closed inside a chunk.
		"close-mid-chunk": {outcome: measure.OutcomeTransportError, text: "chunked body: unexpected EOF"},
		// A malformed chunk size.
		"chunked-error": {outcome: measure.OutcomeTransportError, text: "chunked body: invalid byte in chunk length"},
		// A content coding the client did not ask for: R-headers, and the body is not decoded.
		"gzip": {outcome: measure.OutcomeCompleted, rules: []protocol.Rule{protocol.RHeaders},
			text: `Content-Encoding "gzip" on a request sent with Accept-Encoding: identity`},
		// A stream request is not redirected: the 3xx is an HTTP error naming where it pointed.
		"redirect-loop": {outcome: measure.OutcomeHTTPError, status: http.StatusTemporaryRedirect,
			text: "HTTP 307 redirect to /api/chat/redirect-loop (not followed: a stream request is never redirected)"},
		// A TCP reset after the head and one frame.
		"reset": {outcome: measure.OutcomeTransportError, text: "read: connection reset by peer"},
		// Junk, then silence: stalled, and the message says that bytes came and none was SSE.
		"garbage-stall": {outcome: measure.OutcomeStalled, text: "s); 4096 bytes of its body arrived and made no SSE event"},
		// Half an answer, then silence: stalled at the idle timeout, long before the stall ends.
		"stall": {outcome: measure.OutcomeStalled, text: "stalled: no byte from 127.0.0.1:PORT for the " + hostileIdle.String() + " idle timeout (stream open"},
	}
	if h2 {
		// HTTP/2 frames its heads and bodies itself: no chunked encoding, no raw status line.
		delete(table, "garbage-head")
		delete(table, "endless-head")
		delete(table, "chunked-error")
		// A body shorter than its Content-Length.
		table["close-mid-chunk"] = hostileWant{outcome: measure.OutcomeTransportError, text: "body ended before its Content-Length of 4096 bytes"}
		// The handler aborted: RST_STREAM on a connection that stays up.
		table["reset"] = hostileWant{outcome: measure.OutcomeTransportError, text: "stream error: stream ID"}
	}
	return table
}

// TestHostileTarget plays one run per protocol against a server that misbehaves in a
// different way per target, every behaviour several times at once: each session ends with its
// behaviour's classification (no panic, no hang past the stream timeout), the valid sessions
// are untouched, and the results are written and read back.
func TestHostileTarget(t *testing.T) {
	t.Parallel()
	t.Run("HTTP/1.1", func(t *testing.T) {
		t.Parallel()
		srv := startHostile(t)
		table := hostileTable(false)
		for slug := range srv.behaviours {
			if _, ok := table[slug]; !ok {
				t.Fatalf("behaviour %s has no row in the table", slug)
			}
		}
		playHostile(t, srv.URL(), false, table, srv.Hits)
	})
	t.Run("h2c", func(t *testing.T) {
		t.Parallel()
		url, hits := hostileH2(t)
		playHostile(t, url, true, hostileTable(true), hits)
	})
}

// playHostile runs the table's behaviours at once against url and checks every session, the
// counters, the run's length and the written results.
func playHostile(t *testing.T, url string, h2 bool, table map[string]hostileWant, hits func() map[string]int) {
	m := hostileMix(t, slices.Collect(maps.Keys(table)))
	sessions := sessionsCovering(m, 2)
	var ends sessionEnds
	began := time.Now()
	run, err := Run(context.Background(), withDialects(Config{
		Target: url, Mix: m, MixName: "hostile", Rate: 2000, Sessions: sessions, HTTP2: h2,
		StreamTimeout: hostileStreamTimeout, IdleTimeout: hostileIdle, Grace: 3 * hostileStall, NoLeakCheck: true, RuntimeMetricsURL: "-",
		SamplesPerRule: 1, Outputs: []Output{SessionEndFunc(ends.add)},
	}))
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	// The stall alone would hold a session for 10 s; the idle timeout ends it.
	if took >= hostileStall {
		t.Errorf("the run took %v: longer than the stall, which the %v idle timeout should end", took, hostileIdle)
	}
	if len(ends.got) != int(sessions) {
		t.Fatalf("%d sessions ended, want %d", len(ends.got), sessions)
	}

	host := strings.TrimPrefix(url, "http://")
	var want measure.Counters
	want.HTTPErrors = map[int]int64{}
	want.Outcomes = map[measure.Outcome]int64{}
	perSlug := map[string]int{}
	for _, e := range ends.got {
		perSlug[e.Target]++
		w, ok := table[e.Target]
		if !ok {
			t.Fatalf("session %s: target %q is not a behaviour", e.Session, e.Target)
		}
		if perSlug[e.Target] == 1 {
			t.Logf("%-15s %-15v err=%.300v violations=%.300v", e.Target, e.Outcome, e.Err, e.Violations)
		}
		want.SessionsStarted++
		want.Outcomes[w.outcome]++
		if w.outcome.IsError() || len(w.rules) > 0 {
			want.SessionsFailed++
		} else {
			want.SessionsOK++
		}
		if w.outcome == measure.OutcomeHTTPError {
			want.HTTPErrors[w.status]++
		}
		w.text = strings.ReplaceAll(w.text, "127.0.0.1:PORT", host)
		checkHostileSession(t, e, w, host)
	}
	served := hits()
	for slug := range table {
		if perSlug[slug] < 2 {
			t.Errorf("behaviour %s: %d sessions, want at least 2", slug, perSlug[slug])
		}
		if served[slug] < perSlug[slug] {
			t.Errorf("behaviour %s: the server saw %d requests for %d sessions", slug, served[slug], perSlug[slug])
		}
	}

	c := run.Summary.Counters
	got := measure.Counters{
		SessionsStarted: c.SessionsStarted, Outcomes: c.Outcomes, SessionsOK: c.SessionsOK, SessionsFailed: c.SessionsFailed,
		HTTPErrors: c.HTTPErrors,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("counters\n got %+v\nwant %+v", got, want)
	}
	if run.Summary.Verdict.Pass {
		t.Errorf("the verdict passed a hostile target")
	}
	for _, reason := range run.Summary.Verdict.Reasons {
		// The error samples quote hostile bytes (a 1 MiB status line) only clipped.
		if len(reason) > 4<<10 {
			t.Errorf("verdict reason of %d bytes: %.200q…", len(reason), reason)
		}
	}

	// The results are written, and what is read back is what was measured.
	back := writeAndRead(t, run)
	if fmt.Sprint(back.Summary.Counters) != fmt.Sprint(c) || fmt.Sprint(back.Summary.Violations) != fmt.Sprint(run.Summary.Violations) {
		t.Errorf("read back counters %+v violations %v, want %+v %v", back.Summary.Counters, back.Summary.Violations, c, run.Summary.Violations)
	}
	if len(back.Summary.Verdict.Reasons) == 0 || len(back.Samples) == 0 || len(back.Timeline) == 0 {
		t.Errorf("read back verdict %+v, %d samples, %d timeline points: want all three", back.Summary.Verdict, len(back.Samples), len(back.Timeline))
	}
}

// checkHostileSession compares one session's end with its behaviour's row.
func checkHostileSession(t *testing.T, e SessionEnd, w hostileWant, host string) {
	t.Helper()
	where := fmt.Sprintf("behaviour %s, session %s", e.Target, e.Session)
	if e.Outcome != w.outcome {
		t.Errorf("%s: outcome %v, want %v (error %v, violations %v)", where, e.Outcome, w.outcome, e.Err, e.Violations)
	}
	var rules []protocol.Rule
	for _, v := range e.Violations {
		if !slices.Contains(rules, v.Rule) {
			rules = append(rules, v.Rule)
		}
	}
	slices.Sort(rules)
	wantRules := slices.Clone(w.rules)
	slices.Sort(wantRules)
	if !slices.Equal(rules, wantRules) {
		t.Errorf("%s: rules %v, want %v (violations %v)", where, rules, wantRules, e.Violations)
	}
	if w.outcome.IsError() {
		// An error names the session, the host and what was wrong.
		msg := fmt.Sprint(e.Err)
		if e.Err == nil || !strings.Contains(msg, w.text) || !strings.Contains(msg, "session "+e.Session+":") || !strings.Contains(msg, host) {
			t.Errorf("%s: error %.300q, want one naming the session, %s and %q", where, msg, host, w.text)
		}
		return
	}
	if e.Err != nil {
		t.Errorf("%s: error %v, want none", where, e.Err)
	}
	if w.text != "" && !slices.ContainsFunc(e.Violations, func(v protocol.Violation) bool { return strings.Contains(v.Detail, w.text) }) {
		t.Errorf("%s: violations %v, want one saying %q", where, e.Violations, w.text)
	}
}
