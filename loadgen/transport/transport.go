// Package transport is the load generator's HTTP/1.1 client for event streams (Transport):
// one connection per open stream and no goroutine of its own, each body timed by the kernel's
// receive stamps (package rxstamp), a target's bytes between responses never read as
// a session's. loadgen uses it for every HTTP/1.1 run; HTTP/2 runs use net/http's.
package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/streambench/streambench/rxstamp"
)

// Transport is an HTTP/1.1 RoundTripper built for thousands of long-lived event streams:
// one connection per open stream, as browsers' EventSource, and no goroutine of its own. The
// caller's goroutine writes the request and reads the response; an idle connection is parked
// with its small read buffer and reused by the next request. net/http's Transport keeps two
// goroutines and two buffers per connection, which at 10,000 open streams is most of the
// generator's memory (see loadgen's BenchmarkOpenStreamMemory).
//
// It speaks http and https: over TLS (crypto/tls, ALPN offering http/1.1 only, SNI and the
// verified name from the URL's host) each stream still has its own connection. A parked
// connection is checked before reuse, and a request is never sent twice (see RoundTrip).
// Safe for concurrent use.
//
// A session is never judged on bytes that were not its response. A connection is parked only
// when nothing follows the response's end (idle: not in the read buffers, not in the
// socket), rests settle before it is reused, and is checked again then; a target found
// sending bytes on a connection between responses (an unsolicited second response) has its
// connection closed, and none of its connections is reused again (strays), since bytes that
// arrive after the next request was sent could not be told from that request's response.
type Transport struct {
	dialer  net.Dialer
	maxIdle int // parked connections kept per host
	tls     *tls.Config
	settle  time.Duration // how long a parked connection rests before reuse (connSettle)

	mu   sync.Mutex
	idle map[string][]*streamConn // oldest first
	// hostTLS is tls with ServerName set, one per host: every connection keeps a pointer to
	// its config, so a per-connection clone would cost ~1 KiB per open stream.
	hostTLS map[string]*tls.Config
	// strays are the pools (connKey) whose connections carried bytes between responses: never
	// parked again.
	strays map[string]*strayNote
}

// connSettle is how long a parked connection rests before it is reused. A target that writes
// something after a complete response (an unsolicited second response, an error page after
// the stream) has it found by the check before reuse (idle) if it came within this time of the
// response's end; a connection reused sooner would send its request first and take those bytes
// for the answer. The closed loop reuses a connection the moment its session ends, so without
// the rest every such target would race it. The cost is a few more connections: about the
// session rate × connSettle, each dialled once.
const connSettle = 50 * time.Millisecond

// strayNote is what one pool's connections carried between responses.
type strayNote struct {
	conns int    // connections found with bytes between responses
	first []byte // the start of the first of them
}

// strayQuote is how much of the bytes found between responses a note keeps.
const strayQuote = 64

// streamConn is one connection and its response reader, which reads through head.
type streamConn struct {
	conn     net.Conn
	raw      net.Conn      // the TCP connection under conn (conn itself without TLS)
	stamps   *rxstamp.Conn // raw read with the kernel's receive times; nil where there are none
	br       *bufio.Reader
	head     headLimiter
	parkedAt time.Time // when it was last parked
}

// maxResponseHead bounds a response head (status line and header lines): the reader would
// otherwise grow a line without end for a target that never finishes its head, until the
// stream timeout. net/http's Transport has the same guard (MaxResponseHeaderBytes, 10 MiB by
// default); event-stream heads are a few hundred bytes.
const maxResponseHead = 1 << 20

// errHeadTooLarge is a response head that reached maxResponseHead without its end.
var errHeadTooLarge = fmt.Errorf("response head longer than %d bytes", maxResponseHead)

// headLimiter is the connection as the response reader sees it: while a head is read, at most
// left more bytes (then errHeadTooLarge); otherwise (left < 0) unlimited.
type headLimiter struct {
	conn net.Conn
	left int64
}

