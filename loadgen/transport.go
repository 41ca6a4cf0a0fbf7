package loadgen

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"sync"
	"syscall"
	"time"

	"github.com/streambench/streambench/rxstamp"
)

// streamTransport is an HTTP/1.1 RoundTripper built for thousands of long-lived event streams:
// one connection per open stream, as browsers' EventSource, and no goroutine of its own. The
// caller's goroutine writes the request and reads the response; an idle connection is parked
// with its small read buffer and reused by the next request. net/http's Transport keeps two
// goroutines and two buffers per connection, which at 10,000 open streams is most of the
// generator's memory (see BenchmarkOpenStreamMemory).
//
// It speaks http and https: over TLS (crypto/tls, ALPN offering http/1.1 only, SNI and the
// verified name from the URL's host) each stream still has its own connection. A parked
// connection is checked before reuse, and a request is never sent twice (see RoundTrip).
// Safe for concurrent use.
type streamTransport struct {
	dialer  net.Dialer
	maxIdle int // parked connections kept per host
	tls     *tls.Config

	mu   sync.Mutex
	idle map[string][]*streamConn
	// hostTLS is tls with ServerName set, one per host: every connection keeps a pointer to
	// its config, so a per-connection clone would cost ~1 KiB per open stream.
	hostTLS map[string]*tls.Config
}

// streamConn is one connection and its response reader, which reads through head.
type streamConn struct {
	conn   net.Conn
	raw    net.Conn      // the TCP connection under conn (conn itself without TLS)
	stamps *rxstamp.Conn // raw read with the kernel's receive times; nil where there are none
	br     *bufio.Reader
	head   headLimiter
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

// newStreamTransport returns a transport parking up to maxIdle connections per host. tlsConf
// (nil: system roots, verified) is the base TLS config for https; NextProtos is set to
// http/1.1, the only protocol this transport speaks.
func newStreamTransport(maxIdle int, tlsConf *tls.Config) *streamTransport {
	if tlsConf == nil {
		tlsConf = &tls.Config{}
	}
	tlsConf = tlsConf.Clone()
	tlsConf.NextProtos = []string{"http/1.1"}
	return &streamTransport{
		dialer:  net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
		maxIdle: maxIdle,
		tls:     tlsConf,
		idle:    make(map[string][]*streamConn),
		hostTLS: make(map[string]*tls.Config),
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
func (t *streamTransport) configFor(host string) *tls.Config {
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
func (t *streamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		closeBody(req)
		return nil, fmt.Errorf("loadgen HTTP/1.1 transport: scheme %q not supported (http or https)", req.URL.Scheme)
	}
	key := connKey(req)
	ctx := req.Context()
	c, _ := t.take(key)
	if c == nil {
		var err error
		if c, err = t.dial(ctx, req); err != nil {
			closeBody(req)
			return nil, err
		}
	}
	// A request is never sent twice: a server may have acted on the first, and a resend would
	// carry the same session id, so a runtime that keeps thread history would see the thread
	// twice. A parked connection the server closed is found before it is used instead (take).
	return t.exchange(ctx, c, req)
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// dial opens a new connection for req (TLS for https, the handshake included), reporting it
// to the request's httptrace hooks.
func (t *streamTransport) dial(ctx context.Context, req *http.Request) (*streamConn, error) {
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
func (t *streamTransport) exchange(ctx context.Context, c *streamConn, req *http.Request) (*http.Response, error) {
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
	resp.Body = &streamBody{body: body, c: c, t: t, stop: stop, addr: connKey(req),
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
	if err != nil && !errors.Is(err, io.EOF) {
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
	if err != nil && n > 0 && !errors.Is(err, io.EOF) {
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
	t        *streamTransport
	stop     func() bool
	addr     string
	reusable bool
	eof      bool
	closed   bool
}

// Arrived returns when the data of the connection's newest read reached this host (the
// kernel's receive time, rxstamp), on now's clock: now when it is not known. Pass the
// time.Now() taken after the read that completed what is being timed.
func (b *streamBody) Arrived(now time.Time) time.Time {
	if b.c.stamps == nil {
		return now
	}
	return b.c.stamps.Arrived(now)
}

// Read reads the response body, noting when it reached its end.
func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if errors.Is(err, io.EOF) {
		b.eof = true
	}
	return n, err
}

// Close releases the connection (parked or closed); further calls do nothing.
func (b *streamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	ctxLive := b.stop() // false: the context already ended and closed the connection
	if ctxLive && b.eof && b.reusable && b.c.br.Buffered() == 0 {
		b.t.park(b.addr, b.c)
		return nil
	}
	return b.c.conn.Close()
}

// take returns a parked connection for addr that the server has not closed, if any; the
// closed ones it finds are closed on this side too.
func (t *streamTransport) take(addr string) (*streamConn, bool) {
	for {
		t.mu.Lock()
		list := t.idle[addr]
		if len(list) == 0 {
			t.mu.Unlock()
			return nil, false
		}
		c := list[len(list)-1]
		t.idle[addr] = list[:len(list)-1]
		t.mu.Unlock()
		if c.idleOpen() {
			return c, true
		}
		_ = c.conn.Close()
	}
}

// idleOpen reports whether a parked connection is still open: a non-blocking peek at its
// socket finds nothing to read. A server's close (EOF), or anything it sent on an idle
// connection (a TLS close_notify, stray bytes), means it is not reused. One system call per
// reuse, not per frame.
func (c *streamConn) idleOpen() bool {
	sc, ok := c.raw.(syscall.Conn)
	if !ok {
		return true // not a socket (tests): nothing to peek at
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	if err := rc.Read(func(fd uintptr) bool {
		// Nothing to read (EAGAIN) is an open connection; 0 bytes is the server's close, and
		// any byte is something sent on an idle connection.
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true // never wait: this is a peek, not a read
	}); err != nil {
		return false
	}
	return open
}

func (t *streamTransport) park(addr string, c *streamConn) {
	t.mu.Lock()
	if len(t.idle[addr]) < t.maxIdle {
		t.idle[addr] = append(t.idle[addr], c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		_ = c.conn.Close()
	}
}

// CloseIdleConnections closes every parked connection (http.Client.CloseIdleConnections
// calls it).
func (t *streamTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = make(map[string][]*streamConn)
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			_ = c.conn.Close()
		}
	}
}
