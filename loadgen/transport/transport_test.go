package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var _ http.RoundTripper = (*Transport)(nil)

// strayReply is an unsolicited second response a target sends after a complete one (as
// loadgen's hostile-target tests send it).
const strayReply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 27\r\n\r\nUNSOLICITED second response"

// countingServer counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func TestStreamTransportReusesAndStreams(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, "data: "+string(body)+strings.Repeat("x", i)+"\n\n")
			w.(http.Flusher).Flush() // chunked, flushed frame by frame
		}
	})
	tr := New(4, nil)
	client := &http.Client{Transport: tr}
	for i := range 5 {
		if i > 0 {
			time.Sleep(tr.settle) // a parked connection rests before reuse
		}
		var connected bool
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			ConnectDone: func(_, _ string, err error) { connected = err == nil },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/s", strings.NewReader("hi"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(got) != "data: hi\n\ndata: hix\n\ndata: hixx\n\n" {
			t.Fatalf("request %d: body %q, err %v", i, got, err)
		}
		if connected != (i == 0) {
			t.Errorf("request %d: new connection %v, want one only for the first", i, connected)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("server saw %d connections for 5 sequential requests, want 1", n)
	}
}

func TestStreamTransportUnreadBodyClosesConnection(t *testing.T) {
	t.Parallel()
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: a\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // an endless stream
	})
	client := &http.Client{Transport: New(4, nil)}
	for range 2 {
		resp, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		_, _ = resp.Body.Read(buf)
		resp.Body.Close() // mid-stream: the connection cannot be reused
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("server saw %d connections, want 2 (an abandoned stream's connection is closed)", n)
	}
}

func TestStreamTransportCancelUnblocksRead(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&http.Client{Transport: New(4, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.AfterFunc(20*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("read of a cancelled stream ended without error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not unblock the body read")
	}
}

// TestStreamTransportSkipsClosedParkedConnection: a parked connection the server closed is
// found before it is used, and the request goes once, on a new connection.
func TestStreamTransportSkipsClosedParkedConnection(t *testing.T) {
	t.Parallel()
	var served atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served.Add(1)
		_, _ = w.Write(body)
	})
	tr := New(4, nil)
	client := &http.Client{Transport: tr}
	post := func() string {
		resp, err := client.Post(srv.URL, "text/plain", strings.NewReader("again"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	post()
	srv.CloseClientConnections() // the server drops the parked connection
	// The next request must take a connection known to be dead, the case under test: wait
	// until the client's end has read the server's FIN rather than racing it, and until the
	// connection has rested long enough to be reused.
	key := srv.URL // the pool's key: scheme://host:port
	for deadline := time.Now().Add(5 * time.Second); !parkedAtEOF(tr, key); {
		if time.Now().After(deadline) {
			t.Fatal("the parked connection never saw the server close it")
		}
	}
	time.Sleep(tr.settle)
	if got := post(); got != "again" {
		t.Errorf("after the server closed the parked connection: body %q, want the request served", got)
	}
	if conns.Load() != 2 || served.Load() != 2 {
		t.Errorf("connections %d served %d, want 2 and 2", conns.Load(), served.Load())
	}
}

// TestStreamTransportNeverResends: a request whose reused connection fails after it was sent
// (the server read it and closed without answering) is an error, not sent again: the server
// may have acted on it, and a resend would carry the same session id.
func TestStreamTransportNeverResends(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var requests atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for i := 0; ; i++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					requests.Add(1)
					if i > 0 {
						return // the second request on the connection: read, then closed unanswered
					}
					_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			}()
		}
	}()
	tr := New(4, nil)
	client := &http.Client{Transport: tr}
	post := func() error {
		resp, err := client.Post("http://"+ln.Addr().String(), "text/plain", strings.NewReader("once"))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	if err := post(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(tr.settle) // the second request goes on the parked connection
	if err := post(); err == nil {
		t.Errorf("a request the server read and never answered: no error")
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the server read %d requests, want 2 (the second sent once)", n)
	}
}

// parkedAtEOF reports whether the one parked connection under key has read the peer's close. It
// blocks for at most a millisecond and leaves the connection as it was (a Peek at EOF keeps
// nothing buffered, and the deadline is cleared).
func parkedAtEOF(t *Transport, key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[key]) != 1 {
		return false
	}
	c := t.idle[key][0]
	_ = c.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := c.br.Peek(1)
	_ = c.conn.SetReadDeadline(time.Time{})
	return errors.Is(err, io.EOF)
}

func TestStreamTransportRejectsOtherSchemes(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, "ftp://127.0.0.1:1/", nil)
	_, err := New(1, nil).RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), `scheme "ftp" not supported`) {
		t.Errorf("ftp: error %v, want one naming the scheme", err)
	}
}

