package mockprovider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
)

// TestSessionsEndpointJSONAndFilter: the endpoint serves the records in their documented shape,
// equal to the server's own, also as mockrecords' client reads them (a base URL with a trailing
// slash works), and filters by session.
func TestSessionsEndpointJSONAndFilter(t *testing.T) {
	t.Parallel()
	srv, ts := newTestMock(t, Options{TimeScale: 0})
	for _, s := range []string{"one", "two", "two"} {
		resp := post(t, ts.Client(), ts.URL+PathOpenAI, openaiBody(directive("plain-answer", 4, s), true), nil)
		drain(resp)
	}
	resp := post(t, ts.Client(), ts.URL+PathAnthropic, anthropicBody(directive("provider-429", 4, "three"), true), nil)
	resp.Body.Close()

	get := func(query string) (raw []map[string]any, recs []mockrecords.Record) {
		t.Helper()
		resp, err := http.Get(ts.URL + PathSessions + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		body, _ := io.ReadAll(resp.Body)
		var asMaps struct{ Sessions []map[string]any }
		var asRecords struct{ Sessions []mockrecords.Record }
		if err := json.Unmarshal(body, &asMaps); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if err := json.Unmarshal(body, &asRecords); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return asMaps.Sessions, asRecords.Sessions
	}

	raw, recs := get("")
	if len(recs) != 4 {
		t.Fatalf("all sessions: got %d, want 4", len(recs))
	}
	// The documented shape: every key present, times as RFC3339Nano strings, null when unset.
	for _, key := range []string{"session", "scenario", "seed", "wire", "turn", "start", "firstByte", "end", "clientGone", "tokens", "frames", "outcome"} {
		if _, ok := raw[0][key]; !ok {
			t.Errorf("record lacks %q: %v", key, raw[0])
		}
	}
	if raw[0]["clientGone"] != nil {
		t.Errorf("clientGone = %v, want null", raw[0]["clientGone"])
	}
	if _, err := time.Parse(time.RFC3339Nano, raw[0]["start"].(string)); err != nil {
		t.Errorf("start: %v", err)
	}
	if !reflect.DeepEqual(stripMonotonic(recs), stripMonotonic(srv.Sessions(""))) {
		t.Errorf("endpoint and Sessions() disagree:\n%+v\n%+v", recs, srv.Sessions(""))
	}
	fetched, err := mockrecords.Client{HTTP: ts.Client(), URL: ts.URL + "/"}.Sessions(context.Background())
	if err != nil || !reflect.DeepEqual(stripMonotonic(fetched), stripMonotonic(srv.Sessions(""))) {
		t.Errorf("mockrecords.Client fetched %+v (%v), server holds %+v", fetched, err, srv.Sessions(""))
	}
	one := recs[0]
	if one.Session != "one" || one.Scenario != "plain-answer" || one.Seed != 4 || one.Wire != "openai" ||
		one.Outcome != mockrecords.OutcomeCompleted || one.Tokens == 0 || one.Frames == 0 ||
		one.FirstByte.Before(one.Start) || one.End.Before(one.FirstByte) {
		t.Errorf("record one: %+v", one)
	}
	if three := recs[3]; three.Outcome != mockrecords.OutcomeHTTPError || three.Status != http.StatusTooManyRequests || !strings.Contains(three.Error, "429") {
		t.Errorf("record three: %+v, want http-error 429", three)
	}

	if _, recs := get("?session=two"); len(recs) != 2 || recs[0].Session != "two" || recs[1].Session != "two" {
		t.Errorf("?session=two: %+v", recs)
	}
	if _, recs := get("?session=none"); len(recs) != 0 {
		t.Errorf("?session=none: %+v", recs)
	}
}

func TestSessionsRingKeepsTheNewest(t *testing.T) {
	t.Parallel()
	srv, err := New(Options{Library: nil})
	if err == nil || srv != nil {
		t.Fatal("New without a library: want an error")
	}
	srv, _ = newTestMock(t, Options{TimeScale: 0, SessionHistory: 3})
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PathOpenAI, strings.NewReader(openaiBody(directive("plain-answer", 1, s), false))))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d %s", s, rec.Code, rec.Body)
		}
	}
	var got []string
	for _, r := range srv.Sessions("") {
		got = append(got, r.Session)
	}
	if strings.Join(got, ",") != "c,d,e" {
		t.Errorf("ring of 3 after 5 requests holds %v, want c,d,e", got)
	}
	if n := len(srv.Sessions("a")); n != 0 {
		t.Errorf("evicted session a still has %d records", n)
	}
}