// Read reads from the connection within the limit.
func (h *headLimiter) Read(p []byte) (int, error) {
	switch {
	case h.left < 0:
		return h.conn.Read(p)
	case h.left == 0:
		return 0, errHeadTooLarge
	case int64(len(p)) > h.left:
		p = p[:h.left]
	}
	n, err := h.conn.Read(p)
	h.left -= int64(n)
	return n, err
}

// Buffer sizes: requests are a few hundred bytes (and the writer is pooled). The reader stays
// with the connection for the stream's life, so it is small: header lines of any length are
// read in pieces (textproto), reads at least this large bypass it, and the only thing that
// must fit whole is a chunk-size line ("1a2\r\n"; a chunk extension over ~500 bytes would fail
// as "header line too long" — no server we target sends any).
const (
	streamReadBuffer  = 512
	streamWriteBuffer = 1 << 10
)

var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, streamWriteBuffer) }}

// New returns a transport parking up to maxIdle connections per host. tlsConf
// (nil: system roots, verified) is the base TLS config for https; NextProtos is set to
// http/1.1, the only protocol this transport speaks.
func New(maxIdle int, tlsConf *tls.Config) *Transport {
	if tlsConf == nil {
		tlsConf = &tls.Config{}
	}
	tlsConf = tlsConf.Clone()
	tlsConf.NextProtos = []string{"http/1.1"}
	return &Transport{
		dialer:  net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle: maxIdle,
		tls:     tlsConf,
		settle:  connSettle,
		idle:    make(map[string][]*streamConn),
		hostTLS: make(map[string]*tls.Config),
		strays:  make(map[string]*strayNote),
	}
}

// hostPort is the request's host:port, with the scheme's default port.
func hostPort(req *http.Request) string {
	if req.URL.Port() != "" {
		return req.URL.Host
	}
	port := "80"
	if req.URL.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}

// connKey names the pool a connection belongs to: a TLS and a plain connection to one
// host:port are not interchangeable.
func connKey(req *http.Request) string { return req.URL.Scheme + "://" + hostPort(req) }

// configFor returns the TLS config for host (SNI and the name the certificate must carry).
func (t *Transport) configFor(host string) *tls.Config {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.hostTLS[host]
	if c == nil {
		c = t.tls.Clone()
		if c.ServerName == "" {
			c.ServerName = host
		}
		t.hostTLS[host] = c
	}
	return c
}

// RoundTrip sends req on a parked or new connection and returns the response; its body
// releases the connection when closed (parked again only if it was read to the end).
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeBody(req)
		return nil, fmt.Errorf("loadgen HTTP/1.1 transport: scheme %q not supported (http or https)", req.URL.Scheme)
	}
	key := connKey(req)
	ctx := req.Context()
	c := t.take(key)
	if c == nil {
		var err error
		if c, err = t.dial(ctx, req); err != nil {
			closeBody(req)
			return nil, err
		}
	}
	// A request is never sent twice: a server may have acted on the first, and a resend would
	// carry the same session id, so a runtime that keeps thread history would see the thread
	// twice. A parked connection the server closed, or sent anything on, is found before it is
	// used instead (take).
	return t.exchange(ctx, c, req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// dial opens a new connection for req (TLS for https, the handshake included), reporting it
// to the request's httptrace hooks.
func (t *Transport) dial(ctx context.Context, req *http.Request) (*streamConn, error) {
	addr := hostPort(req)
	trace := httptrace.ContextClientTrace(ctx)
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", addr)
	}
	conn, err := t.dialer.DialContext(ctx, "tcp", addr)
	if trace != nil && trace.ConnectDone != nil {
		trace.ConnectDone("tcp", addr, err)
	}
	if err != nil {
		return nil, err // a *net.OpError already says "dial tcp ADDR: ..."
	}
	conn, _ = rxstamp.Wrap(conn)
	raw := conn
	if req.URL.Scheme == "https" {
		tc := tls.Client(conn, t.configFor(req.URL.Hostname()))
		if trace != nil && trace.TLSHandshakeStart != nil {
			trace.TLSHandshakeStart()
		}
		err := tc.HandshakeContext(ctx)
		if trace != nil && trace.TLSHandshakeDone != nil {
			trace.TLSHandshakeDone(tc.ConnectionState(), err)
		}
		if err != nil {
			_ = conn.Close()
			return nil, &TLSError{Host: addr, Err: err}
		}
		conn = tc
	}
	c := &streamConn{conn: conn, raw: raw, head: headLimiter{conn: conn, left: -1}}
	c.stamps, _ = raw.(*rxstamp.Conn)
	c.br = bufio.NewReaderSize(&c.head, streamReadBuffer)
	return c, nil
}

