package selfbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The floor's yardsticks: the least code that can serve, relay and read a paced SSE stream,
// checking, recording and decoding nothing, so what the mock, the runtime and the generator
// cost beyond them is what they pay for being what they are.

// floorFrame is the floor server's event: a sim-chat answer chunk the size the runtime relays.
const floorFrame = codecFrame

// floorProtocols serves HTTP/1.1 and h2c, as the mock and the runtime do.
func floorProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// NewFloorServer is the floor's naive SSE server: events events per stream, itl apart from the
// request, then [DONE] (a request body {"events":N}, 0 < N < events, asks for fewer: the
// warm-up's). A goroutine per stream sleeps to each event's scheduled time (not for the
// interval, which would drift) and writes and flushes it.
func NewFloorServer(events int, itl time.Duration) (httpServer, error) {
	if events <= 0 || itl < 0 {
		return httpServer{}, fmt.Errorf("floor server: want events > 0 and itl ≥ 0, got %d and %s", events, itl)
	}
	frame := []byte(floorFrame)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Events int }
		if json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&req) != nil || req.Events <= 0 || req.Events >= events {
			req.Events = events
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		start := time.Now()
		for i := range req.Events {
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * itl)))
			if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
				return
			}
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	return httpServer{&http.Server{Handler: h, Protocols: floorProtocols(), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 100_000}}}, nil
}

// floorRelayConns is the relay's h2c connections to its upstream, as the runtime's default
// (agentruntime.DefaultProviderH2CConns).
const floorRelayConns = 4

// NewFloorRelay is the two-hop floor's relay: it forwards each request to upstream and copies
// the response line by line, flushing whenever nothing more is buffered (the runtime's flush
// policy), over h2c on pooled connections or, with upstreamHTTP1, one HTTP/1.1 connection per
// stream.
func NewFloorRelay(upstream string, upstreamHTTP1 bool) (httpServer, error) {
	if !strings.HasPrefix(upstream, "http://") {
		return httpServer{}, fmt.Errorf("floor relay: upstream %q: want an http:// URL", upstream)
	}
	t := &http.Transport{MaxIdleConns: 100_000, MaxIdleConnsPerHost: 100_000, IdleConnTimeout: 90 * time.Second}
	if !upstreamHTTP1 {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		t.Protocols, t.MaxConnsPerHost = p, floorRelayConns
	}
	client := &http.Client{Transport: t}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, upstream, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		br := bufio.NewReaderSize(resp.Body, 4<<10)
		for {
			line, err := br.ReadSlice('\n')
			if len(line) > 0 {
				if _, werr := w.Write(line); werr != nil {
					return
				}
			}
			if br.Buffered() == 0 && rc.Flush() != nil {
				return
			}
			if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
				return
			}
		}
	})
	return httpServer{&http.Server{Handler: h, Protocols: floorProtocols()}}, nil
}
