package session

import (
	"io"
	"strings"
	"testing"
	"time"
)

// arrivedAt is a body whose newest read arrived at a fixed time.
type arrivedAt time.Time

func (a arrivedAt) Latest() (time.Time, bool) { return time.Time(a), true }
func (arrivedAt) Stamped() bool               { return true }
func (arrivedAt) Read([]byte) (int, error)    { return 0, io.EOF }
func (arrivedAt) Close() error                { return nil }

// unstamped is a transport body whose connection keeps no receive times (off Linux).
type unstamped struct{ io.ReadCloser }

func (unstamped) Stamped() bool             { return false }
func (unstamped) Latest() (time.Time, bool) { return time.Time{}, false }

// TestIdleClockFollowsArrivals: the stream's silence counts from when its connection's newest
// bytes arrived, on the monotonic clock, and never moves the clock back past a later touch.
func TestIdleClockFollowsArrivals(t *testing.T) {
	t.Parallel()
	var s streamState
	s.touch()
	// The response head's bytes arrived a minute before the touch after the request: reading
	// them keeps the touch.
	s.setArrivals(arrivedAt(time.Now().Add(-time.Minute)))
	if got := s.silent(); got >= 30*time.Second {
		t.Errorf("silent %v after a touch: a read of earlier bytes moved the clock back", got)
	}
	// An hour of silence, then a read whose bytes arrived 2 s ago (the generator got to them
	// late): silent since their arrival, not since the read.
	s.lastRead.Store(int64(time.Since(monoBase) - time.Hour))
	s.setArrivals(arrivedAt(time.Now().Add(-2 * time.Second)))
	if got := s.silent(); got < 2*time.Second || got >= 30*time.Second {
		t.Errorf("silent %v, want from the bytes' arrival 2 s ago", got)
	}
	// Closing the body between turns forgets its connection, which another stream may take
	// and read from: its reads are not this stream's bytes.
	s.lastRead.Store(int64(time.Since(monoBase) - time.Hour))
	body := arrivedAt(time.Now())
	s.setArrivals(body)
	s.body = body
	s.closeBody()
	if got := s.silent(); got < 30*time.Minute {
		t.Errorf("silent %v after the body was closed: its connection's later reads (another stream's) counted", got)
	}
	// A stamped body is read as it is: its connection keeps the time.
	s.setArrivals(body)
	if _, wrapped := s.watchBody(body).(*watchedBody); wrapped {
		t.Error("a body with receive stamps was wrapped to touch the stream on every read")
	}
	// Without receive stamps (a body of another transport, or the transport's off Linux) every
	// read touches the stream, timed when it returned.
	for _, body := range []io.ReadCloser{io.NopCloser(strings.NewReader("x")), unstamped{io.NopCloser(strings.NewReader("x"))}} {
		s.lastRead.Store(int64(time.Since(monoBase) - time.Hour))
		s.setArrivals(body)
		if _, err := s.watchBody(body).Read(make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		if got := s.silent(); got >= 30*time.Second {
			t.Errorf("%T: silent %v right after a read: the read did not touch the stream", body, got)
		}
	}
}
