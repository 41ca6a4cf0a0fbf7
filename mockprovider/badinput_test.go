package mockprovider

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
)

func TestBadInputAnswersInTheWiresErrorShape(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	type wireCase struct {
		path string
		body func(text string, stream bool) string
		// assistantTurn is a request body with one assistant message already present.
		assistantTurn string
	}
	wires := []wireCase{
		{PathOpenAI, openaiBody, `{"model":"m","messages":[{"role":"user","content":"` + strings.ReplaceAll(directive("plain-answer", 1, "x"), `"`, `\"`) + `"},{"role":"assistant","content":"done"},{"role":"user","content":"again ` + strings.ReplaceAll(directive("plain-answer", 1, "x"), `"`, `\"`) + `"}]}`},
		{PathAnthropic, anthropicBody, `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"` + directive("plain-answer", 1, "x") + `"},{"role":"assistant","content":"done"},{"role":"user","content":"again ` + directive("plain-answer", 1, "x") + `"}]}`},
	}
	for _, w := range wires {
		tests := []struct {
			name    string
			method  string
			body    string
			headers map[string]string
			status  int
			// message must contain every one of these.
			message []string
		}{
			// GET on a POST-only endpoint: 405 naming the method, with Allow
			{"wrong method", http.MethodGet, "", nil, http.StatusMethodNotAllowed, []string{"method GET", "use POST"}},
			// a body that is not JSON
			{"malformed JSON", http.MethodPost, `{"model": "m", "messages": [`, nil, http.StatusBadRequest, []string{"invalid request body"}},
			// no directive and no headers: say how to select and list what exists
			{"no selection", http.MethodPost, w.body("hello", true), nil, http.StatusBadRequest, []string{"no scenario selected", "[[streambench scenario=NAME", "X-Streambench-Scenario", "plain-answer", "tool-chain"}},
			// a scenario that does not exist: list the known ones
			{"unknown scenario", http.MethodPost, w.body(directive("no-such-thing", 1, "u"), true), nil, http.StatusBadRequest, []string{`unknown scenario "no-such-thing"`, "known scenarios", "plain-answer"}},
			// an unknown scenario in the header wins over a valid directive
			{"unknown scenario header", http.MethodPost, w.body(directive("plain-answer", 1, "u"), true), map[string]string{HeaderScenario: "nope"}, http.StatusBadRequest, []string{`unknown scenario "nope"`}},
			// a directive that is present but broken
			{"malformed directive", http.MethodPost, w.body("[[streambench scenario=plain-answer]]", true), nil, http.StatusBadRequest, []string{"last user message", "missing seed"}},
			// a seed header that is not a number
			{"bad seed header", http.MethodPost, w.body("hi", true), map[string]string{HeaderScenario: "plain-answer", HeaderSeed: "x1"}, http.StatusBadRequest, []string{"X-Streambench-Seed", `"x1"`}},
			// a request for a turn the script does not have
			{"turn beyond the script", http.MethodPost, w.assistantTurn, nil, http.StatusBadRequest, []string{"scenario plain-answer has 1 turn", "no turn 1"}},
			// invalid UTF-8 inside a string: encoding/json would silently turn it into U+FFFD
			{"bad utf-8", http.MethodPost, strings.Replace(w.body("hi", true), "hi", "h\xffi", 1), map[string]string{HeaderScenario: "plain-answer"}, http.StatusBadRequest, []string{"not valid UTF-8 at byte"}},
			// a session id longer than the log keeps: refused, never stored
			{"session header too long", http.MethodPost, w.body("hi", true), map[string]string{HeaderScenario: "plain-answer", HeaderSession: strings.Repeat("s", MaxSelectorBytes+1)}, http.StatusBadRequest, []string{"session id is 257 bytes, at most 256"}},
			// the same through the directive
			{"session directive too long", http.MethodPost, w.body(directive("plain-answer", 1, strings.Repeat("s", 300)), true), nil, http.StatusBadRequest, []string{"session id is 300 bytes"}},
			// a directive field that quotes megabytes back is cut in the answer (and the log)
			{"huge directive echo", http.MethodPost, w.body("[[streambench "+strings.Repeat("x", 100_000)+"]]", true), nil, http.StatusBadRequest, []string{"streambench directive: field", "bytes cut)…", `": expected key=value`}},
			// a body over 4 MiB
			{"oversized body", http.MethodPost, `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", MaxBodyBytes) + `"}]}`, nil, http.StatusRequestEntityTooLarge, []string{"larger than", "4194304 bytes"}},
		}
		for _, tt := range tests {
			if tt.name == "no selection" && w.path == PathAnthropic {
				// Every Messages request has max_tokens: without a directive it is an
				// endpoint's request, answered with that many tokens (endpoint_test.go).
				continue
			}
			t.Run(w.path+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				resp := send(t, ts.Client(), tt.method, ts.URL+w.path, tt.body, tt.headers)
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != tt.status {
					t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != http.MethodPost {
					t.Errorf("Allow %q, want POST", resp.Header.Get("Allow"))
				}
				msg := wireErrorMessage(t, w.path, body)
				if len(msg) > maxErrorMessageBytes {
					t.Errorf("message is %d bytes, over the %d cap", len(msg), maxErrorMessageBytes)
				}
				for _, want := range tt.message {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q does not contain %q", msg, want)
					}
				}
			})
		}
	}
}

