package agentruntime

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	pathpkg "path"
	"strings"
	"testing"
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

// FuzzRequestBody: whatever body a client sends to any dialect, the runtime answers with a
// JSON error (4xx) or a stream that ends in an error terminal (the provider here refuses
// connections); it never panics and never answers 5xx.
func FuzzRequestBody(f *testing.F) {
	rt, err := New(Options{ProviderURL: "http://127.0.0.1:1", Heartbeat: -1})
	if err != nil {
		f.Fatal(err)
	}
	h := rt.Handler()
	for _, seed := range []string{`{"input":"hi"}`, `{"message":"hi"}`, `{"input":"hi","stream":true}`, `{"input":`, `[]`, `{"input":null}`, "\x00", `{"input":"a","input":"b"}`} {
		for _, path := range []string{"/api/chat/openai-none", "/api/workflows/openai-none/execute", "/agent/openai-none/stream"} {
			f.Add(path, seed)
		}
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "/debug/") || strings.ContainsAny(path, " \r\n\t?#%") {
			return
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // not a request a client could send (httptest.NewRequest would panic)
		}
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
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
		case w.Code != http.StatusOK && !strings.HasPrefix(w.Body.String(), `{"error":`):
			t.Errorf("%s %q: status %d without a JSON error: %s", path, body, w.Code, w.Body)
		}
	})
}
