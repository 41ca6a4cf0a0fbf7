// Package transport is the load generator's HTTP/1.1 client for event streams.
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

// Transport is an HTTP/1.1 RoundTripper for thousands of long-lived event streams (http and
// https): one connection per open stream and no goroutine of its own, as net/http's two per
// connection are most of the memory at 10,000 streams (BenchmarkOpenStreamMemory). Safe for
// concurrent use. A connection is parked only when nothing follows the response, and checked
// again after a rest; a target that sends bytes between responses gets no reuse (strays), as
// bytes after the next request could not be told from its response.
type Transport struct {
	dialer  net.Dialer
	maxIdle int // parked connections kept per host
	tls     *tls.Config
	settle  time.Duration // connSettle

	mu   sync.Mutex
	idle map[string][]*streamConn // oldest first
	// hostTLS is tls with ServerName set, one per host: each connection keeps a pointer to
	// its config, and a clone each would cost ~1 KiB per open stream.
	hostTLS map[string]*tls.Config
	strays  map[string]*strayNote // by connKey: never parked again
}

// connSettle is how long a parked connection rests before reuse, so bytes sent after a complete
// response are found rather than taken for the next answer (about session rate × connSettle dials).
const connSettle = 50 * time.Millisecond

// strayNote is what one pool's connections carried between responses.
type strayNote struct {
	conns int    // connections found with bytes between responses
	first []byte // the start of the first of them
}

// strayQuote is how much of the stray bytes a note keeps.
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

// maxResponseHead bounds a response head, which would otherwise grow without end for a target
// that never finishes it (net/http's MaxResponseHeaderBytes).
const maxResponseHead = 1 << 20

var errHeadTooLarge = fmt.Errorf("response head longer than %d bytes", maxResponseHead)

// headLimiter reads at most left more bytes of a head (left < 0: no head, no limit).
type headLimiter struct {
	conn net.Conn
	left int64
}

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

// Buffer sizes. The reader stays with the connection for the stream's life, so it is small:
// header lines are read in pieces and large reads bypass it; only a chunk-size line must fit
// (a chunk extension over ~500 bytes would fail; no server we target sends any).
const (
	streamReadBuffer  = 512
	streamWriteBuffer = 1 << 10
)

var writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, streamWriteBuffer) }}

// New returns a transport parking up to maxIdle connections per host, over tlsConf for https.
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

// connKey names the pool a connection belongs to (scheme included).
func connKey(req *http.Request) string { return req.URL.Scheme + "://" + hostPort(req) }

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

// RoundTrip sends req on a parked or new connection; closing the response body releases it.
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
	// Never sent twice: a server may have acted on the first, and would see the session's
	// thread twice. take finds a parked connection the server closed before it is used.
	return t.exchange(ctx, c, req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// dial opens a new connection for req, reporting it to the request's httptrace hooks.
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
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	c := &streamConn{conn: conn, raw: raw, head: headLimiter{conn: conn, left: -1}}
	c.stamps, _ = raw.(*rxstamp.Conn)
	c.br = bufio.NewReaderSize(&c.head, streamReadBuffer)
	return c, nil
}

// exchange writes req and reads the response head on c, closed when the context ends.
func (t *Transport) exchange(ctx context.Context, c *streamConn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = c.conn.Close() })
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
		// net/http's chunked body keeps the whole *Response for its trailer, ~1 KiB per open
		// stream: decode the chunks from the connection instead.
		body = &chunkedBody{r: httputil.NewChunkedReader(c.br), br: c.br}
	}
	resp.Body = &streamBody{body: body, c: c, stamps: c.stamps, t: t, stop: stop, addr: connKey(req),
		reusable: !resp.Close && resp.ProtoAtLeast(1, 1)}
	return resp, nil
}

// chunkedBody is a chunked body read straight from the connection, trailer included (for reuse).
type chunkedBody struct {
	r   io.Reader
	br  *bufio.Reader
	err error // sticky: io.EOF once the trailer was read
}

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

// end is Read when the chunk reader returned err: apart, and not inlined, so that Read's frame
// stays small, as it sits under every blocked stream's read (runner.stream).
//
//go:noinline
func (b *chunkedBody) end(n int, err error) (int, error) {
	if !errors.Is(err, io.EOF) {
		// httputil says only "unexpected EOF" or "invalid byte in chunk length".
		err = fmt.Errorf("chunked body: %w", err)
	} else if _, terr := textproto.NewReader(b.br).ReadMIMEHeader(); terr != nil {
		if errors.Is(terr, io.EOF) {
			terr = io.ErrUnexpectedEOF
		}
		err = fmt.Errorf("chunked body trailer: %w", terr)
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

// streamBody releases its connection on Close: parked when read to its end and kept alive.
type streamBody struct {
	body     io.ReadCloser
	c        *streamConn
	stamps   *rxstamp.Conn // c.stamps, asked after every frame: here, where a read just was
	t        *Transport
	stop     func() bool
	addr     string
	reusable bool
	eof      bool
	closed   bool
}

// Latest returns when the newest read's data reached this host (rxstamp), if known.
func (b *streamBody) Latest() (time.Time, bool) {
	if b.stamps == nil {
		return time.Time{}, false
	}
	return b.stamps.Latest()
}

// Stamped reports whether the connection keeps its reads' receive times (rxstamp).
func (b *streamBody) Stamped() bool { return b.stamps != nil }

// Read reads the response body, noting when it reached its end.
func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Close releases the connection, parked only when nothing followed the response's end.
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

// take returns the newest rested, quiet parked connection for addr, closing the others it saw.
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

// idle looks, without waiting, for anything to read between responses: in the reader's
// buffer, in what TLS holds, and in the socket (one system call per response, not per frame).
func (c *streamConn) idle() (connState, []byte) {
	if c.br.Buffered() > 0 {
		return connStray, c.buffered()
	}
	_, isTLS := c.conn.(*tls.Conn)
	if isTLS {
		// A read past its deadline makes no system call: it returns only what TLS holds.
		if st, stray := c.readUntil(time.Unix(1, 0)); st != connQuiet {
			return st, stray
		}
	}
	st, peeked := c.peek()
	if st != connStray || !isTLS {
		return st, peeked
	}
	// Under TLS, a close_notify alert (no stray) or data: only decrypting tells.
	if st, stray := c.readUntil(time.Now().Add(tlsRecordWait)); st != connQuiet {
		return st, stray
	}
	return connClosed, nil // a record that did not complete: not reused, not judged
}

// tlsRecordWait bounds the wait for the rest of a TLS record in a parked connection's socket.
const tlsRecordWait = 5 * time.Millisecond

func (c *streamConn) buffered() []byte {
	b, _ := c.br.Peek(min(c.br.Buffered(), strayQuote))
	return bytes.Clone(b)
}

// readUntil reads through TLS into the response reader until deadline (a timeout is not
// sticky in crypto/tls or bufio).
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

// peek looks at the socket without reading it: EAGAIN is quiet, 0 bytes the server's close.
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

// noteStray records bytes found between responses and ends the reuse of addr's pool.
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

// StrayWarnings describes, per target, the bytes its connections carried between responses.
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

// CloseIdleConnections closes every parked connection, after a last look for strays, which a
// run faster than the settle time would otherwise never see.
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