// serveConn reads requests from c, each body drained, until one fails or answer returns false;
// then it closes c.
func serveConn(c net.Conn, answer func() bool) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		if !answer() {
			return
		}
	}
}

// rawServer answers each request on a connection with the next of replies, written verbatim,
// and counts the connections it accepted. It closes the connection after the last reply.
func rawServer(t *testing.T, replies ...string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var conns, next atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go serveConn(c, func() bool {
				i := int(next.Add(1)) - 1
				if i >= len(replies) {
					return false
				}
				_, err := io.WriteString(c, replies[i])
				return err == nil && i < len(replies)-1 // after the last reply the connection closes: cut replies end there
			})
		}
	}()
	return "http://" + ln.Addr().String(), &conns
}

func TestStreamTransportChunkedBody(t *testing.T) {
	t.Parallel()
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	cases := []struct {
		name    string
		replies []string
		want    []string // bodies of the sequential requests
		errs    []bool   // whether reading each body must fail
		conns   int64
	}{
		// A trailer after the last chunk is read and dropped, so the connection is reused.
		{"trailer then reuse", []string{
			head + "9\r\ndata: a\n\n\r\n0\r\nX-Done: yes\r\n\r\n",
			head + "9\r\ndata: b\n\n\r\n0\r\n\r\n",
		}, []string{"data: a\n\n", "data: b\n\n"}, []bool{false, false}, 1},
		// The connection cut inside a chunk is an error, not a clean end of stream.
		{"cut mid-chunk", []string{head + "12\r\ndata: a\n\n"}, []string{"data: a\n\n"}, []bool{true}, 1},
		// The connection cut after the last chunk but before the trailer's blank line.
		{"cut in trailer", []string{head + "9\r\ndata: a\n\n\r\n0\r\n"}, []string{"data: a\n\n"}, []bool{true}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, conns := rawServer(t, tc.replies...)
			tr := New(4, nil)
			client := &http.Client{Transport: tr}
			for i, want := range tc.want {
				if i > 0 {
					time.Sleep(tr.settle) // a parked connection rests before reuse
				}
				resp, err := client.Get(url)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(got) != want || (err != nil) != tc.errs[i] {
					t.Errorf("request %d: body %q err %v, want %q (error %v)", i, got, err, want, tc.errs[i])
				}
				if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("request %d: error %v, want an unexpected EOF", i, err)
				}
			}
			if n := conns.Load(); n != tc.conns {
				t.Errorf("server saw %d connections, want %d", n, tc.conns)
			}
		})
	}
}