// TLSError is a failed TLS handshake with a target: Host is host:port, Err crypto/tls's or
// crypto/x509's error, which says why (unknown authority, a name mismatch, expired).
type TLSError struct {
	Host string
	Err  error
}

// Error names the host and the reason.
func (e *TLSError) Error() string { return fmt.Sprintf("TLS handshake with %s: %v", e.Host, e.Err) }

// Unwrap returns the handshake's error (x509.UnknownAuthorityError, x509.HostnameError, ...).
func (e *TLSError) Unwrap() error { return e.Err }

// exchange writes req and reads the response head on c. The request's context closes the
// connection when it ends, which unblocks any read or write on it.
func (t *Transport) exchange(ctx context.Context, c *streamConn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = c.conn.Close() })
	// The errors say in which step the exchange failed; http.Client names the request.
	fail := func(step string, err error) (*http.Response, error) {
		stop()
		_ = c.conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", step, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", step, err)
	}
	w := writerPool.Get().(*bufio.Writer)
	w.Reset(c.conn)
	err := req.Write(w)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	writerPool.Put(w)
	if err != nil {
		return fail("write request", err)
	}
	c.head.left = maxResponseHead
	resp, err := http.ReadResponse(c.br, req)
	c.head.left = -1
	if err != nil {
		return fail("read response head", err)
	}
	body := resp.Body
	if len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked" && body != http.NoBody {
		// net/http's chunked body keeps the whole *Response (headers, and through it the
		// request and its payload) for the trailer, for the stream's life: ~1 KiB per open
		// stream. Nothing of it has been read yet, so decode the chunks from the connection
		// directly and let the response go once the caller is done with its head.
		body = &chunkedBody{r: httputil.NewChunkedReader(c.br), br: c.br}
	}
	resp.Body = &streamBody{body: body, c: c, stamps: c.stamps, t: t, stop: stop, addr: connKey(req),
		reusable: !resp.Close && resp.ProtoAtLeast(1, 1)}
	return resp, nil
}

// chunkedBody is a chunked response body read straight from the connection's reader. After
// the last chunk it reads the trailer section (discarded), so a connection read to the end
// has nothing left buffered and can be reused.
type chunkedBody struct {
	r   io.Reader
	br  *bufio.Reader
	err error // sticky: io.EOF once the trailer was read
}

// Read reads the body; the trailer's errors (a connection cut before its end) are reported.
func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if err != nil {
		return b.end(n, err)
	}
	return n, nil
}

// end is Read when the chunk reader returned err with n bytes: the body's end (the trailer is
// read) or its failure. It is apart from Read, and not inlined, so that Read's frame stays
// small: Read sits under every blocked stream's read (see runner.stream).
//
//go:noinline
func (b *chunkedBody) end(n int, err error) (int, error) {
	if !errors.Is(err, io.EOF) {
		// A cut or malformed chunk (httputil says only "unexpected EOF" or "invalid byte in
		// chunk length"): name the framing that broke.
		err = fmt.Errorf("chunked body: %w", err)
	}
	if errors.Is(err, io.EOF) {
		if _, terr := textproto.NewReader(b.br).ReadMIMEHeader(); terr != nil {
			if errors.Is(terr, io.EOF) {
				terr = io.ErrUnexpectedEOF
			}
			err = fmt.Errorf("chunked body trailer: %w", terr)
		}
	}
	b.err = err
	if n > 0 && !errors.Is(err, io.EOF) {
		// Hand over the data first; the error comes with the next call.
		return n, nil
	}
	return n, err
}