// wireErrorMessage checks body is the wire's own error shape and returns its message:
// openai {"error":{"message","type",...}}; anthropic {"type":"error","error":{"type","message"}}.
func wireErrorMessage(t *testing.T, path string, body []byte) string {
	t.Helper()
	var e struct {
		Type  *string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("error body %s lacks error.type/error.message", body)
	}
	switch path {
	case PathOpenAI:
		if e.Type != nil {
			t.Errorf("openai error body %s has a top-level type", body)
		}
	case PathAnthropic:
		if e.Type == nil || *e.Type != "error" {
			t.Errorf(`anthropic error body %s lacks "type":"error"`, body)
		}
	}
	return e.Error.Message
}

// TestBadInputOutsideTheWires: the endpoints that are not a wire answer bad requests with a
// JSON error too, and the sessions endpoint refuses a query it cannot answer as asked.
func TestBadInputOutsideTheWires(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	tests := []struct {
		name, method, path string
		status             int
		message            string
	}{
		// a path the mock does not serve lists the ones it does
		{"unknown path", http.MethodPost, "/v1/completions", http.StatusNotFound, "no route for POST /v1/completions (endpoints: POST /v1/chat/completions"},
		// a near miss of a wire path is no wire path
		{"trailing slash", http.MethodPost, PathOpenAI + "/", http.StatusNotFound, "no route for POST /v1/chat/completions/"},
		// the sessions endpoint is read-only
		{"sessions POST", http.MethodPost, PathSessions, http.StatusMethodNotAllowed, "method POST is not allowed on /_streambench/sessions: use GET"},
		// a query that does not parse is not "every session"
		{"sessions bad escape", http.MethodGet, PathSessions + "?session=%zz", http.StatusBadRequest, `query "session=%zz"`},
		// a typo'd filter is not "every session" either
		{"sessions unknown parameter", http.MethodGet, PathSessions + "?sesion=a", http.StatusBadRequest, `query parameter "sesion" is unknown (known: session)`},
		// two filters cannot both hold
		{"sessions repeated parameter", http.MethodGet, PathSessions + "?session=a&session=b", http.StatusBadRequest, `query parameter "session" given 2 times`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := send(t, ts.Client(), tt.method, ts.URL+tt.path, "{}", nil)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tt.status, body)
			}
			if msg := wireErrorMessage(t, PathOpenAI, body); !strings.Contains(msg, tt.message) {
				t.Errorf("message %q does not contain %q", msg, tt.message)
			}
		})
	}
}

// TestStalledBody: a client that stops sending mid-body is answered 408 once the body read
// timeout passes, and its record says so; the server does not wait for it forever.
func TestStalledBody(t *testing.T) {
	t.Parallel()
	const timeout = 200 * time.Millisecond
	srv, ts := newTestMock(t, Options{TimeScale: 0, BodyReadTimeout: timeout})
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST " + PathAnthropic + " HTTP/1.1\r\nHost: x\r\n" + HeaderSession + ": stalled\r\nContent-Length: 100\r\n\r\n{\"model\":"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response to a stalled body: %v", err)
	}
	body := drain(resp)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408; body %s", resp.StatusCode, body)
	}
	if msg := wireErrorMessage(t, PathAnthropic, body); !strings.Contains(msg, "request body not received within 200ms (got 9 bytes)") {
		t.Errorf("message %q does not name the timeout", msg)
	}
	if recs := srv.Sessions("stalled"); len(recs) != 1 || recs[0].Status != http.StatusRequestTimeout || recs[0].Outcome != mockrecords.OutcomeHTTPError {
		t.Errorf("records %+v, want one 408 http-error", recs)
	}
}
