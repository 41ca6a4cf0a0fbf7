package mockprovider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// TestFetchSessionsReadsWhatTheEndpointServes plays two requests and reads them back through
// the client: the records equal the server's own, and a base URL with a trailing slash works.
func TestFetchSessionsReadsWhatTheEndpointServes(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 0})
	for _, s := range []string{"one", "two"} {
		resp := post(t, ts.Client(), ts.URL+PathOpenAI, openaiBody(directive("plain-answer", 4, s), true), nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	recs, err := FetchSessions(context.Background(), ts.Client(), ts.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || !reflect.DeepEqual(stripMonotonic(recs), stripMonotonic(srv.Sessions(""))) {
		t.Errorf("fetched %+v, server holds %+v", recs, srv.Sessions(""))
	}
}

// TestFetchSessionsNamesWhatWentWrong: each failure names the URL and what it got.
func TestFetchSessionsNamesWhatWentWrong(t *testing.T) {
	t.Parallel()
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
		ts := httptest.NewServer(tc.handler)
		_, err := FetchSessions(context.Background(), nil, ts.URL)
		ts.Close()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), PathSessions) {
			t.Errorf("%s: err %v, want one naming %s and %q", tc.name, err, PathSessions, tc.want)
		}
	}
}
