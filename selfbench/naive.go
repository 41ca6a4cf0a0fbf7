package selfbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// NaiveServerCommand is the hidden `bench` mode the pacing measurement starts as a child
// process (`streambench bench naive-server --ttft D --itl D --tokens N`): a NaiveServer that
// prints "listening on http://ADDR" and serves until interrupted.
const NaiveServerCommand = "naive-server"

// naiveServerArgs is the naive server child's command line, the one place it is spelled.
func naiveServerArgs(ttft, itl time.Duration, tokens int) []string {
	return []string{"bench", NaiveServerCommand, "--addr", "127.0.0.1:0", "--ttft", ttft.String(), "--itl", itl.String(), "--tokens", strconv.Itoa(tokens)}
}

// NaiveServer is the yardstick the mock's cost and pacing are held to: the OpenAI streaming
// server a Go engineer writes in a few minutes. One goroutine per stream (net/http's),
// HTTP/1.1, encoding/json per chunk, a Flush per chunk and time.Sleep before each token, so its
// schedule drifts by every write's and every wake-up's delay. Its chunks have the mock's shape
// (a role chunk at once, one content chunk per token, a finish chunk and data: [DONE]), so the
// same client measures both.
type NaiveServer struct {
	srv *http.Server
}

// NewNaiveServer returns a server that answers every request with tokens content chunks, the
// first ttft after the request arrived, each next one itl after the previous was written.
func NewNaiveServer(ttft, itl time.Duration, tokens int) (*NaiveServer, error) {
	if ttft < 0 || itl < 0 || tokens <= 0 {
		return nil, fmt.Errorf("naive server: TTFT %s and ITL %s must not be negative, tokens %d must be positive", ttft, itl, tokens)
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
		chunk := naiveChunk{ID: "chatcmpl-naive" + strconv.FormatUint(requests.Add(1), 10), Object: "chat.completion.chunk",
			Created: time.Now().Unix(), Model: "naive", Choices: []naiveChoice{{}}}
		send := func(delta naiveDelta, finish *string) bool {
			chunk.Choices[0].Delta, chunk.Choices[0].FinishReason = delta, finish
			b, err := json.Marshal(chunk)
			if err != nil {
				return false
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return false
			}
			flusher.Flush()
			return r.Context().Err() == nil
		}
		empty := ""
		if !send(naiveDelta{Role: "assistant", Content: &empty}, nil) {
			return
		}
		time.Sleep(ttft)
		for i := range tokens {
			if i > 0 {
				time.Sleep(itl)
			}
			word := naiveWords[i%len(naiveWords)]
			if !send(naiveDelta{Content: &word}, nil) {
				return
			}
		}
		stop := "stop"
		if !send(naiveDelta{}, &stop) {
			return
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	return &NaiveServer{srv: &http.Server{Handler: handler}}, nil
}

// naiveWords are the tokens the naive server sends, about as long as the mock's.
var naiveWords = []string{" streaming", " tokens", " arrive", " one", " frame", " at", " a", " time"}

type naiveChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []naiveChoice `json:"choices"`
}

type naiveChoice struct {
	Index        int        `json:"index"`
	Delta        naiveDelta `json:"delta"`
	Logprobs     *struct{}  `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

type naiveDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// Serve serves on ln until Shutdown; it returns http.ErrServerClosed after Shutdown.
func (n *NaiveServer) Serve(ln net.Listener) error { return n.srv.Serve(ln) }

// Shutdown stops accepting and waits for open streams to end, or ctx to.
func (n *NaiveServer) Shutdown(ctx context.Context) error { return n.srv.Shutdown(ctx) }
