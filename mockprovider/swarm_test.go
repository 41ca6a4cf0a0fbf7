package mockprovider

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/streambench/streambench/scenarios"
)

// TestChildHeader: X-Streambench-Child plays a swarm child's script (its text, not the
// conversation's), records the child's path, and a path the scenario lacks is a 400 naming it.
func TestChildHeader(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 0})
	client := ts.Client()
	body := openaiBody(directive("swarm-depth2", 1, "kid"), true)

	resp := post(t, client, ts.URL+PathOpenAI, body, map[string]string{HeaderChild: "0.1"})
	got := drain(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `" B"`) || !strings.Contains(string(got), "Vendor") {
		t.Fatalf("child 0.1: HTTP %d, want researcher-b's scripted text:\n%s", resp.StatusCode, got)
	}
	if rec := onlySession(t, srv, "kid"); rec.Child != "0.1" {
		t.Errorf("record child %q, want 0.1", rec.Child)
	}
	b, _ := json.Marshal(srv.Sessions("kid")[0])
	if !strings.Contains(string(b), `"child":"0.1"`) {
		t.Errorf("record JSON lacks the child: %s", b)
	}

	resp = post(t, client, ts.URL+PathOpenAI, openaiBody(directive("swarm-depth2", 1, "nokid"), true), map[string]string{HeaderChild: "0.9"})
	got = drain(resp)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), `no swarm child at path \"0.9\"`) {
		t.Errorf("unknown child: HTTP %d %s, want 400 naming the path", resp.StatusCode, got)
	}
}

// A gateway may drop X-Streambench-Child: the directive's child= selects the same script, and a
// header and a directive that disagree are refused, naming both.
func TestChildDirective(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	client := ts.Client()
	text, _ := scenarios.WithChild(directive("swarm-depth2", 1, "kid"), "0.1")
	resp := post(t, client, ts.URL+PathOpenAI, openaiBody(text, true), nil)
	got := drain(resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), `" B"`) || !strings.Contains(string(got), "Vendor") {
		t.Fatalf("child=0.1 in the directive: HTTP %d, want researcher-b's scripted text:\n%s", resp.StatusCode, got)
	}
	resp = post(t, client, ts.URL+PathOpenAI, openaiBody(text, true), map[string]string{HeaderChild: "0"})
	got = drain(resp)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), `in the directive`) {
		t.Errorf("header 0, directive 0.1: HTTP %d %s, want 400 naming both", resp.StatusCode, got)
	}
}
