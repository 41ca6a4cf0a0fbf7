package agentruntime

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol/langgraph"
)

// TestLangGraphBusyThread: a second run on a thread that is streaming one is answered 409
// before any stream (multitask_strategy reject), and the thread takes a run again once the
// first ended; bad requests are 422 or 404.
func TestLangGraphBusyThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.05, Options{})
	body := func(scenario, session, onDisconnect string) string {
		b, _ := json.Marshal(langgraph.RunRequest{AssistantID: "openai-all", StreamMode: langgraph.StreamModes, OnDisconnect: onDisconnect,
			Input: &langgraph.Input{Messages: []langgraph.InputMessage{{Role: "user", Content: directive(scenario, 1, session)}}}})
		return string(b)
	}
	// The thread id has a quote, which the 409's JSON body must escape.
	const path = "/threads/3f4c64e0-f792-4a5e-aa07-%22a4404e06e0bd/runs/stream"
	req, _ := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body("long-answer", "lg-1", "cancel")))
	req.Header.Set("Content-Type", "application/json")
	first, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read the first event so the run is known to be streaming.
	line, err := bufio.NewReader(first.Body).ReadString('\n')
	if err != nil || first.StatusCode != http.StatusOK || !strings.HasPrefix(line, "event: metadata") {
		t.Fatalf("first run: %d %q %v", first.StatusCode, line, err)
	}
	resp, b := e.post(path, nil, body("plain-answer", "lg-2", "cancel"))
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "busy") {
		t.Errorf("second run on the busy thread: %d %s, want 409", resp.StatusCode, b)
	}
	var busy struct{ Detail string }
	const detail = `Thread 3f4c64e0-f792-4a5e-aa07-"a4404e06e0bd is busy`
	if err := json.Unmarshal(b, &busy); err != nil || !strings.Contains(busy.Detail, detail) {
		t.Errorf("the 409's body %s (%v): want JSON whose detail names the thread", b, err)
	}
	first.Body.Close()
	eventually(t, 5*time.Second, "the thread is free again", func() bool {
		resp, _ := e.post(path, nil, body("plain-answer", "lg-3", "cancel"))
		return resp.StatusCode == http.StatusOK
	})
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{"assistant_id":"openai-all","input":{"messages":[]}}`, http.StatusUnprocessableEntity},
		{strings.Replace(body("plain-answer", "lg-4", "cancel"), `"cancel"`, `"rollback"`, 1), http.StatusUnprocessableEntity},
		{strings.Replace(body("plain-answer", "lg-5", "cancel"), "openai-all", "nope", 1), http.StatusNotFound},
	} {
		if resp, b := e.post("/runs/stream", nil, tc.body); resp.StatusCode != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, resp.StatusCode, b, tc.status)
		}
	}
}
