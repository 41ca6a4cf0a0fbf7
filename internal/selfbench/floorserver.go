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

// The floor's yardsticks: the least code that can serve, relay and read a paced SSE stream.
// Nothing here checks, records or decodes anything, so what the mock, the runtime and the load
// generator cost beyond these is what they pay for being what they are.

// FloorServerCommand and FloorRelayCommand are the hidden `bench` modes the floor measurement
// starts as child processes (`streambench bench floor-server --events N --itl D`,
// `streambench bench floor-relay --upstream URL`); each prints "listening on http://ADDR" and
// serves until interrupted.
const (
	FloorServerCommand = "floor-server"
	FloorRelayCommand  = "floor-relay"
)

// floorFrame is the event the floor server sends: a sim-chat answer chunk of about the size
// the runtime relays to the generator (the codec bench's frame).
const floorFrame = codecFrame

// floorDone ends a floor stream.
const floorDone = "data: [DONE]\n\n"

// floorServerArgs is the floor server child's command line, the one place it is spelled.
func floorServerArgs(events int, itl time.Duration) []string {
	return []string{"bench", FloorServerCommand, "--events", fmt.Sprint(events), "--itl", itl.String()}
}

// floorRelayArgs is the floor relay child's command line.
func floorRelayArgs(upstream string, upstreamHTTP1 bool) []string {
	args := []string{"bench", FloorRelayCommand, "--upstream", upstream}
	if upstreamHTTP1 {
		args = append(args, "--upstream-http1")
	}
	return args
}

// floorProtocols serves HTTP/1.1 and h2c, as the mock and the runtime do.
func floorProtocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// FloorServer is the naive SSE server of the floor: one goroutine per stream (net/http's),
// time.Sleep to each event's scheduled time, a write and a flush per event. Sleeping to the
// schedule rather than for the interval keeps it from drifting, so it emits as many events per
// second as the mock.
type FloorServer struct{ httpServer }

// NewFloorServer serves events events per stream, the first itl after the request and the
// others itl apart, then [DONE]; events must be positive and itl not negative. A request body
// {"events":N} with 0 < N < events asks for a shorter stream (the warm-up's).
func NewFloorServer(events int, itl time.Duration) (*FloorServer, error) {
	if events <= 0 || itl < 0 {
		return nil, fmt.Errorf("floor server: want events > 0 and itl ≥ 0, got %d and %s", events, itl)
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
		_, _ = io.WriteString(w, floorDone)
	})
	return &FloorServer{httpServer{&http.Server{Handler: h, Protocols: floorProtocols(), HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 100_000}}}}, nil
}

// floorRelayConns is how many h2c connections the relay pools to its upstream: the runtime's
// default (agentruntime.DefaultProviderH2CConns), so the floor multiplexes as the runtime does.
const floorRelayConns = 4

// FloorRelay is the bare line-copying relay of the two-hop floor: it forwards each request to
// the upstream and copies the response line by line, flushing whenever nothing more is
// buffered (the runtime's flush policy), with no decoding or encoding at all.
type FloorRelay struct{ httpServer }

// NewFloorRelay relays to upstream (a URL) over h2c on a few pooled connections, or over one
// HTTP/1.1 connection per stream when upstreamHTTP1 is set (the runtime's --provider-http1).
func NewFloorRelay(upstream string, upstreamHTTP1 bool) (*FloorRelay, error) {
	if !strings.HasPrefix(upstream, "http://") {
		return nil, fmt.Errorf("floor relay: upstream %q: want an http:// URL", upstream)
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
	return &FloorRelay{httpServer{&http.Server{Handler: h, Protocols: floorProtocols()}}}, nil
}
