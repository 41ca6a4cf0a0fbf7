package agentruntime

import (
	"encoding/json"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
	"net/http"
	"strings"
	"testing"
	"time"
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
		// Stopping a run that does not exist.
		{"unknown run", "POST", "/agent/openai-none/runs/run_nope/stop", "", 404, `no open run "run_nope"`},
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
