package loadgen

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockrecords"
)

// TestProviderRequestsFromRecords: the run's sessions only (not another run's, not a sample's
// replay, not another shard's), per scenario; a retry is a repeated turn of one session (or of
// one swarm child), counted by the status of the attempt it repeated.
func TestProviderRequestsFromRecords(t *testing.T) {
	t.Parallel()
	rec := func(session, scenario string, turn, status int, child string) mockrecords.Record {
		return mockrecords.Record{Session: session, Scenario: scenario, Turn: turn, Status: status, Child: child}
	}
	recs := []mockrecords.Record{
		// A 429 retried twice (the Anthropic SDK), then given up.
		rec("run-0", "provider-429", 0, 429, ""), rec("run-0", "provider-429", 0, 429, ""), rec("run-0", "provider-429", 0, 429, ""),
		// A tool turn, then a 503 retried twice.
		rec("run-1", "provider-503-after-tool", 0, 200, ""), rec("run-1", "provider-503-after-tool", 1, 503, ""),
		rec("run-1", "provider-503-after-tool", 1, 503, ""), rec("run-1", "provider-503-after-tool", 1, 503, ""),
		// Two turns, no retry; a swarm child's turn 0 is not the root's turn 0.
		rec("run-2", "tool-chain", 0, 200, ""), rec("run-2", "tool-chain", 1, 200, ""), rec("run-2", "tool-chain", 0, 200, "0.1"),
		// Not the run's: a replay, another run, no session, a prefix of another run id.
		rec("run-0-replay1", "provider-429", 0, 429, ""), rec("other-0", "plain-answer", 0, 200, ""),
		rec("", "plain-answer", 0, 200, ""), rec("run-x-0", "plain-answer", 0, 200, ""),
	}
	want := []measure.ProviderRequests{
		{Scenario: "provider-429", Sessions: 1, Requests: 3, Retries: 2, RetriesByStatus: map[int]int64{429: 2}},
		{Scenario: "provider-503-after-tool", Sessions: 1, Requests: 4, Retries: 2, RetriesByStatus: map[int]int64{503: 2}},
		{Scenario: "tool-chain", Sessions: 1, Requests: 3},
	}
	got := providerRequests(recs, "run", Shard{})
	if !slices.EqualFunc(got, want, sameProviderRequests) {
		t.Errorf("providerRequests = %+v\nwant %+v", got, want)
	}
	// Shard 1 of 2 owns the odd indices only.
	if got := providerRequests(recs, "run", Shard{Index: 1, Count: 2}); len(got) != 1 || got[0].Scenario != "provider-503-after-tool" {
		t.Errorf("shard 1/2: %+v, want run-1's scenario alone", got)
	}
	w := retriesWarning(want)
	for _, part := range []string{"retried 4 of its 10 provider requests", "429 ×2, 503 ×2", "provider-429, provider-503-after-tool"} {
		if !strings.Contains(w, part) {
			t.Errorf("warning %q lacks %q", w, part)
		}
	}
	if w := retriesWarning(want[2:]); w != "" {
		t.Errorf("warning %q without retries", w)
	}
}

func sameProviderRequests(a, b measure.ProviderRequests) bool {
	if a.Scenario != b.Scenario || a.Sessions != b.Sessions || a.Requests != b.Requests || a.Retries != b.Retries || len(a.RetriesByStatus) != len(b.RetriesByStatus) {
		return false
	}
	for k, v := range a.RetriesByStatus {
		if b.RetriesByStatus[k] != v {
			return false
		}
	}
	return true
}

// retryingTransport retries a provider request answered 429 or 503 up to twice, as the
// Anthropic and OpenAI SDKs do (Sim's Anthropic provider among them): the runtime's client
// sees only the last answer.
type retryingTransport struct{ base http.RoundTripper }

func (rt retryingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := rt.base.RoundTrip(r)
		if err != nil || attempt == 2 || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestProviderRetriesReported: a target whose provider client retries 429 and 503 twice (the
// reference runtime behind a retrying hop) makes three requests for each scripted error. The
// client sees one error; the run's summary counts the requests and the retries per scenario
// from the mock's records, and its verdict warns about them. The same run straight to the
// mock has no retries and no warning.
func TestProviderRetriesReported(t *testing.T) {
	t.Parallel()
	mock := startMock(t, "")
	mockURL, _ := url.Parse(mock)
	proxy := httputil.NewSingleHostReverseProxy(mockURL)
	proxy.FlushInterval = -1
	proxy.Transport = retryingTransport{base: http.DefaultTransport}
	pts := httptest.NewUnstartedServer(proxy)
	pts.Config.Protocols = mockprovider.Protocols()
	pts.Start()
	t.Cleanup(pts.Close)
	for _, retrying := range []bool{true, false} {
		provider := mock
		if retrying {
			provider = pts.URL
		}
		rt, err := agentruntime.New(agentruntime.Options{ProviderURL: provider, ToolTimeScale: testScale, Heartbeat: -1})
		if err != nil {
			t.Fatal(err)
		}
		rts := httptest.NewServer(rt.Handler())
		s := &stack{mockURL: mock, runtimeURL: rts.URL, scale: testScale}
		// Its mock and runtime are not behind ownGauges: the whole process's routes.
		cfg := s.configWholeProcess(mixOf(t, []string{"provider-429", "provider-503-after-tool", "plain-answer"}, optedInAll()), 3, 9)
		cfg.NoLeakCheck = true
		cfg.RunID = "retries-" + map[bool]string{true: "on", false: "off"}[retrying]
		run := runLoad(t, cfg)
		rts.Close()
		_ = rt.Close()
		sum := run.Summary
		if len(sum.Violations) != 0 || !sum.Verdict.Pass {
			t.Errorf("retrying %v: violations %v, verdict %v\n%s", retrying, sum.Violations, sum.Verdict.Pass, describe(run))
		}
		got := map[string]measure.ProviderRequests{}
		for _, p := range sum.ProviderRequests {
			got[p.Scenario] = p
		}
		for _, sc := range []struct {
			scenario string
			status   int
			turns    int64 // turns played, the last one failing
		}{{"provider-429", 429, 1}, {"provider-503-after-tool", 503, 2}} {
			p := got[sc.scenario]
			want := measure.ProviderRequests{Scenario: sc.scenario, Sessions: p.Sessions, Requests: p.Sessions * sc.turns}
			if retrying {
				want.Requests += 2 * p.Sessions
				want.Retries = 2 * p.Sessions
				want.RetriesByStatus = map[int]int64{sc.status: 2 * p.Sessions}
			}
			if p.Sessions == 0 || !sameProviderRequests(p, want) {
				t.Errorf("retrying %v: %s: %+v, want %+v", retrying, sc.scenario, p, want)
			}
		}
		if p := got["plain-answer"]; p.Sessions == 0 || p.Requests != p.Sessions || p.Retries != 0 {
			t.Errorf("retrying %v: plain-answer %+v, want one request per session", retrying, p)
		}
		warned := slices.ContainsFunc(sum.Verdict.Warnings, func(w string) bool { return strings.Contains(w, "the target retried") })
		if warned != retrying {
			t.Errorf("retrying %v: warnings %q", retrying, sum.Verdict.Warnings)
		}
	}
}