// A stream's frames are timed when they reached this host, not when the generator got to read
// them: the body's Latest gives the kernel's receive time of the newest read (rxstamp). The
// reader here reads each frame 60 ms after it was sent; a generator timing by time.Now()
// would count those 60 ms against the server.
func TestStreamTransportTimesFramesByArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("receive timestamps are read on Linux only")
	}
	t.Parallel()
	next := make(chan struct{})
	sent := make(chan time.Time, 1)
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		for range next {
			sent <- time.Now()
			_, _ = io.WriteString(w, "data: x\n\n")
			w.(http.Flusher).Flush()
		}
	})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/s", strings.NewReader("hi"))
	resp, err := (&http.Client{Transport: New(4, nil)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	defer close(next)
	body, ok := resp.Body.(interface {
		Stamped() bool
		Latest() (time.Time, bool)
	})
	if !ok || !body.Stamped() {
		t.Fatal("the HTTP/1.1 transport's body on Linux has no receive stamps")
	}
	br := bufio.NewReader(resp.Body)
	// The kernel starts stamping a moment after the first socket asks; frames until it does.
	for i := 0; ; i++ {
		next <- struct{}{}
		at := <-sent
		time.Sleep(60 * time.Millisecond)
		if line, err := br.ReadString('\n'); err != nil || line != "data: x\n" {
			t.Fatalf("frame %d: %q, %v", i, line, err)
		}
		_, _ = br.ReadString('\n')
		now := time.Now()
		got, known := body.Latest()
		if !known {
			t.Fatalf("frame %d: a read body does not know when its data arrived", i)
		}
		if !resp.Body.(*streamBody).c.stamps.Kernel() {
			if i == 100 {
				t.Fatal("no read carried a kernel receive stamp in 100 frames")
			}
			continue
		}
		if late := now.Sub(got); late < 50*time.Millisecond {
			t.Errorf("frame timed %v before the read returned; it waited 60ms in the socket", late)
		}
		if got.Before(at) {
			t.Errorf("frame timed %v before the server sent it", at.Sub(got))
		}
		return
	}
}

// strayServer answers every request with a chunked response. On the first connection it
// writes all but the last chunk, then calls after with the connection (TLS when conf is set)
// and its coalescer; after writes the rest, and returns false to close the connection. On the
// others it writes the whole response and keeps the connection open. It counts the
// connections it accepted.
func strayServer(t *testing.T, conf *tls.Config, after func(c net.Conn, co *coalescer) bool) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	scheme := "http"
	if conf != nil {
		scheme = "https"
	}
	var conns atomic.Int64
	go func() {
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			first := conns.Add(1) == 1
			co := &coalescer{Conn: raw}
			var c net.Conn = co
			if conf != nil {
				c = tls.Server(co, conf)
			}
			go serveConn(c, func() bool {
				if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
					"9\r\ndata: a\n\n\r\n"); err != nil {
					return false
				}
				if first {
					return after(c, co)
				}
				_, err := io.WriteString(c, "0\r\n\r\n")
				return err == nil
			})
		}
	}()
	return scheme + "://" + ln.Addr().String(), &conns
}

// coalescer passes writes through or, while held, keeps them for one write at release: what a
// server wrote in several writes (over TLS, several records) then reaches the client in one
// segment. One goroutine writes.
type coalescer struct {
	net.Conn
	hold bool
	held []byte
}

