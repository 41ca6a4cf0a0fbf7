package agentruntime

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	pathpkg "path"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseDeployments: any document either parses into deployments that can all be looked up,
// or fails with an error naming the file; it never panics.
func FuzzParseDeployments(f *testing.F) {
	f.Add(defaultDeploymentsYAML)
	f.Add([]byte("deployments:\n  - slug: a\n    wire: openai\n    model: m\n"))
	f.Add([]byte("deployments: [{slug: a, wire: anthropic, model: m, provider: 'http://x'}]"))
	f.Add([]byte("deployments:\n  - slug: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := ParseDeployments("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		for _, slug := range ds.Slugs() {
			if d, ok := ds.Lookup(slug); !ok || d.Slug != slug {
				t.Errorf("slug %q does not look up", slug)
			}
		}
	})
}

// fuzzMaxBody is the body cap of the fuzzed runtime: small, so the fuzzer reaches 413.
const fuzzMaxBody = 512

// dialectFields describe one dialect's request body for the fuzz oracle: the required text
// field and the optional fields with their JSON type, as the docs state them.
var fuzzDialects = map[string]struct {
	required string
	optional map[string]string // name → "string" or "bool"
	// needsStream is the canvas rule: "stream": true or the X-Stream-Response header.
	needsStream bool
}{
	"/api/chat/openai-none":              {"input", map[string]string{"conversationId": "string"}, false},
	"/api/workflows/openai-none/execute": {"input", map[string]string{"stream": "bool"}, true},
	"/agent/openai-none/stream":          {"message", map[string]string{"threadId": "string"}, false},
}

// FuzzRequestBody: whatever path, body and X-Stream-Response header a client sends, the runtime
// never panics, never hangs and never answers 5xx. On the three dialect endpoints an
// independent decode (encoding/json tokens, in order, keys matched case-insensitively as
// encoding/json documents) says what the answer must be: exactly 413 over MaxBody, 400 for an
// empty, non-UTF-8, non-JSON or non-object body, a field of the wrong type, a missing or
// empty required field or a canvas request that does not ask to stream, each with a JSON
// error naming the problem; a stream (200, which here ends in an error terminal: the provider
// refuses connections) only for a valid request. Elsewhere: a JSON error, or a redirect to
// the clean form of an unclean path.
func FuzzRequestBody(f *testing.F) {
	rt, err := New(Options{ProviderURL: "http://127.0.0.1:1", Heartbeat: -1, MaxBody: fuzzMaxBody})
	if err != nil {
		f.Fatal(err)
	}
	h := rt.Handler()
	for _, seed := range []string{`{"input":"hi"}`, `{"message":"hi"}`, `{"input":"hi","stream":true}`, `{"input":`, `[]`, `{"input":null}`, "\x00", `{"input":"a","input":"b"}`,
		`{"INPUT":"hi","Stream":true}`, `{"input":"","input":"x"}`, `{"input":1,"input":"x"}`, "{\"input\":\"\xff\"}", `{"input":"hi","conversationId":7}`, `{"message":"hi","threadId":null}`,
		`null`, ` `, `"hi"`, `{"input":"hi"} x`, `{"input":"hi"}{}`, strings.Repeat("[", 600), `{"input":"` + strings.Repeat("x", fuzzMaxBody) + `"}`} {
		for path := range fuzzDialects {
			f.Add(path, seed, "")
		}
	}
	f.Add("/api/workflows/openai-none/execute", `{"input":"hi"}`, "TRUE")
	f.Add("/api/workflows/openai-none/execute", `{"input":"hi","stream":false}`, "yes")
	f.Fuzz(func(t *testing.T, path, body, streamHeader string) {
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/debug/") || strings.ContainsAny(path, " \r\n\t?#%") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // not a request a client could send (httptest.NewRequest would panic)
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		if streamHeader != "" {
			req.Header["X-Stream-Response"] = []string{streamHeader}
		}
		w := serveBounded(t, h, req)
		if d, ok := fuzzDialects[path]; ok {
			wantStatus, hint := dialectOracle(body, d.required, d.optional, d.needsStream && !strings.EqualFold(streamHeader, "true"))
			if w.Code != wantStatus {
				t.Fatalf("%s %q (X-Stream-Response %q): status %d, want %d (%s): %s", path, body, streamHeader, w.Code, wantStatus, hint, w.Body)
			}
			if wantStatus == http.StatusOK {
				if w.Header().Get("Content-Type") != "text/event-stream" || !strings.Contains(w.Body.String(), "error") || !strings.Contains(w.Body.String(), "[DONE]") {
					t.Errorf("%s %q: stream without error terminal and [DONE]: %s", path, body, w.Body)
				}
				return
			}
			msg := jsonErrorMessage(t, w)
			if !strings.Contains(strings.ToLower(msg), strings.ToLower(hint)) {
				t.Errorf("%s %q: error %q does not name the problem (%q)", path, body, msg, hint)
			}
			return
		}
		switch {
		case w.Code == http.StatusTemporaryRedirect || w.Code == http.StatusMovedPermanently:
			// The mux redirects unclean paths ("/.", "//x") to their clean form, and only those.
			if pathpkg.Clean(path) == path && !strings.HasSuffix(path, "/") {
				t.Errorf("%s: redirected a clean path", path)
			}
		case w.Code >= 500:
			t.Errorf("%s %q: status %d: %s", path, body, w.Code, w.Body)
		case w.Code == http.StatusOK && w.Header().Get("Content-Type") == "text/event-stream":
			if !strings.Contains(w.Body.String(), "error") || !strings.Contains(w.Body.String(), "[DONE]") {
				t.Errorf("%s %q: stream without error terminal and [DONE]: %s", path, body, w.Body)
			}
		case w.Code != http.StatusOK:
			jsonErrorMessage(t, w)
		}
	})
}

