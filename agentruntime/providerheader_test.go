package agentruntime

import (
	"net/http"
	"sync"
	"testing"

	"github.com/streambench/streambench/protocol/simchat"
)

// headerRecorder is a provider transport that keeps the headers of every request it sends.
type headerRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	seen []http.Header
}

func (h *headerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, r.Header.Clone())
	h.mu.Unlock()
	return h.base.RoundTrip(r)
}

// TestProviderHeader: Options.ProviderHeader reaches every provider request, names
// canonicalised, replacing the wire's placeholder Authorization; without it the placeholder
// stays and no gateway header is sent.
func TestProviderHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		header   http.Header
		wantAuth string
		wantPK   string
	}{
		// A gateway in front of the provider: routing headers and the real credential.
		{"set", http.Header{"x-portkey-provider": {"openai"}, "authorization": {"Bearer real"}}, "Bearer real", "openai"},
		// No header configured: the wire's own headers only.
		{"unset", nil, "Bearer streambench", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &headerRecorder{base: &http.Transport{}}
			e := newEnv(t, 0, Options{ProviderHeader: c.header, ProviderClient: &http.Client{Transport: rec}})
			e.open(clientKind{dialect: simchat.Name, optedIn: true}, "openai-all", "preamble-tool", 1, "ph-"+c.name)
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.seen) < 2 {
				t.Fatalf("%d provider requests, want one per turn (2)", len(rec.seen))
			}
			for i, h := range rec.seen {
				if got := h.Values("Authorization"); len(got) != 1 || got[0] != c.wantAuth {
					t.Errorf("request %d: Authorization %q, want [%q]", i, got, c.wantAuth)
				}
				if got := h.Get("X-Portkey-Provider"); got != c.wantPK {
					t.Errorf("request %d: X-Portkey-Provider %q, want %q", i, got, c.wantPK)
				}
			}
		})
	}
}
