package agentruntime

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol/simchat"
)

// cuttingTransport fails every provider response body after its first 64 bytes, as a provider
// connection that dies mid-stream.
type cuttingTransport struct{ base http.RoundTripper }

func (c cuttingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusOK {
		resp.Body = &cutBody{ReadCloser: resp.Body, left: 64}
	}
	return resp, err
}

type cutBody struct {
	io.ReadCloser
	left int
}

var errCutForTest = errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: connection reset by peer (cut by the test)")

func (b *cutBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errCutForTest
	}
	n, err := b.ReadCloser.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

// syncBuffer is a log destination safe for the runtime's concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestProviderConnectionFailureIsLogged: a provider stream that dies under the runtime is
// logged at the default level (warn) with its whole cause, which the client's error terminal
// alone does not carry far; a provider's scripted error answer is not.
func TestProviderConnectionFailureIsLogged(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		scenario string
		cut      bool
		wantWarn bool
	}{
		{"connection cut", "plain-answer", true, true},
		{"scripted 429", "provider-429", false, false},
		{"clean", "plain-answer", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			var rt http.RoundTripper = &http.Transport{}
			if c.cut {
				rt = cuttingTransport{base: rt}
			}
			e := newEnv(t, 0, Options{
				ProviderClient: &http.Client{Transport: rt},
				Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
			})
			e.open(clientKind{dialect: simchat.Name, optedIn: true}, "openai-all", c.scenario, 1, "pl-"+strings.ReplaceAll(c.name, " ", "-"))
			var got string
			eventually(t, 5*time.Second, "the run's end logged", func() bool {
				got = logs.String()
				return !c.wantWarn || got != ""
			})
			warned := strings.Contains(got, "provider connection")
			if warned != c.wantWarn {
				t.Fatalf("logged %q: want a provider-connection warning %v", got, c.wantWarn)
			}
			if c.wantWarn && !strings.Contains(got, "connection reset by peer (cut by the test)") {
				t.Errorf("logged %q: want the whole cause", got)
			}
		})
	}
}
