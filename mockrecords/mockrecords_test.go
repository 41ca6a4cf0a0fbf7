package mockrecords_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/scenarios"
)

// TestClientReadsTheMock: what the mock writes of two requests reads back through the client
// (a base URL with a trailing slash works), and each failure names the URL and what it got.
func TestClientReadsTheMock(t *testing.T) {
	t.Parallel()
	_, ts := mocktest.Serve(t, mockprovider.Options{})
	for i, id := range []string{"s-one", "s-two"} {
		input := scenarios.Directive{Scenario: "plain-answer", Seed: uint64(i + 1), Session: id}.String()
		body := `{"model":"m","stream":true,"messages":[{"role":"user","content":` + strconv.Quote(input) + `}]}`
		resp, err := ts.Client().Post(ts.URL+mockprovider.PathOpenAI, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recs, err := mockrecords.Client{HTTP: ts.Client(), URL: ts.URL + "/"}.Sessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Session != "s-one" || recs[1].Session != "s-two" || recs[0].Scenario != "plain-answer" ||
		recs[0].Outcome != "completed" || recs[0].Status != http.StatusOK || recs[0].End.IsZero() || recs[0].Wire != "openai" {
		t.Errorf("records %+v: want the two requests, completed", recs)
	}
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		// Not the mock: the status is quoted.
		{"status", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusNotFound) }, "HTTP 404"},
		// A body that is not the records' JSON.
		{"body", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "{") }, "decode JSON"},
	} {
		srv := httptest.NewServer(tc.handler)
		_, err := mockrecords.Client{URL: srv.URL}.Sessions(context.Background())
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), mockrecords.Path) {
			t.Errorf("%s: err %v, want one naming %s and %q", tc.name, err, mockrecords.Path, tc.want)
		}
	}
}

// TestPromptDigests: prompts that share their first k KiB share their first k digests and
// differ after; an endpoint request's record carries its prompt's digests through the client.
func TestPromptDigests(t *testing.T) {
	t.Parallel()
	shared := strings.Repeat("shared prefix ", 220) // 3,080 bytes: 3 whole KiB
	a, b := mockrecords.PromptDigests(shared+"tail a"), mockrecords.PromptDigests(shared+"tail b")
	if len(a) != 4 || len(b) != 4 || a[0] != b[0] || a[2] != b[2] || a[3] == b[3] || a[0] == a[1] || len(a[0]) != 8 {
		t.Errorf("digests %v and %v: want 4 each, the first 3 equal, the 4th not", a, b)
	}
	if n := len(mockrecords.PromptDigests(strings.Repeat("x", 100<<10))); n != 32 {
		t.Errorf("100 KiB: %d digests, want the cap of 32", n)
	}
	_, ts := mocktest.Serve(t, mockprovider.Options{})
	body := `{"model":"m","stream":true,"max_tokens":3,"messages":[{"role":"user","content":` + strconv.Quote(shared+"tail a") + `}]}`
	resp, err := ts.Client().Post(ts.URL+mockprovider.PathOpenAI, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	recs, err := mockrecords.Client{HTTP: ts.Client(), URL: ts.URL}.Sessions(context.Background())
	if err != nil || len(recs) != 1 || strings.Join(recs[0].PromptDigests, ",") != strings.Join(a, ",") {
		t.Errorf("records %+v, %v: want one with the prompt's digests %v", recs, err, a)
	}
}
