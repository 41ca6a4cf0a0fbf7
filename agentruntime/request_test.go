package agentruntime

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
)

// TestBadInput: every malformed request gets its status and a JSON error that says what was
// wrong, and none leaves a goroutine behind.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{MaxBody: 1024})
	e.open(simChatLegacy, "openai-none", "plain-answer", 1, "warmup")
	base := labelledGoroutines(t, e.rt)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		msg                      string // substring of the JSON error
	}{
		// A slug no deployment has; the error lists the known ones.
		{"unknown slug", "POST", "/api/chat/nope", `{"input":"hi"}`, 404, `unknown deployment: chat slug "nope" (known: [openai-none`},
		// Same for canvas workflow ids and compose agent ids.
		{"unknown workflow", "POST", "/api/workflows/nope/execute", `{"input":"hi","stream":true}`, 404, `workflow "nope"`},
		{"unknown agent", "POST", "/agent/nope/stream", `{"message":"hi"}`, 404, `agent "nope"`},
		// Not JSON at all: the byte offset is named.
		{"bad json", "POST", "/api/chat/openai-none", `{"input":`, 400, "not valid JSON"},
		// A field of the wrong type is named.
		{"wrong type", "POST", "/api/chat/openai-none", `{"input":42}`, 400, `field "input" must be a JSON string`},
		// The required field per dialect.
		{"missing input", "POST", "/api/chat/openai-none", `{"conversationId":"c"}`, 400, `missing "input"`},
		{"missing canvas input", "POST", "/api/workflows/openai-none/execute", `{"stream":true}`, 400, `missing "input"`},
		{"missing message", "POST", "/agent/openai-none/stream", `{"threadId":"t"}`, 400, `missing "message"`},
		// The canvas only streams here, and says how to ask for it.
		{"canvas without stream", "POST", "/api/workflows/openai-none/execute", `{"input":"hi"}`, 400, `"stream": true`},
		// GET on a streaming endpoint.
		{"wrong method", "GET", "/api/chat/openai-none", "", 405, "method GET not allowed"},
		{"wrong method stop", "DELETE", "/agent/openai-none/runs/run_x/stop", "", 405, "use POST"},
		// A body over MaxBody.
		{"too big", "POST", "/api/chat/openai-none", `{"input":"` + strings.Repeat("x", 2048) + `"}`, 413, "over 1024 bytes"},
		// Stopping a run that does not exist (or has finished): a run id, but no open run.
		{"unknown run", "POST", "/agent/openai-none/runs/run_AAAAAAAAAAAAAAAAAAAA/stop", "", 404, `no open run "run_AAAAAAAAAAAAAAAAAAAA"`},
		// Something that cannot be a run id of this runtime is a bad request, not a finished run.
		{"malformed run id", "POST", "/agent/openai-none/runs/run_nope/stop", "", 400, `run id "run_nope" is not a run id`},
		// An empty body is named as such, not as a JSON syntax error at byte 0.
		{"empty body", "POST", "/agent/openai-none/stream", "", 400, "request body: empty, want a JSON object"},
		// A JSON value that is not an object says so instead of naming a Go type.
		{"not an object", "POST", "/api/chat/openai-none", `["hi"]`, 400, "request body must be a JSON object, got array"},
		// Invalid UTF-8 is refused (encoding/json would swap it for U+FFFD and forward another message).
		{"bad utf-8", "POST", "/api/chat/openai-none", "{\"input\":\"a\xff\"}", 400, "not valid UTF-8 at byte 11"},
		// A path that is no endpoint lists the endpoints.
		{"no route", "POST", "/api/chats/x", "{}", 404, "no route for POST /api/chats/x"},
	} {
		req, err := http.NewRequest(tc.method, e.url+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var body struct {
			Error string `json:"error"`
		}
		decErr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		switch {
		case resp.StatusCode != tc.status:
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.status, body.Error)
		case decErr != nil:
			t.Errorf("%s: error body is not JSON: %v", tc.name, decErr)
		case !strings.Contains(body.Error, tc.msg):
			t.Errorf("%s: error %q, want it to contain %q", tc.name, body.Error, tc.msg)
		case resp.Header.Get("Content-Type") != "application/json":
			t.Errorf("%s: content type %q", tc.name, resp.Header.Get("Content-Type"))
		case tc.status == 405 && resp.Header.Get("Allow") != "POST":
			t.Errorf("%s: Allow %q, want POST", tc.name, resp.Header.Get("Allow"))
		}
	}
	eventually(t, 5*time.Second, "goroutines back to baseline", func() bool { return labelledGoroutines(t, e.rt) <= base })
	if got := gauge(t, e.rt.metrics.registry, MetricClientStreamsOpen); got != 0 {
		t.Errorf("open streams = %v after bad requests", got)
	}
}

