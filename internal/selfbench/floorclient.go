package selfbench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type floorClientResult struct {
	streams, completed int
	events             int64 // data events before [DONE]
	firstFailure       string
	failed             int
}

// floorClient is the floor's minimal SSE client: a goroutine and a TCP connection per stream,
// the request written by hand, http.ReadResponse on a 4 KiB bufio.Reader, data lines counted.
type floorClient struct {
	count  []byte       // counts only the data lines whose payload begins with it (nil: all)
	http   *http.Client // when set, streams the common way instead: this Client and a bufio.Scanner
	active atomic.Int64
}

// floorRequest is the floor server's request for every stream: all its events, or events > 0 of them.
func floorRequest(url string, events int) func(int) []byte {
	body := `{"stream":true}`
	if events > 0 {
		body = fmt.Sprintf(`{"stream":true,"events":%d}`, events)
	}
	request := fmt.Appendf(nil, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(url, "http://"), len(body), body)
	return func(int) []byte { return request }
}

// run opens streams streams to url over ramp, stream i sending the HTTP/1.1 request(i), and waits for them.
func (c *floorClient) run(ctx context.Context, url string, streams int, ramp time.Duration, request func(i int) []byte) floorClientResult {
	res := floorClientResult{streams: streams}
	var (
		mu     sync.Mutex
		events atomic.Int64
		wg     sync.WaitGroup
	)
	addr := strings.TrimPrefix(url, "http://")
	stream := c.stream
	if c.http != nil {
		stream = c.streamHTTP
		defer c.http.CloseIdleConnections()
	}
	start := time.Now()
	for i := range streams {
		time.Sleep(time.Until(start.Add(time.Duration(i) * ramp / time.Duration(streams))))
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			n, err := stream(ctx, addr, request(i))
			events.Add(n)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				res.failed++
				if res.firstFailure == "" {
					res.firstFailure = err.Error()
				}
				return
			}
			res.completed++
		})
	}
	wg.Wait()
	res.events = events.Load()
	return res
}

// stream sends request on a new connection to addr and counts the response's data events.
func (c *floorClient) stream(ctx context.Context, addr string, request []byte) (int64, error) {
	conn, done, err := dialTCP(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer done()
	if _, err := conn.Write(request); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
	return c.opened(resp, err, c.readLines)
}

// opened counts a 200 response's data events with read while it is open (c.active).
func (c *floorClient) opened(resp *http.Response, err error, read func(body io.Reader) (int64, error)) (int64, error) {
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	c.active.Add(1)
	defer c.active.Add(-1)
	return read(resp.Body)
}

// readLines counts body's data events up to the end marker (a second buffer: the chunked reader gives one chunk).
func (c *floorClient) readLines(body io.Reader) (int64, error) {
	br := bufio.NewReaderSize(body, 1<<10)
	var events int64
	for {
		line, err := br.ReadSlice('\n')
		if c.onLine(line, &events) {
			return events, nil
		}
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n') // the rest of a line longer than the buffer (a final frame): its head was read
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return events, fmt.Errorf("stream ended after %d events without [DONE]", events)
			}
			return events, err
		}
	}
}

// streamHTTP is stream through c.http, the body read by a bufio.Scanner (lines ≤ 1 MiB: a final frame holds the answer).
func (c *floorClient) streamHTTP(ctx context.Context, addr string, request []byte) (int64, error) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(request)))
	if err != nil {
		return 0, fmt.Errorf("the request to send: %w", err)
	}
	req.RequestURI, req.URL.Scheme, req.URL.Host = "", "http", addr
	resp, err := c.http.Do(req.WithContext(ctx))
	return c.opened(resp, err, c.scanLines)
}

func (c *floorClient) scanLines(body io.Reader) (int64, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4<<10), 1<<20)
	var events int64
	for sc.Scan() {
		if c.onLine(sc.Bytes(), &events) {
			return events, nil
		}
	}
	if err := sc.Err(); err != nil {
		return events, err
	}
	return events, fmt.Errorf("stream ended after %d events without [DONE]", events)
}

// onLine counts line in events when c counts it and reports whether it is [DONE] (bare or a JSON string).
func (c *floorClient) onLine(line []byte, events *int64) (done bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data: "))
	switch {
	case !ok:
	case bytes.HasPrefix(rest, []byte("[DONE]")) || bytes.HasPrefix(rest, []byte(`"[DONE]"`)):
		return true
	case c.count == nil || bytes.HasPrefix(rest, c.count):
		*events++
	}
	return false
}