func TestSessionRefStopsWritingAfterEviction(t *testing.T) {
	t.Parallel()
	log := newSessionLog(2)
	old := log.add(mockrecords.Record{Session: "old"})
	log.add(mockrecords.Record{Session: "b"})
	log.add(mockrecords.Record{Session: "c"}) // overwrites old's slot
	old.update(func(r *mockrecords.Record) { r.Session = "clobbered" })
	got := log.snapshot("")
	if len(got) != 2 || got[0].Session != "b" || got[1].Session != "c" {
		t.Errorf("after a stale update: %+v, want b, c", got)
	}
}

func TestMetricsCountOutcomes(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	for _, d := range []string{directive("plain-answer", 1, "m1"), directive("provider-429", 1, "m2"), directive("provider-error-midstream", 1, "m3")} {
		resp := post(t, ts.Client(), ts.URL+PathOpenAI, openaiBody(d, true), nil)
		drain(resp)
	}
	resp := post(t, ts.Client(), ts.URL+PathAnthropic, "{", nil)
	resp.Body.Close()
	for series, want := range map[string]float64{
		`streambench_mock_streams_started_total{wire="openai"}`:                           2,
		`streambench_mock_streams_completed_total{wire="openai"}`:                         1,
		`streambench_mock_provider_errors_injected_total{kind="http-429",wire="openai"}`:  1,
		`streambench_mock_provider_errors_injected_total{kind="midstream",wire="openai"}`: 1,
		`streambench_mock_http_errors_total{status="429",wire="openai"}`:                  1,
		`streambench_mock_http_errors_total{status="400",wire="anthropic"}`:               1,
		`streambench_mock_active_streams`:                                                 0,
		`streambench_mock_queue_depth`:                                                    0,
	} {
		if got := metricValue(t, ts.URL, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
	if got := metricValue(t, ts.URL, "streambench_mock_tokens_sent_total"); got <= 0 {
		t.Errorf("tokens_sent_total = %v, want > 0", got)
	}
	for path, want := range map[string]int{
		PathHealth: http.StatusOK,
		// profiles only on a listener of their own (mock --pprof ADDR)
		"/debug/pprof/": http.StatusNotFound, "/debug/pprof/cmdline": http.StatusNotFound,
	} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// stripMonotonic drops monotonic readings and locations so records compare by wall clock.
func stripMonotonic(recs []mockrecords.Record) []mockrecords.Record {
	out := make([]mockrecords.Record, len(recs))
	for i, r := range recs {
		r.Start, r.FirstByte, r.End, r.ClientGone = r.Start.Round(0).UTC(), r.FirstByte.Round(0).UTC(), r.End.Round(0).UTC(), r.ClientGone.Round(0).UTC()
		r.Queued = r.Queued.Round(time.Microsecond)
		out[i] = r
	}
	return out
}

func TestSessionsEndpointAnswersAnEmptyList(t *testing.T) {
	t.Parallel()
	_, ts := newTestMock(t, Options{TimeScale: 0})
	for _, query := range []string{"", "?session=nobody"} {
		resp, err := http.Get(ts.URL + PathSessions + query)
		if err != nil {
			t.Fatal(err)
		}
		body := drain(resp)
		if strings.TrimSpace(string(body)) != `{"sessions":[]}` {
			t.Errorf("GET %s%s = %s, want an empty list", PathSessions, query, body)
		}
	}
}