// FuzzComposeStop: a stop request for any agent and run id is answered 400 when the id cannot
// be a run id of this runtime, 404 when no such run is open under that agent, 200 only for the
// one open run under its own agent, and 405 for any method but POST; errors are JSON.
func FuzzComposeStop(f *testing.F) {
	rt, err := New(Options{ProviderURL: "http://127.0.0.1:1", Heartbeat: -1})
	if err != nil {
		f.Fatal(err)
	}
	const openAgent, openRun = "openai-none", "run_ABCDEFGHIJKLMNOPQRST"
	stops := 0
	rt.runs.add(openRun, &runEntry{agentID: openAgent, stop: func(error) { stops++ }})
	h := rt.Handler()
	f.Add(uint8(0), openAgent, openRun)
	f.Add(uint8(0), "anthropic-none", openRun)
	f.Add(uint8(0), openAgent, "run_ABCDEFGHIJKLMNOPQRSt")
	f.Add(uint8(0), openAgent, "run_ABCDEFGHIJKLMNOPQRS")
	f.Add(uint8(0), openAgent, "run_ABCDEFGHIJKLMNOPQRS1")
	f.Add(uint8(0), openAgent, "run_AAAAAAAAAAAAAAAAAAAA")
	f.Add(uint8(0), openAgent, "\x00")
	f.Add(uint8(0), "a/b", "run_ABCDEFGHIJKLMNOPQRST/x")
	f.Add(uint8(1), openAgent, openRun)
	methods := []string{http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodHead}
	f.Fuzz(func(t *testing.T, method uint8, agent, run string) {
		for _, seg := range []string{agent, run} {
			if seg == "" || seg == "." || seg == ".." {
				return // the mux redirects such paths to their clean form
			}
		}
		m := methods[int(method)%len(methods)]
		path := "/agent/" + url.PathEscape(agent) + "/runs/" + url.PathEscape(run) + "/stop"
		before := stops
		w := serveBounded(t, h, httptest.NewRequest(m, path, nil))
		if strings.Contains(agent, "/") || strings.Contains(run, "/") {
			// An escaped slash: whether the router takes it for the stop path depends on the
			// method and on how the path cleans; whatever answers, it is a JSON 4xx or the
			// redirect to the clean path, and nothing is stopped.
			if w.Code == http.StatusMovedPermanently || w.Code == http.StatusTemporaryRedirect {
				return
			}
			if w.Code < 400 || w.Code >= 500 || stops != before {
				t.Fatalf("%s agent %q run %q: status %d, %d stops", m, agent, run, w.Code, stops-before)
			}
			if m != http.MethodHead {
				jsonErrorMessage(t, w)
			}
			return
		}
		want := http.StatusNotFound
		switch {
		case m != http.MethodPost:
			want = http.StatusMethodNotAllowed
		case !looksLikeRunID(run):
			want = http.StatusBadRequest
		case agent == openAgent && run == openRun:
			want = http.StatusOK
		}
		if w.Code != want {
			t.Fatalf("%s agent %q run %q: status %d, want %d: %s", m, agent, run, w.Code, want, w.Body)
		}
		if stopped := stops - before; (want == http.StatusOK) != (stopped == 1) {
			t.Fatalf("%s agent %q run %q: %d stops for status %d", m, agent, run, stopped, w.Code)
		}
		if want != http.StatusOK && m != http.MethodHead {
			msg := jsonErrorMessage(t, w)
			if want != http.StatusMethodNotAllowed && !strings.Contains(msg, strconv.Quote(run)) {
				t.Errorf("error %q does not name the run id %q", msg, run)
			}
		}
	})
}

