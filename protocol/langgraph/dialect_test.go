package langgraph

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/sse"
)

var (
	_ protocol.DisconnectContinuer = (*Dialect)(nil)
	_ protocol.StructureOnly       = (*Dialect)(nil)
)

// TestRequest: the body a LangGraph SDK sends, on the stateless and the thread route.
func TestRequest(t *testing.T) {
	t.Parallel()
	s := &protocol.Session{ID: "sess-1", Target: "agent", Input: "hello [[streambench scenario=plain-answer seed=1 session=sess-1]]"}
	for _, tc := range []struct {
		name    string
		opts    protocol.Options
		path    *regexp.Regexp
		thread  bool
		onDisc  string
		label   string
		continu bool
	}{
		// The default: a stateless run cancelled when the client leaves.
		{"default", nil, regexp.MustCompile(`^/runs/stream$`), false, "cancel", "langgraph", false},
		// A thread per session, created with the run; runs that go on.
		{"thread continue", protocol.Options{"path": ThreadPath, "onDisconnect": "continue"},
			regexp.MustCompile(`^/threads/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/runs/stream$`), true, "continue", "langgraph-continue", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Options{}).Configure("agent", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			req, err := c.NewRequest(context.Background(), "http://h:1/", s)
			if err != nil {
				t.Fatal(err)
			}
			if req.Method != http.MethodPost || !tc.path.MatchString(req.URL.Path) || req.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s %s %v", req.Method, req.URL.Path, req.Header)
			}
			raw, _ := io.ReadAll(req.Body)
			var body RunRequest
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatal(err)
			}
			if body.AssistantID != "agent" || body.Input == nil || len(body.Input.Messages) != 1 || body.Input.Messages[0].Content != s.Input ||
				strings.Join(body.StreamMode, ",") != "messages-tuple,values,updates" || body.OnDisconnect != tc.onDisc ||
				(body.IfNotExists == "create") != tc.thread {
				t.Errorf("body %s", raw)
			}
			if c.Label() != tc.label || c.(protocol.DisconnectContinuer).ContinuesOnDisconnect() != tc.continu {
				t.Errorf("label %s continues %v", c.Label(), c.(protocol.DisconnectContinuer).ContinuesOnDisconnect())
			}
		})
	}
	for _, bad := range []protocol.Options{{"onDisconnect": "rollback"}, {"path": "/threads/{thred}/runs/stream"}, {"nope": true}} {
		if _, err := New(Options{}).Configure("agent", bad); err == nil {
			t.Errorf("Configure(%v): no error", bad)
		}
	}
	if ThreadID("a") == ThreadID("b") || ThreadID("a") != ThreadID("a") {
		t.Error("ThreadID is not a stable function of the session")
	}
}

// FuzzChecker: no stream makes the checker panic, and the decoder joins any data lines.
func FuzzChecker(f *testing.F) {
	f.Add(render(valid()))
	f.Add(multiLine(valid()))
	f.Add("event: messages\ndata: [{\"type\":\"AIMessageChunk\",\"id\":\"x\",\"tool_call_chunks\":[{\"index\":0}]},{}]\n\n")
	f.Fuzz(func(t *testing.T, raw string) {
		for _, ngt := range []bool{false, true} {
			c := NewChecker(script(), ngt)
			d := sse.NewDecoder(strings.NewReader(raw))
			var e sse.Event
			for d.Next(&e) == nil {
				c.Observe(&e)
			}
			c.Finish(nil)
		}
	})
}
