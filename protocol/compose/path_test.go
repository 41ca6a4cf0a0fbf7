package compose

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestPathTemplates: the stream and stop URLs follow the session's templates, values are
// path-escaped, and the stop path derives from a prefixed stream path.
func TestPathTemplates(t *testing.T) {
	t.Parallel()
	resp := &http.Response{Header: http.Header{RunIDHeader: {"run 1"}}}
	for _, tc := range []struct {
		path, stopPath   string
		wantStream       string
		wantStop         string
		wantErr, stopErr bool
	}{
		// Defaults, with the agent id and run id escaped.
		{wantStream: "http://h/base/agent/a%2Fb/stream", wantStop: "http://h/base/agent/a%2Fb/runs/run%201/stop"},
		// A prefixed route: the stop path keeps the prefix.
		{path: "/internal/workflow/agent/{agent}/stream",
			wantStream: "http://h/base/internal/workflow/agent/a%2Fb/stream",
			wantStop:   "http://h/base/internal/workflow/agent/a%2Fb/runs/run%201/stop"},
		// An explicit stop path wins.
		{path: "/v2/{agent}", stopPath: "/v2/{agent}/cancel/{run}",
			wantStream: "http://h/base/v2/a%2Fb", wantStop: "http://h/base/v2/a%2Fb/cancel/run%201"},
		// A custom stream path not ending in /stream: no stop path to derive.
		{path: "/v2/{agent}", wantStream: "http://h/base/v2/a%2Fb", stopErr: true},
		// An unknown placeholder fails the stream request with a *PathError.
		{path: "/agent/{slug}/stream", wantErr: true},
	} {
		s := &protocol.Session{ID: "s1", Target: "a/b", Path: tc.path, StopPath: tc.stopPath}
		req, err := New().NewRequest(context.Background(), "http://h/base/", s)
		if tc.wantErr {
			var pe *protocol.PathError
			if !errors.As(err, &pe) || pe.Placeholder != "{slug}" {
				t.Errorf("path %q: error %v, want a PathError for {slug}", tc.path, err)
			}
			continue
		}
		if err != nil || req.URL.String() != tc.wantStream {
			t.Errorf("path %q: stream URL %v (%v), want %s", tc.path, req.URL, err, tc.wantStream)
			continue
		}
		stop, err := New().NewStopRequest(context.Background(), "http://h/base/", s, resp)
		if tc.stopErr {
			if err == nil {
				t.Errorf("path %q: stop request %v, want an error asking for a stop path", tc.path, stop.URL)
			}
			continue
		}
		if err != nil || stop.URL.String() != tc.wantStop {
			t.Errorf("path %q stop %q: stop URL %v (%v), want %s", tc.path, tc.stopPath, stop.URL, err, tc.wantStop)
		}
	}
}