// looksLikeRunID is the fuzz oracle's own reading of the documented run id shape: run_ and
// 20 characters of the base32 alphabet.
func looksLikeRunID(id string) bool {
	rest, ok := strings.CutPrefix(id, "run_")
	if !ok || len(rest) != 20 {
		return false
	}
	return strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") == ""
}

// serveBounded serves req and fails the test when the handler takes more than 10 s: a parser
// that waits for input that will never come is a hang, not a slow answer.
func serveBounded(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, req)
	}()
	select {
	case <-done:
		return w
	case <-time.After(10 * time.Second):
		t.Fatalf("%s %s: no answer within 10 s", req.Method, req.URL)
		return nil
	}
}

// jsonErrorMessage checks the answer is the runtime's JSON error and returns its message.
func jsonErrorMessage(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == nil || *e.Error == "" {
		t.Fatalf("status %d without a JSON error (%v): %q", w.Code, err, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("status %d error with Content-Type %q", w.Code, ct)
	}
	return *e.Error
}

// dialectOracle decides, without the runtime's code, what a dialect endpoint must answer to
// body and which word its error must contain. needsStream is set when the request must ask
// to stream in its body (the canvas without the header).
func dialectOracle(body, required string, optional map[string]string, needsStream bool) (status int, hint string) {
	switch {
	case len(body) > fuzzMaxBody:
		return http.StatusRequestEntityTooLarge, "over"
	case strings.TrimSpace(body) == "":
		return http.StatusBadRequest, "empty"
	case !utf8.ValidString(body):
		return http.StatusBadRequest, "UTF-8"
	case !json.Valid([]byte(body)):
		return http.StatusBadRequest, "not valid JSON"
	}
	var top any
	_ = json.Unmarshal([]byte(body), &top)
	if top == nil {
		return http.StatusBadRequest, `missing "` + required + `"`
	}
	members, ok := objectMembers([]byte(body))
	if !ok {
		return http.StatusBadRequest, "JSON object"
	}
	// Every occurrence of a known field must have its type (null leaves the field unset); the
	// last occurrence is the one that counts, as with encoding/json.
	types := map[string]string{required: "string"}
	for k, v := range optional {
		types[k] = v
	}
	last := map[string]any{}
	for _, m := range members {
		for name, typ := range types {
			if !strings.EqualFold(m.key, name) {
				continue
			}
			var v any
			_ = json.Unmarshal(m.value, &v)
			switch v.(type) {
			case nil:
			case string:
				if typ != "string" {
					return http.StatusBadRequest, name
				}
			case bool:
				if typ != "bool" {
					return http.StatusBadRequest, name
				}
			default:
				return http.StatusBadRequest, name
			}
			if v != nil || typ == "string" && name == required {
				last[name] = v
			}
		}
	}
	if text, _ := last[required].(string); text == "" {
		return http.StatusBadRequest, `missing "` + required + `"`
	}
	if stream, _ := last["stream"].(bool); needsStream && !stream {
		return http.StatusBadRequest, `"stream": true`
	}
	return http.StatusOK, ""
}

// member is one key and its raw value in a JSON object, in document order.
type member struct {
	key   string
	value json.RawMessage
}

// objectMembers lists the members of the top-level JSON object in data, duplicates included;
// ok is false when data is not an object.
func objectMembers(data []byte) (members []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		members = append(members, member{key, raw})
	}
	return members, true
}
