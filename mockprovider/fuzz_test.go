package mockprovider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// FuzzModelRequest feeds arbitrary bodies and selection headers to both endpoints: the mock
// must never panic and must answer either a stream/response (200) or an error in the wire's
// own JSON shape.
func FuzzModelRequest(f *testing.F) {
	f.Add(openaiBody(directive("plain-answer", 1, "s"), true), "", "", true)
	f.Add(openaiBody(directive("tool-chain", 2, "s"), false), "", "", true)
	f.Add(anthropicBody(directive("thinking-answer", 3, "s"), true), "", "", false)
	f.Add(anthropicBody("hi", true), "parallel-tools", "7", false)
	f.Add(`{"model":"m","messages":[{"role":"assistant","content":"x"}]}`, "plain-answer", "", true)
	f.Add(`{"model":1}`, "", "-1", false)
	f.Add("[[streambench scenario=x seed=1]]", "", "", true)
	srv, err := New(Options{Library: scenarios.Embedded(), TimeScale: 0, SessionHistory: 1000})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, scenario, seed string, openai bool) {
		path := PathAnthropic
		if openai {
			path = PathOpenAI
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if scenario != "" {
			req.Header.Set(HeaderScenario, scenario)
		}
		if seed != "" {
			req.Header.Set(HeaderSeed, seed)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK {
			return
		}
		var e struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("status %d with a body that is not the wire's error shape: %q (%v)", rec.Code, rec.Body, err)
		}
	})
}

// FuzzSessionRecordJSON checks the sessions JSON decoder never panics and that whatever it
// accepts encodes back to a record that decodes to the same value.
func FuzzSessionRecordJSON(f *testing.F) {
	f.Add(`{"session":"s1","scenario":"plain-answer","seed":1,"wire":"openai","turn":0,"start":"2026-01-02T03:04:05.123456789Z","queuedMs":1.5,"firstByte":"2026-01-02T03:04:05.2Z","end":null,"clientGone":null,"tokens":3,"frames":3,"outcome":"completed","status":200}`)
	f.Add(`{"start":"x"}`)
	f.Add(`{}`)
	f.Add(`null`)
	f.Fuzz(func(t *testing.T, data string) {
		var r SessionRecord
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", r, err)
		}
		var back SessionRecord
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("decoding our own %s: %v", out, err)
		}
		out2, _ := json.Marshal(back)
		if !reflect.DeepEqual(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