// Close does nothing: streamBody owns the connection.
func (b *chunkedBody) Close() error { return nil }

// streamBody releases its connection on Close: parked for reuse when the body was read to
// its end and the server keeps the connection alive, closed otherwise.
type streamBody struct {
	body     io.ReadCloser
	c        *streamConn
	stamps   *rxstamp.Conn // c.stamps, asked after every frame: kept here, where a read just was
	t        *Transport
	stop     func() bool
	addr     string
	reusable bool
	eof      bool
	closed   bool
}

// Latest returns when the data of the connection's newest read reached this host (the
// kernel's receive time, rxstamp; the read's return where it carried none), and false when
// that is not known (no stamps on this connection, or nothing read yet).
func (b *streamBody) Latest() (time.Time, bool) {
	if b.stamps == nil {
		return time.Time{}, false
	}
	return b.stamps.Latest()
}

// Stamped reports whether the connection keeps its reads' receive times (rxstamp: on Linux,
// where the kernel agreed), so that Latest knows when data arrived once a read was made.
func (b *streamBody) Stamped() bool { return b.stamps != nil }

// Read reads the response body, noting when it reached its end.
func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Close releases the connection (parked or closed); further calls do nothing. Only a
// response read to its end with nothing after it parks its connection.
func (b *streamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	ctxLive := b.stop() // false: the context already ended and closed the connection
	if ctxLive && b.eof && b.reusable {
		switch st, stray := b.c.idle(); st {
		case connQuiet:
			b.t.park(b.addr, b.c)
			return nil
		case connStray:
			b.t.noteStray(b.addr, stray)
		}
	}
	return b.c.conn.Close()
}

// take returns a parked connection for addr that has rested t.settle and on which the server
// has neither closed nor sent anything, if any; the others it looks at are closed (and the
// bytes found on one noted: noteStray). The newest rested connection is taken.
func (t *Transport) take(addr string) *streamConn {
	for {
		t.mu.Lock()
		list := t.idle[addr]
		now := time.Now()
		i := len(list) - 1
		for i >= 0 && now.Sub(list[i].parkedAt) < t.settle {
			i--
		}
		if i < 0 {
			t.mu.Unlock()
			return nil
		}
		c := list[i]
		t.idle[addr] = slices.Delete(list, i, i+1)
		t.mu.Unlock()
		st, stray := c.idle()
		if st == connQuiet {
			return c
		}
		_ = c.conn.Close()
		if st == connStray {
			t.noteStray(addr, stray)
		}
	}
}

// connState is what a look at a connection between responses found.
type connState int

const (
	connQuiet  connState = iota // nothing to read: it may carry the next request
	connClosed                  // the server closed it (EOF, a TLS close_notify) or it failed
	connStray                   // bytes that answer no request
)

// idle looks, without waiting, for anything to read on a connection between responses: in
// the response reader's buffer, in what TLS read but did not hand over, and in the socket (a
// non-blocking peek: one system call per response, not per frame). For stray bytes it
// returns their start.
func (c *streamConn) idle() (connState, []byte) {
	if c.br.Buffered() > 0 {
		return connStray, c.buffered()
	}
	_, isTLS := c.conn.(*tls.Conn)
	if isTLS {
		// A read past its deadline makes no system call: it returns only what TLS holds (a
		// whole record read with the response's end), or times out.
		if st, stray := c.readUntil(time.Unix(1, 0)); st != connQuiet {
			return st, stray
		}
	}
	st, peeked := c.peek()
	if st != connStray || !isTLS {
		return st, peeked
	}
	// Bytes in the socket under TLS: a close_notify alert (a server closing an idle
	// connection, no stray) or data. Only decrypting tells; the record is there or nearly.
	switch st, stray := c.readUntil(time.Now().Add(tlsRecordWait)); st {
	case connQuiet:
		return connClosed, nil // a record that did not complete: not reused, not judged
	default:
		return st, stray
	}
}

