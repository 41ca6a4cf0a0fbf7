package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestPreflight: one request per distinct route of the mix, each marked; a 404 on any route
// fails the preflight naming it; any other answer (a 401, a scripted 429) passes; a target
// down gets one request, the first route's.
func TestPreflight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status func(path string) int
		fail   string // "" passes
		max    int    // requests at most
	}{
		// every route answers: all four checked (two profiles share none)
		{"healthy", func(string) int { return http.StatusOK }, "", 4},
		// an answer the run will count, not a wrong route
		{"unauthorized", func(string) int { return http.StatusUnauthorized }, "", 4},
		// one wrong route of four
		{"one 404", func(p string) int {
			if strings.HasSuffix(p, "/anthropic-none") {
				return http.StatusNotFound
			}
			return http.StatusOK
		}, "/api/chat/anthropic-none: HTTP 404", 4},
		// every route wrong: the first says so alone
		{"all 404", func(string) int { return http.StatusNotFound }, "HTTP 404", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var paths []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
				if r.Header.Get(PreflightHeader) != "1" {
					t.Errorf("a request without %s: 1", PreflightHeader)
				}
				w.WriteHeader(tc.status(r.URL.Path))
			}))
			t.Cleanup(srv.Close)
			cfg := Config{Target: srv.URL, Clients: 1, Sessions: 1, NoLeakCheck: true,
				Mix: mixOf(t, []string{"plain-answer"}, optedInAll(), optedInNone())}
			_, err := Preflight(context.Background(), withDialects(cfg))
			var pe *PreflightError
			switch {
			case tc.fail == "" && err != nil:
				t.Errorf("preflight: %v, want a pass", err)
			case tc.fail != "" && (!errors.As(err, &pe) || !strings.Contains(err.Error(), tc.fail)):
				t.Errorf("preflight: %v, want a PreflightError naming %q", err, tc.fail)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(paths) == 0 || len(paths) > tc.max {
				t.Errorf("%d requests (%v), want 1 to %d", len(paths), paths, tc.max)
			}
		})
	}
	// Down: one connection attempt, the error names the route.
	srv := httptest.NewServer(http.NotFoundHandler())
	down := srv.URL
	srv.Close()
	_, err := Preflight(context.Background(), withDialects(Config{Target: down, Clients: 1, Sessions: 1, NoLeakCheck: true}))
	var pe *PreflightError
	if !errors.As(err, &pe) || pe.More != 0 || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("preflight of a target down: %v, want one route refused", err)
	}
}
