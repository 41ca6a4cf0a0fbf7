package selfbench

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/protocol/simchat"
)

// NewPacedServer serves text (not empty) as an opted-in sim-chat stream to every request:
// headers at once, the first word ttft after the request arrived, the others itl apart, then
// the final envelope and [DONE]. Nothing else sits between its first byte and the generator's
// clock, so TTFC − TTFT against it is the harness's own error.
func NewPacedServer(text string, ttft, itl time.Duration) (httpServer, error) {
	if ttft < 0 || itl < 0 {
		return httpServer{}, errors.New("TTFT and ITL must not be negative")
	}
	frames, tail, err := pacedFrames(text)
	if err != nil {
		return httpServer{}, err
	}
	return httpServer{&http.Server{Handler: pacedHandler(hrtimer.New(), frames, tail, ttft, itl)}}, nil
}

// pacedFrames encodes text as a chunk frame per word, and the final envelope and [DONE].
func pacedFrames(text string) (frames [][]byte, tail []byte, err error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil, errors.New("empty answer")
	}
	frame := func(v any) ([]byte, error) {
		b, err := json.Marshal(v)
		return append(append([]byte("data: "), b...), '\n', '\n'), err
	}
	rest := text
	for rest != "" {
		piece := rest
		if i := strings.IndexByte(rest[1:], ' '); i >= 0 {
			piece = rest[:i+1]
		}
		rest = rest[len(piece):]
		b, err := frame(map[string]string{"blockId": "b1", "chunk": piece})
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, b)
	}
	tail, err = frame(map[string]any{"event": "final", "data": map[string]any{"success": true, "output": map[string]string{"content": text}}})
	return frames, append(tail, "data: \"[DONE]\"\n\n"...), err
}

func pacedHandler(clock *hrtimer.Clock, frames [][]byte, tail []byte, ttft, itl time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		h.Set("X-Accel-Buffering", "no")
		h.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if rc.Flush() != nil {
			return
		}
		waiter := clock.NewWaiter()
		for i, b := range frames {
			if !waiter.Until(r.Context().Done(), arrived.Add(ttft+time.Duration(i)*itl)) {
				return
			}
			if _, err := w.Write(b); err != nil || rc.Flush() != nil {
				return
			}
		}
		_, _ = w.Write(tail)
	})
}