// tlsRecordWait bounds the wait for the rest of a TLS record found in a parked connection's
// socket.
const tlsRecordWait = 5 * time.Millisecond

// buffered returns the start of what the response reader holds.
func (c *streamConn) buffered() []byte {
	b, _ := c.br.Peek(min(c.br.Buffered(), strayQuote))
	return bytes.Clone(b)
}

// readUntil reads through the connection (TLS) into the response reader until deadline:
// connQuiet when the read timed out with nothing, connStray with what it got, connClosed at
// EOF (a close_notify) or another error. A timeout is not sticky in crypto/tls or bufio.
func (c *streamConn) readUntil(deadline time.Time) (connState, []byte) {
	if err := c.conn.SetReadDeadline(deadline); err != nil {
		return connClosed, nil
	}
	_, err := c.br.Peek(1)
	if derr := c.conn.SetReadDeadline(time.Time{}); derr != nil {
		return connClosed, nil
	}
	var ne net.Error
	switch {
	case c.br.Buffered() > 0:
		return connStray, c.buffered()
	case errors.As(err, &ne) && ne.Timeout():
		return connQuiet, nil
	}
	return connClosed, nil
}

// peek looks at the socket without reading it: nothing there (EAGAIN) is quiet, 0 bytes the
// server's close, anything else bytes sent between responses (returned, up to strayQuote).
func (c *streamConn) peek() (connState, []byte) {
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return connQuiet, nil // not a socket (tests): nothing to peek at
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return connClosed, nil
	}
	var (
		buf  [strayQuote]byte
		n    int
		rerr error
	)
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait: this is a peek, not a read
	}); err != nil {
		return connClosed, nil
	}
	switch {
	case rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK:
		return connQuiet, nil
	case rerr != nil || n <= 0:
		return connClosed, nil
	}
	return connStray, bytes.Clone(buf[:n])
}

// park keeps c for reuse, unless its pool is full or its target sends strays.
func (t *Transport) park(addr string, c *streamConn) {
	t.mu.Lock()
	if t.strays[addr] == nil && len(t.idle[addr]) < t.maxIdle {
		c.parkedAt = time.Now()
		t.idle[addr] = append(t.idle[addr], c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		_ = c.conn.Close()
	}
}

// noteStray records bytes found on a connection of addr's pool between responses, and stops
// that pool's reuse: the target sends what no request asked for, and what it sends after the
// next request went out would be taken for that request's answer. The connections parked in
// it are closed.
func (t *Transport) noteStray(addr string, stray []byte) {
	t.mu.Lock()
	n := t.strays[addr]
	if n == nil {
		n = &strayNote{first: stray}
		t.strays[addr] = n
	}
	n.conns++
	parked := t.idle[addr]
	delete(t.idle, addr)
	t.mu.Unlock()
	for _, c := range parked {
		_ = c.conn.Close()
	}
}

// StrayWarnings describes, per target, the bytes its connections carried between responses
// (none: nil).
func (t *Transport) StrayWarnings() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, addr := range slices.Sorted(maps.Keys(t.strays)) {
		n := t.strays[addr]
		out = append(out, fmt.Sprintf("%s sent bytes no request asked for on %d keep-alive connection(s), after a complete response "+
			"(an unsolicited response?), starting %q: no session was judged on them, and no connection to it was reused after the first",
			addr, n.conns, n.first))
	}
	return out
}

// CloseIdleConnections closes every parked connection (http.Client.CloseIdleConnections
// calls it), after a last look at each for bytes its server sent after the response: a run
// faster than the settle time never takes a parked connection, and a target's strays would
// otherwise go unreported.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = make(map[string][]*streamConn)
	t.mu.Unlock()
	for addr, list := range idle {
		for _, c := range list {
			if st, stray := c.idle(); st == connStray {
				t.noteStray(addr, stray)
			}
			_ = c.conn.Close()
		}
	}
}
