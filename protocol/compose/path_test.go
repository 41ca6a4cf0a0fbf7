package compose

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
)

// TestPathTemplates: the stream and stop URLs follow the path and stopPath options, values are
// path-escaped, and the stop path derives from a prefixed stream path; a bad template is an
// error when the client is configured.
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
		{path: "/v2/{agent}", stopErr: true},
		// An unknown placeholder: a *PathError.
		{path: "/agent/{slug}/stream", wantErr: true},
		// An unknown placeholder in the stop path.
		{stopPath: "/agent/{agent}/runs/{id}/stop", stopErr: true},
	} {
		opts := protocol.Options{}
		if tc.path != "" {
			opts["path"] = tc.path
		}
		if tc.stopPath != "" {
			opts["stopPath"] = tc.stopPath
		}
		cl, err := New().Configure("a/b", opts)
		switch {
		case tc.wantErr:
			var pe *protocol.PathError
			if !errors.As(err, &pe) || pe.Placeholder != "{slug}" {
				t.Errorf("path %q: error %v, want a PathError for {slug}", tc.path, err)
			}
			continue
		case tc.stopErr:
			if err == nil || !strings.Contains(err.Error(), "stop") {
				t.Errorf("path %q stop %q: error %v, want one about the stop path", tc.path, tc.stopPath, err)
			}
			continue
		case err != nil:
			t.Errorf("path %q stop %q: %v", tc.path, tc.stopPath, err)
			continue
		}
		s := &protocol.Session{ID: "s1", Target: "a/b"}
		req, err := cl.NewRequest(context.Background(), "http://h/base/", s)
		if err != nil || req.URL.String() != tc.wantStream {
			t.Errorf("path %q: stream URL %v (%v), want %s", tc.path, req.URL, err, tc.wantStream)
			continue
		}
		stop, err := cl.(protocol.Stopper).NewStopRequest(context.Background(), "http://h/base/", s, resp)
		if err != nil || stop.URL.String() != tc.wantStop {
			t.Errorf("path %q stop %q: stop URL %v (%v), want %s", tc.path, tc.stopPath, stop.URL, err, tc.wantStop)
		}
	}
}
