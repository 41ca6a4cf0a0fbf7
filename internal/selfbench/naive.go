package selfbench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strconv"
	"sync/atomic"
	"time"
)

// NaiveServerCommand is the hidden `bench` mode the pacing measurement starts as a child
// process (`streambench bench naive-server --ttft D --itl D --tokens N`): a NaiveServer that
// prints "listening on http://ADDR" and serves until interrupted.
const NaiveServerCommand = "naive-server"

// naiveServerArgs is the naive server child's command line, the one place it is spelled.
func naiveServerArgs(ttft, itl time.Duration, tokens int, pprof bool) []string {
	args := []string{"bench", NaiveServerCommand, "--addr", "127.0.0.1:0", "--ttft", ttft.String(), "--itl", itl.String(), "--tokens", strconv.Itoa(tokens)}
	if pprof {
		args = append(args, "--pprof")
	}
	return args
}

// NaiveServer is the yardstick the mock's cost and pacing are held to: the OpenAI streaming
// server a Go engineer writes in a few minutes (a goroutine per stream, time.Sleep before each
// token, Write and Flush per chunk), its chunks the mock's shape and framed as cheaply, so the
// comparison is of pacing and serving, not of JSON encoders.
type NaiveServer struct{ httpServer }

// NewNaiveServer returns a server that answers every request with tokens content chunks, the
// first ttft after the request arrived, each next one itl after the previous was written.
func NewNaiveServer(ttft, itl time.Duration, tokens int) (*NaiveServer, error) {
	if ttft < 0 || itl < 0 || tokens <= 0 {
		return nil, fmt.Errorf("naive server: TTFT %s and ITL %s must not be negative, tokens %d must be positive", ttft, itl, tokens)
	}
	// The content deltas, tokens about as long as the mock's.
	var deltas []string
	for _, word := range []string{" streaming", " tokens", " arrive", " one", " frame", " at", " a", " time"} {
		b, err := json.Marshal(map[string]string{"content": word})
		if err != nil {
			return nil, err
		}
		deltas = append(deltas, string(b))
	}
	var requests atomic.Uint64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		head := fmt.Appendf(nil, `data: {"id":"chatcmpl-naive%d","object":"chat.completion.chunk","created":%d,"model":"naive","choices":[{"index":0,"delta":`,
			requests.Add(1), time.Now().Unix())
		buf := make([]byte, 0, 256)
		send := func(delta, finish string) bool {
			buf = append(append(append(append(append(buf[:0], head...), delta...), `,"logprobs":null,"finish_reason":`...), finish...), "}]}\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return false
			}
			flusher.Flush()
			return r.Context().Err() == nil
		}
		if !send(`{"role":"assistant","content":""}`, "null") {
			return
		}
		time.Sleep(ttft)
		for i := range tokens {
			if i > 0 {
				time.Sleep(itl)
			}
			if !send(deltas[i%len(deltas)], "null") {
				return
			}
		}
		if !send("{}", `"stop"`) {
			return
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	return &NaiveServer{httpServer{&http.Server{Handler: handler}}}, nil
}

// ServeProfile has the server answer GET /debug/pprof/profile (a CPU profile, as the mock
// does), so bench pacing --profile can set the yardstick's profile beside the mock's. Call it
// before Serve.
func (n *NaiveServer) ServeProfile() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.Handle("/", n.srv.Handler)
	n.srv.Handler = mux
}
