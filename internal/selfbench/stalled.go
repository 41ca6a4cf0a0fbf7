package selfbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simchat"
)

// stalledReceiveBuffer is a stalled reader's socket receive buffer: small, so its TCP window
// fills after a few frames and the runtime's writes block, as behind a client that stopped
// reading. (The kernel doubles the value and keeps a floor; the point is not the megabytes of
// an autotuned loopback buffer.)
const stalledReceiveBuffer = 4096

// stalledSegment is the stalled reader's advertised maximum segment size. The sender sizes its
// socket send buffer from its segment size; loopback's 64 KiB segments would let the runtime
// queue megabytes into the kernel per stalled client before a write blocks.
const stalledSegment = 536

// stalledReader is a raw TCP client that sends one sim-chat stream request, reads the response
// head and the first bytes of the stream, then never reads again. It is not a loadgen session,
// so the generator's figures hold only the well-behaved clients.
type stalledReader struct {
	conn net.Conn
}

// openStalledReader connects to the runtime at target, sends s's stream request and reads until
// the response head and at least one body byte arrived (the stream is open and flowing), then
// returns with the connection left unread.
func openStalledReader(ctx context.Context, target string, s *protocol.Session) (*stalledReader, error) {
	req, err := simchat.NewClient(true, simchat.Policy{}).NewRequest(ctx, target, s)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("stalled reader: target %q: %w", target, err)
	}
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			// Set before connect, so the window the handshake advertises is already small.
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledReceiveBuffer)
			if serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, stalledSegment)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("stalled reader: %w", err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("stalled reader: send request: %w", err)
	}
	// Read through the response head and one body byte with a reader that buffers no more than
	// it must: whatever it took from the socket is not in the window any more.
	br := bufio.NewReaderSize(conn, 16)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("stalled reader: response head: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("stalled reader: HTTP %d", resp.StatusCode)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 1)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("stalled reader: first body byte: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &stalledReader{conn: conn}, nil
}

// Close drops the connection.
func (r *stalledReader) Close() error { return r.conn.Close() }
