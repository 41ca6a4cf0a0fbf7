package mockprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
			// a body over 4 MiB
			{"oversized body", http.MethodPost, `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a", MaxBodyBytes) + `"}]}`, nil, http.StatusRequestEntityTooLarge, []string{"larger than", "4194304 bytes"}},
		}
		for _, tt := range tests {
			t.Run(w.path+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				req, err := http.NewRequest(tt.method, ts.URL+w.path, strings.NewReader(tt.body))
				if err != nil {
					t.Fatal(err)
				}
				for k, v := range tt.headers {
					req.Header.Set(k, v)
				}
				resp, err := ts.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
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