func (c *coalescer) Write(p []byte) (int, error) {
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

func (c *coalescer) release() error {
	c.hold = false
	_, err := c.Conn.Write(c.held)
	c.held = nil
	return err
}

// TestStreamTransportStrayBytes: a connection on which the server sent anything after a
// complete response (an unsolicited second response, in the response's last write or a moment
// later) is never reused, over http and https: the next request goes on a new connection and
// gets its own answer, and the stray is noted. A server that merely closes an idle connection
// (a TLS close_notify included) is no stray.
func TestStreamTransportStrayBytes(t *testing.T) {
	t.Parallel()
	certSrv := httptest.NewTLSServer(http.NotFoundHandler())
	serverTLS := certSrv.TLS.Clone()
	roots := x509.NewCertPool()
	roots.AddCert(certSrv.Certificate())
	certSrv.Close()
	const end = "0\r\n\r\n"
	sameWrite := func(c net.Conn, _ *coalescer) bool {
		_, err := io.WriteString(c, end+strayReply)
		return err == nil
	}
	// Over TLS: the response's end and the stray in records of their own, read by one read:
	// TLS holds the stray's record, neither the response reader nor the socket has it.
	ownRecord := func(c net.Conn, co *coalescer) bool {
		co.hold = true
		_, _ = io.WriteString(c, end)
		_, _ = io.WriteString(c, strayReply)
		return co.release() == nil
	}
	later := func(c net.Conn, _ *coalescer) bool {
		if _, err := io.WriteString(c, end); err != nil {
			return false
		}
		time.Sleep(5 * time.Millisecond)
		_, err := io.WriteString(c, strayReply)
		return err == nil
	}
	// closeIdle closes the connection once the response ended (over TLS with a close_notify
	// first) and says so on idleClosed, so the test's next request comes after the close
	// however busy the machine: a close that races a reused request is another case.
	idleClosed := map[bool]chan struct{}{false: make(chan struct{}, 4), true: make(chan struct{}, 4)}
	closeIdle := func(tlsConn bool) func(net.Conn, *coalescer) bool {
		return func(c net.Conn, _ *coalescer) bool {
			_, _ = io.WriteString(c, end)
			time.Sleep(5 * time.Millisecond)
			_ = c.Close()
			idleClosed[tlsConn] <- struct{}{}
			return false
		}
	}
	for _, tc := range []struct {
		name  string
		tls   bool
		after func(net.Conn, *coalescer) bool
		stray bool
	}{
		{"http stray in the response's last write", false, sameWrite, true},
		{"https stray in a record of its own", true, ownRecord, true},
		{"http stray after the response", false, later, true},
		{"http idle close", false, closeIdle(false), false},
		{"https stray in the response's last write", true, sameWrite, true},
		{"https stray after the response", true, later, true},
		{"https idle close", true, closeIdle(true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var conf *tls.Config
			clientTLS := &tls.Config{RootCAs: roots}
			if tc.tls {
				conf = serverTLS.Clone()
			}
			url, conns := strayServer(t, conf, tc.after)
			tr := New(4, clientTLS)
			client := &http.Client{Transport: tr}
			for i := range 2 {
				if i > 0 {
					time.Sleep(tr.settle + 10*time.Millisecond) // rested: reused unless found unfit
					if !tc.stray {
						select {
						case <-idleClosed[tc.tls]:
						case <-time.After(10 * time.Second):
							t.Fatal("the server never closed the idle connection")
						}
					}
				}
				resp, err := client.Get(url)
				if err != nil {
					t.Fatalf("request %d: %v", i, err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(got) != "data: a\n\n" || err != nil {
					t.Fatalf("request %d: HTTP %d body %q err %v, want its own answer", i, resp.StatusCode, got, err)
				}
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("the server saw %d connections, want 2 (the first one not reused)", n)
			}
			w := tr.StrayWarnings()
			switch {
			case tc.stray && (len(w) != 1 || !strings.Contains(w[0], `starting "HTTP/1.1 503 Service Unavailable`)):
				t.Errorf("warnings %q, want one quoting the stray response", w)
			case !tc.stray && len(w) != 0:
				t.Errorf("warnings %q for a server that only closed an idle connection, want none", w)
			}
			// A target found sending strays has no connection parked again, though the second
			// one ended its response cleanly: a stray could come later still.
			tr.mu.Lock()
			parked := len(tr.idle[url])
			tr.mu.Unlock()
			if want := map[bool]int{true: 0, false: 1}[tc.stray]; parked != want {
				t.Errorf("%d connections parked after the second response, want %d", parked, want)
			}
		})
	}
}

func TestTLSErrorUnwraps(t *testing.T) {
	t.Parallel()
	ts := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(ts.Close)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL, nil)
	_, err := New(1, &tls.Config{ServerName: "other.example"}).RoundTrip(req)
	var ve *tls.CertificateVerificationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "TLS handshake with "+ts.Listener.Addr().String()) {
		t.Errorf("error %v: want the handshake's *tls.CertificateVerificationError, naming %s", err, ts.Listener.Addr())
	}
}
