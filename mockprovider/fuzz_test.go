package mockprovider

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/scenarios"
)

// fuzzMaxBody is the fuzzed mock's body cap: small, so the fuzzer reaches 413.
const fuzzMaxBody = 2048

// FuzzModelRequest feeds arbitrary bodies and selection headers (scenario, seed, session) to
// both endpoints. The mock never panics and never hangs; it answers 200 or an error in the
// wire's own JSON shape, and an independent reading of the request decides what it may
// answer: exactly 413 over the body cap; exactly 400 for an empty, non-UTF-8 or non-JSON
// body; never 200 for a body that is not an object with a model and messages (and
// max_tokens on the anthropic wire), for an invalid seed header, an over-long session id or
// an unknown scenario header, or when nothing selects a scenario; 5xx only for a fault the
// scenario scripts (marked by X-Streambench-Fault).
func FuzzModelRequest(f *testing.F) {
	f.Add(openaiBody(directive("plain-answer", 1, "s"), true), "", "", "", true)
	f.Add(openaiBody(directive("tool-chain", 2, "s"), false), "", "", "", true)
	f.Add(anthropicBody(directive("thinking-answer", 3, "s"), true), "", "", "", false)
	f.Add(anthropicBody("hi", true), "parallel-tools", "7", "", false)
	f.Add(`{"model":"m","messages":[{"role":"assistant","content":"x"}]}`, "plain-answer", "", "", true)
	f.Add(`{"model":1}`, "", "-1", "", false)
	f.Add("[[streambench scenario=x seed=1]]", "", "", "", true)
	f.Add(openaiBody("hi", true), "plain-answer", "18446744073709551616", "", true)
	f.Add(openaiBody("hi", true), "plain-answer", "1", strings.Repeat("s", MaxSelectorBytes+1), true)
	f.Add(strings.Replace(anthropicBody("hi", true), "hi", "h\xffi", 1), "plain-answer", "", "", false)
	f.Add(anthropicBody(directive("plain-answer", 1, strings.Repeat("s", 300)), true), "", "", "", false)
	f.Add(openaiBody(directive("provider-429", 1, "s"), true), "", "", "", true)
	f.Add(openaiBody(strings.Repeat("x", fuzzMaxBody), true), "plain-answer", "", "", true)
	f.Add("", "plain-answer", "", "", false)
	srv, err := New(Options{Library: scenarios.Embedded(), TimeScale: 0, SessionHistory: 1000, MaxBody: fuzzMaxBody})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body, scenario, seed, session string, openai bool) {
		path := PathAnthropic
		if openai {
			path = PathOpenAI
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		for k, v := range map[string]string{HeaderScenario: scenario, HeaderSeed: seed, HeaderSession: session} {
			if v != "" {
				req.Header[k] = []string{v}
			}
		}
		rec := serveBounded(t, srv, req)
		if exact := exactStatus(body); exact != 0 && rec.Code != exact {
			t.Fatalf("%s %q: status %d, want %d: %s", path, body, rec.Code, exact, rec.Body)
		}
		if rec.Code == http.StatusOK {
			if why := whyNotServable(srv, body, scenario, seed, session, openai); why != "" {
				t.Fatalf("%s %q (scenario %q seed %q session %q): 200 for a request that %s", path, body, scenario, seed, session, why)
			}
			return
		}
		if rec.Code >= 500 && rec.Header().Get(HeaderFault) == "" {
			t.Fatalf("%s %q: status %d that no scenario scripted: %s", path, body, rec.Code, rec.Body)
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

// exactStatus is the status a body alone decides, before any parsing: 0 when it decides none.
func exactStatus(body string) int {
	switch {
	case len(body) > fuzzMaxBody:
		return http.StatusRequestEntityTooLarge
	case strings.TrimSpace(body) == "", !utf8.ValidString(body), !json.Valid([]byte(body)):
		return http.StatusBadRequest
	}
	return 0
}

// whyNotServable says why a request must not be answered 200, or "" when nothing the oracle
// knows forbids it. It reads the body with a generic JSON decode, not the wire parsers.
func whyNotServable(srv *Server, body, scenario, seed, session string, openai bool) string {
	var top map[string]any
	if err := json.Unmarshal([]byte(body), &top); err != nil || top == nil {
		return "is not a JSON object"
	}
	var model any
	var messages []any
	var maxTokens any
	for k, v := range top {
		switch {
		case strings.EqualFold(k, "model"):
			model = v
		case strings.EqualFold(k, "messages"):
			messages, _ = v.([]any)
		case strings.EqualFold(k, "max_tokens"):
			maxTokens = v
		}
	}
	switch m, _ := model.(string); {
	case m == "":
		return "has no model"
	case len(messages) == 0:
		return "has no messages"
	case !openai && maxTokens == nil:
		return "has no max_tokens"
	}
	if seed != "" {
		if _, err := strconv.ParseUint(seed, 10, 64); err != nil {
			return "has a seed header that is no unsigned integer"
		}
	}
	if len(session) > MaxSelectorBytes {
		return "has an over-long session header"
	}
	if scenario != "" {
		if _, ok := srv.opts.Library.Get(scenario); !ok {
			return "names an unknown scenario in its header"
		}
	} else if !strings.Contains(body, "[[streambench") {
		return "selects no scenario"
	}
	return ""
}

// serveBounded serves req and fails when the mock takes more than 10 s: with TimeScale 0
// nothing it does waits, so a slow answer is a hang.
func serveBounded(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
		return rec
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s: no answer within 10 s", req.Method, req.URL)
		return nil
	}
}

// FuzzSessionsQuery: any query on the sessions endpoint is answered either 400 with a JSON
// error (a query that does not parse, an unknown or repeated parameter) or 200 with exactly
// the records of the session asked for, every one of them when none is.
func FuzzSessionsQuery(f *testing.F) {
	srv, err := New(Options{Library: scenarios.Embedded(), TimeScale: 0, SessionHistory: 100})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"a", "b", "a", "a b"} {
		req := httptest.NewRequest(http.MethodPost, PathOpenAI, strings.NewReader(openaiBody("hi", false)))
		req.Header.Set(HeaderScenario, "plain-answer")
		req.Header.Set(HeaderSession, s)
		srv.ServeHTTP(httptest.NewRecorder(), req)
	}
	total := len(srv.Sessions(""))
	for _, q := range []string{"", "session=a", "session=a+b", "session=a%20b", "session=%zz", "sesion=a", "session=a&session=b", "session=", "session=a;b", "x", "&", "session=nobody"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		req := httptest.NewRequest(http.MethodGet, PathSessions, nil)
		req.URL.RawQuery = rawQuery
		rec := serveBounded(t, srv, req)
		query, parseErr := url.ParseQuery(rawQuery)
		wantOK := parseErr == nil
		for k, vs := range query {
			if k != "session" || len(vs) > 1 {
				wantOK = false
			}
		}
		if !wantOK {
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("query %q: status %d, want 400: %s", rawQuery, rec.Code, rec.Body)
			}
			var e struct {
				Error struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Message == "" {
				t.Fatalf("query %q: 400 without a JSON error: %s", rawQuery, rec.Body)
			}
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("query %q: status %d, want 200: %s", rawQuery, rec.Code, rec.Body)
		}
		var got struct {
			Sessions []mockrecords.Record `json:"sessions"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("query %q: %v: %s", rawQuery, err, rec.Body)
		}
		want := query.Get("session")
		n := 0
		for _, r := range got.Sessions {
			if want != "" && r.Session != want {
				t.Fatalf("query %q: record of session %q", rawQuery, r.Session)
			}
			n++
		}
		if want == "" && n != total {
			t.Fatalf("query %q: %d records, want all %d", rawQuery, n, total)
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
		var r mockrecords.Record
		if err := json.Unmarshal([]byte(data), &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", r, err)
		}
		var back mockrecords.Record
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("decoding our own %s: %v", out, err)
		}
		out2, _ := json.Marshal(back)
		if !reflect.DeepEqual(out, out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
	})
}