// TestProviderErrors: an HTTP error before the stream and an error mid-stream both end every
// dialect with its error terminal and [DONE], which the dialect's checker accepts as the
// scripted failure.
func TestProviderErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	t.Cleanup(func() { // after the parallel subtests
		if got := gauge(t, e.rt.metrics.registry, MetricProviderErrors); got != 3*4*2 {
			t.Errorf("provider errors metric = %v, want %d", got, 3*4*2)
		}
	})
	for _, scenario := range []string{"provider-429", "provider-error-midstream", "provider-503-after-tool"} {
		for _, c := range []clientKind{simChatOptIn, simChatLegacy, simCanvas, composeClient} {
			for _, wire := range []string{"openai", "anthropic"} {
				t.Run(scenario+"/"+c.String()+"/"+wire, func(t *testing.T) {
					t.Parallel()
					dep, _ := e.rt.deps.Lookup(wire + "-all")
					sr := e.open(c, dep.Slug, scenario, 2, t.Name())
					if vs := check(t, c, dep, scenario, 2, sr); len(vs) > 0 {
						t.Errorf("violations: %+v\n%s", vs, sr.body)
					}
					terminal := map[string]string{simchat.Name: `"event":"error"`, simcanvas.Name: `execution:error`, compose.Name: `"type":"error"`}[c.dialect]
					if !strings.Contains(string(sr.body), terminal) {
						t.Errorf("no %s terminal in:\n%s", terminal, sr.body)
					}
				})
			}
		}
	}
}

// TestStalledBody: a client that sends its headers and part of a body, then stops, is
// answered 408 with a JSON error once BodyReadTimeout passes, instead of holding the handler;
// and a stream that outlives the timeout is not cut by it (the deadline covers the body only).
func TestStalledBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	e := newEnv(t, 0.2, Options{BodyReadTimeout: timeout})
	for _, tc := range []struct {
		name, head string
	}{
		// A chunked body whose next chunk never comes.
		{"chunked", "POST /api/chat/openai-none HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"inp\r\n"},
		// A declared length the client never sends in full.
		{"short content-length", "POST /agent/openai-none/stream HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"mess"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			// Taken before the write: the server's timeout starts once it has the head, which
			// on a busy machine can be before this goroutine runs again after the write.
			start := time.Now()
			if _, err := io.WriteString(conn, tc.head); err != nil {
				t.Fatal(err)
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no response to a stalled body: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"error":"request body not received within 200ms`) {
				t.Errorf("status %d body %s, want 408 naming the timeout", resp.StatusCode, body)
			}
			if waited := time.Since(start); waited < timeout {
				t.Errorf("answered after %v, before the %v timeout", waited, timeout)
			}
		})
	}
	t.Run("stream outlives the timeout", func(t *testing.T) {
		t.Parallel()
		// plain-answer at a fifth of its scripted time still streams for longer than the timeout.
		resp, body := e.post("/agent/openai-none/stream", nil, `{"message":"`+directive("plain-answer", 1, "outlive")+`"}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"type":"done"`) {
			t.Errorf("status %d, stream %s", resp.StatusCode, body)
		}
	})
}
