package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sweep"
)

// endpointMock is the mock behind a recorder of what it was sent: each request's path,
// Authorization and body.
type endpointMock struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []sentRequest
}

type sentRequest struct {
	path, auth string
	body       []byte
}

// chatRequests are the requests sent to /v1/chat/completions so far.
func (m *endpointMock) chatRequests() []sentRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []sentRequest
	for _, r := range m.reqs {
		if r.path == "/v1/chat/completions" {
			out = append(out, r)
		}
	}
	return out
}

func newEndpointMock(t *testing.T, fault mockprovider.Fault) *endpointMock {
	t.Helper()
	mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 1, Fault: fault})
	if err != nil {
		t.Fatal(err)
	}
	m := &endpointMock{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.reqs = append(m.reqs, sentRequest{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
		m.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		mock.ServeHTTP(w, r)
	}))
	t.Cleanup(m.Close)
	return m
}

// TestLoadEndpointWorkload is issue 24's acceptance: `load` against an OpenAI-compatible base
// URL ending in /v1, with a model, an API key and synthetic lengths, sends what an application
// sends (no directive, no tools, no reasoning fields; max_tokens; the key as a bearer token)
// to /v1/chat/completions, passes, and reports TTFT, ITL, TPOT, E2E and throughput; the key is
// in no output line and no results file.
func TestLoadEndpointWorkload(t *testing.T) {
	t.Parallel()
	const key = "sk-test-9f8e7d6c5b4a3210"
	m := newEndpointMock(t, "")
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "load", "--target", m.URL+"/v1", "--dialect", "openai-chat", "--model", "m",
		"--api-key", key, "--input-tokens", "256", "--output-tokens", "64", "--clients", "8", "--duration", "5s",
		"--runtime-metrics", "-", "--run-id", "ep", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	m.mu.Lock()
	reqs := m.reqs
	m.mu.Unlock()
	streams := 0
	for _, r := range reqs {
		if r.path != "/v1/chat/completions" {
			t.Errorf("request to %s, want /v1/chat/completions", r.path)
			continue
		}
		streams++
		if r.auth != "Bearer "+key {
			t.Errorf("Authorization %q, want the key as a bearer token", r.auth)
		}
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatalf("request body: %v: %s", err, r.body)
		}
		for _, absent := range []string{"tools", "reasoning_effort", "reasoning"} {
			if _, ok := body[absent]; ok {
				t.Errorf("the request has %q: %s", absent, r.body)
			}
		}
		if body["model"] != "m" || body["max_tokens"] != float64(64) || bytes.Contains(r.body, []byte("[[streambench")) {
			t.Errorf("want model m, max_tokens 64 and no directive: %s", r.body)
		}
		var tc scenarios.TokenCounter
		msgs, _ := body["messages"].([]any)
		if len(msgs) != 1 {
			t.Fatalf("messages: %s", r.body)
		}
		if n := tc.Text(msgs[0].(map[string]any)["content"].(string)); n != 256 {
			t.Errorf("the prompt has %d tokens, want 256", n)
		}
	}
	if streams < 16 {
		t.Errorf("%d streams, want at least 16 (8 clients for 5 s of ~2.3 s sessions)", streams)
	}
	for _, want := range []string{"verdict: PASS", "ttft p50", "itl p50", "tpot p50", "e2e (duration) p50", " p90 ", " p95 ", " p99 ", "tokens/s", "requests/s"} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q:\n%s", want, output)
		}
	}
	summary, err := os.ReadFile(filepath.Join(out, "ep", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, metric := range []string{`"ttft"`, `"itl"`, `"tpot"`, `"duration"`, `"stream_tokens_per_s"`, `"p90_us"`, `"p95_us"`, `"p99_us"`, `"requests_per_s"`} {
		if !bytes.Contains(summary, []byte(metric)) {
			t.Errorf("summary.json has no %s", metric)
		}
	}
	assertSecretNowhere(t, key, output, out)
}

// TestLoadNoUsageServerEstimatesTokens: a server that sends no usage chunk (TGI, some
// gateways) passes with --no-ground-truth, with a warning, its tokens counted by tiktoken's
// cl100k_base and marked estimated, saying how, in the output and summary.json; the model is
// the only one GET /v1/models lists. (The count itself is pinned against known strings in
// loadgen's TestUsagelessSessionCountedByTokenizer.)
func TestLoadNoUsageServerEstimatesTokens(t *testing.T) {
	t.Parallel()
	m := newEndpointMock(t, mockprovider.FaultOpenAINoUsage)
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "load", "--target", m.URL, "--dialect", "openai-chat", "--no-ground-truth",
		"--output-tokens", "16", "--input-tokens", "uniform:8-32", "--clients", "2", "--sessions", "6",
		"--runtime-metrics", "-", "--run-id", "nu", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	for _, want := range []string{"verdict: PASS", "model: " + mockprovider.Model, "no usage report", "(estimated with tiktoken cl100k_base: "} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q:\n%s", want, output)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "nu", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Tokens struct {
			OutputTokens      int64  `json:"output_tokens"`
			Estimated         bool   `json:"estimated"`
			EstimatedTokens   int64  `json:"estimated_tokens"`
			EstimatedSessions int64  `json:"estimated_sessions"`
			EstimatedWith     string `json:"estimated_with"`
		} `json:"tokens"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if tk := s.Tokens; !tk.Estimated || tk.EstimatedSessions != 6 || tk.OutputTokens < 6*16 || tk.EstimatedTokens != tk.OutputTokens || tk.EstimatedWith != "tiktoken cl100k_base" {
		t.Errorf("summary.json tokens %+v: want every output token (at least 16 a session) estimated with tiktoken cl100k_base, from 6 sessions", tk)
	}
	if !strings.Contains(output, fmt.Sprintf("tokens: %d output", s.Tokens.OutputTokens)) {
		t.Errorf("the console's tokens line is not summary.json's %d:\n%s", s.Tokens.OutputTokens, output)
	}
	for _, r := range m.chatRequests() {
		if !bytes.Contains(r.body, []byte(`"model":"`+mockprovider.Model+`"`)) {
			t.Errorf("the request does not ask for the listed model: %s", r.body)
		}
	}
}

// TestSweepEndpointWithoutSLO is issue 24's sweep acceptance: `sweep --clients 1,2` against an
// OpenAI-compatible base URL, with a key from OPENAI_API_KEY, the model from GET /v1/models and
// synthetic lengths, needs no SLO: it sends what an application sends, prints per step request
// throughput, output tokens/s, goodput and TTFT, ITL, TPOT and E2E at p50/p90/p95/p99, names no
// knee, and writes the TTFT and ITL against throughput plot; the key is nowhere.
func TestSweepEndpointWithoutSLO(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	const key = "sk-sweep-0a1b2c3d4e5f6789"
	m := newEndpointMock(t, "")
	out := filepath.Join(t.TempDir(), "out")
	cmd := []string{"sweep", "--target", m.URL + "/v1", "--dialect", "openai-chat", "--input-tokens", "32", "--output-tokens", "8",
		"--clients", "1,2", "--sessions", "4", "--no-leak-check", "--quiet", "--run-id", "esw", "--out", out}
	code, output := runMainIn(t, "", []string{"OPENAI_API_KEY=" + key}, cmd...)
	if code != 0 {
		t.Fatalf("sweep exit %d:\n%s", code, output)
	}
	for _, want := range []string{"requests/s", "output tokens/s", "goodput/s", "Latency per step (ms)",
		"p50", "p90", "p95", "p99", "no SLO given, so no knee", "peak request throughput"} {
		if !strings.Contains(output, want) {
			t.Errorf("the sweep's output does not say %q:\n%s", want, output)
		}
	}
	for _, step := range []string{"1 clients", "2 clients"} {
		for _, metric := range []string{"ttft", "itl", "tpot", "e2e (duration)"} {
			if !hasRow(output, step+" "+metric, 4) {
				t.Errorf("the latency table has no row %q with p50, p90, p95 and p99:\n%s", step+" "+metric, output)
			}
		}
	}
	if strings.Contains(output, "(knee)") {
		t.Errorf("a sweep without SLO names a knee:\n%s", output)
	}
	res := readSweep(t, filepath.Join(out, "esw"))
	if len(res.Steps) != 2 || res.Knee != -1 {
		t.Fatalf("sweep.json: %d steps, knee %d; want 2 steps and no knee", len(res.Steps), res.Knee)
	}
	for _, st := range res.Steps {
		if !st.Pass || st.Sessions != 4 || st.RequestsPerSecond <= 0 || st.TokensPerSecond <= 0 || st.GoodputShare != 1 {
			t.Errorf("step %s: pass %v, %d sessions, %v requests/s, %v tokens/s, goodput %v", st.Step, st.Pass, st.Sessions, st.RequestsPerSecond, st.TokensPerSecond, st.GoodputShare)
		}
		for _, metric := range []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency, measure.TimePerOutputToken, measure.StreamDuration} {
			if p, ok := st.Latency[metric]; !ok || p.P50 <= 0 || p.P99 < p.P50 {
				t.Errorf("step %s: %s %+v (recorded %v)", st.Step, metric, p, ok)
			}
		}
	}
	for _, f := range []string{"sweep-latency.png", "sweep-latency.svg", "sweep.png", "sweep.md", "esw-c2/summary.json"} {
		if _, err := os.Stat(filepath.Join(out, "esw", f)); err != nil {
			t.Error(err)
		}
	}
	chats := m.chatRequests()
	for _, r := range chats {
		if r.auth != "Bearer "+key || bytes.Contains(r.body, []byte("[[streambench")) || bytes.Contains(r.body, []byte(`"tools"`)) ||
			!bytes.Contains(r.body, []byte(`"max_tokens":8`)) || !bytes.Contains(r.body, []byte(`"model":"`+mockprovider.Model+`"`)) {
			t.Errorf("auth %q, body %s: want the key as a bearer token, the listed model, max_tokens 8, no directive, no tools", r.auth, r.body)
		}
	}
	if len(chats) < 8 {
		t.Errorf("%d streams, want the 8 of the two steps", len(chats))
	}
	assertSecretNowhere(t, key, output, out)
}

// TestSweepEndpointRateStepsNameTheKnee: rate steps with an SLO name the knee; an SLO every
// step meets puts it above the highest step.
func TestSweepEndpointRateStepsNameTheKnee(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	m := newEndpointMock(t, "")
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "sweep", "--target", m.URL, "--dialect", "openai-chat", "--model", "m", "--output-tokens", "8",
		"--rate", "2,4", "--sessions", "4", "--slo", "errors<50%", "--no-leak-check", "--quiet", "--run-id", "esr", "--out", out)
	if code != 0 {
		t.Fatalf("sweep exit %d:\n%s", code, output)
	}
	for _, want := range []string{"the knee is above 4/s", "(knee)", "errors<50%"} {
		if !strings.Contains(output, want) {
			t.Errorf("the sweep's output does not say %q:\n%s", want, output)
		}
	}
	if !hasRow(output, "4/s ttft", 4) {
		t.Errorf("the latency table has no 4/s ttft row:\n%s", output)
	}
}

// hasRow reports whether a line of a text table starts with the words of prefix, followed by
// at least n more cells.
func hasRow(output, prefix string, n int) bool {
	want := strings.Fields(prefix)
	for _, line := range strings.Split(output, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(want)+n && slices.Equal(f[:len(want)], want) {
			return true
		}
	}
	return false
}

// TestRunEndpointOnTheMock: `run` with an endpoint workload plays it against a mock alone (no
// runtime), with the mock's model, and reports the token metrics.
func TestRunEndpointOnTheMock(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "run", "--dialect", "anthropic-messages", "--input-tokens", "16", "--output-tokens", "6",
		"--clients", "2", "--sessions", "4", "--time-scale", "0.1", "--in-process", "--run-id", "er", "--out", out)
	if code != 0 {
		t.Fatalf("run exit %d:\n%s", code, output)
	}
	for _, want := range []string{"as the endpoint, model " + mockprovider.Model, "verdict: PASS", "tokens: 24 output", "ttft p50", "itl p50"} {
		if !strings.Contains(output, want) {
			t.Errorf("the output does not say %q:\n%s", want, output)
		}
	}
	if strings.Contains(output, "runtime http") {
		t.Errorf("run started a runtime for an endpoint workload:\n%s", output)
	}
}

// TestRunRepeat: run --repeat 3 plays the workload three times on fresh stacks, keeps each run
// with its report under OUT/RUN-ID, and writes and prints the spread of TTFT p50 and p99,
// tokens/s and requests/s over them; compare sets two such directories side by side.
func TestRunRepeat(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "run", "--dialect", "openai-chat", "--input-tokens", "16", "--output-tokens", "6",
		"--clients", "2", "--sessions", "4", "--time-scale", "0.1", "--in-process", "--repeat", "3", "--run-id", "rep", "--out", out)
	if code != 0 {
		t.Fatalf("run exit %d:\n%s", code, output)
	}
	if n := strings.Count(output, "as the endpoint, model"); n != 3 {
		t.Errorf("%d stacks started, want one a run:\n%s", n, output)
	}
	dir := filepath.Join(out, "rep")
	for i := 1; i <= 3; i++ {
		run, err := measure.ReadRun(filepath.Join(dir, "rep-"+strconv.Itoa(i)))
		if err != nil || run.Summary.Counters.SessionsStarted != 4 {
			t.Fatalf("run %d: %v", i, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "rep-"+strconv.Itoa(i), "report.html")); err != nil {
			t.Errorf("run %d has no report: %v", i, err)
		}
	}
	r, err := measure.ReadRepeats(dir)
	if err != nil {
		t.Fatal(err)
	}
	figures := map[string]measure.Spread{}
	for _, f := range r.Figures {
		figures[f.Figure] = f
	}
	for _, name := range []string{"ttft p50", "ttft p99", "tokens/s", "requests/s"} {
		f, ok := figures[name]
		if !ok || len(f.Values) != 3 || !(f.Min <= f.Median && f.Median <= f.Max && f.Min > 0) || !strings.Contains(output, "\n"+name+" ") {
			t.Errorf("%s: %+v (in the output: %t), want three runs' values, their median and range", name, f, strings.Contains(output, "\n"+name+" "))
		}
	}
	if !slices.Equal(r.Runs, []string{"rep-1", "rep-2", "rep-3"}) {
		t.Errorf("runs %v", r.Runs)
	}
	code, cmp := runMain(t, "compare", dir, filepath.Join(dir, "rep-1"))
	if code != 0 || !strings.Contains(cmp, "A: 3 runs, B: 1 run") || !strings.Contains(cmp, "ttft p99 (ms)") {
		t.Errorf("compare of the repeats and one run: exit %d:\n%s", code, cmp)
	}
	if code, output := runMain(t, "run", "--repeat", "0"); code != 104 || !strings.Contains(output, "--repeat 0") {
		t.Errorf("--repeat 0: exit %d:\n%s", code, output)
	}
}

// TestEndpointSweepAndRunBadInput: the endpoint flags on sweep and run reject what cannot work,
// naming it, with exit 104.
func TestEndpointSweepAndRunBadInput(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	for _, tc := range []struct {
		args []string
		want string
	}{
		// an endpoint flag without a provider dialect
		{[]string{"sweep", "--clients", "1", "--model", "m"}, "--model is for an inference endpoint"},
		// a bad length
		{[]string{"sweep", "--clients", "1", "--dialect", "openai-chat", "--input-tokens", "lots"}, "--input-tokens"},
		// a fault switch for a runtime the endpoint workload does not start
		{[]string{"sweep", "--clients", "1", "--dialect", "openai-chat", "--output-tokens", "8", "--fault", "no-reset"}, "--fault configures the reference runtime"},
		// a target that is no URL
		{[]string{"sweep", "--clients", "1", "--dialect", "openai-chat", "--output-tokens", "8", "--target", "host:8000"}, "--target"},
		// --tls serves the runtime, which run does not start for an endpoint workload
		{[]string{"run", "--dialect", "openai-chat", "--output-tokens", "8", "--tls"}, "--tls"},
		// a prompt file that is not there
		{[]string{"run", "--dialect", "openai-chat", "--prompts", "/nonexistent/prompts.jsonl"}, "--prompts"},
	} {
		code, output := runMain(t, tc.args...)
		if code != exitUsage || !strings.Contains(output, tc.want) {
			t.Errorf("%q: exit %d, want %d and %q:\n%s", tc.args, code, exitUsage, tc.want, output)
		}
	}
	// A conversation file with a bad line: its file:line and what was expected.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"turns":["hello"]}`+"\n"+`{"turns":[]}`+"\n"), 0o600)
	for _, cmd := range []string{"load", "run", "sweep"} {
		args := map[string][]string{
			"load":  {"load", "--target", "http://127.0.0.1:1", "--dialect", "openai-chat", "--conversations", bad},
			"run":   {"run", "--dialect", "openai-chat", "--conversations", bad},
			"sweep": {"sweep", "--dialect", "openai-chat", "--conversations", bad, "--rate", "sweep"},
		}[cmd]
		code, output := runMain(t, args...)
		if want := bad + `:2: want {"turns":["first user message"`; code != exitUsage || !strings.Contains(output, want) {
			t.Errorf("%s --conversations with a bad line 2: exit %d, want %d and %q:\n%s", cmd, code, exitUsage, want, output)
		}
	}
}

// TestLoadConversations: load --conversations replays each conversation turn by turn against
// the mock (which honours max_tokens): each request carries the history, the mock's real
// answers included; every turn is a request (three per conversation, each measured), the
// conversation the session.
func TestLoadConversations(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	m := newEndpointMock(t, "")
	path := filepath.Join(t.TempDir(), "conversations.jsonl")
	os.WriteFile(path, []byte(`{"conversations":[{"from":"human","value":"first turn"},{"from":"gpt","value":"not sent"},{"from":"human","value":"second turn"},{"from":"gpt","value":"x"},{"from":"human","value":"third turn"}]}`+"\n"), 0o600)
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "load", "--target", m.URL+"/v1", "--dialect", "openai-chat", "--model", "m", "--conversations", path,
		"--output-tokens", "4", "--clients", "2", "--sessions", "2", "--runtime-metrics", "-", "--run-id", "conv", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	if !strings.Contains(output, "tokens: 24 output") {
		t.Errorf("want 2 conversations of 3 answers of 4 tokens:\n%s", output)
	}
	byTurns := map[int]int{}
	for _, r := range m.chatRequests() {
		var body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		n := len(body.Messages)
		byTurns[n]++
		if bytes.Contains(r.body, []byte("not sent")) || body.Messages[n-1].Role != "user" {
			t.Errorf("request %s: want the history ending in the user's turn, never the file's gpt text", r.body)
		}
		if n > 1 && (body.Messages[1].Role != "assistant" || len(strings.Fields(body.Messages[1].Content)) != 4) {
			t.Errorf("request %s: want the mock's 4-token answer as the second message", r.body)
		}
	}
	if byTurns[1] < 2 || byTurns[3] != 2 || byTurns[5] != 2 {
		// (a first turn more: load's preflight request)
		t.Errorf("requests by message count %v; want 2 each of 1, 3 and 5 (three turns of two conversations)", byTurns)
	}
	run, err := measure.ReadRun(filepath.Join(out, "conv"))
	if err != nil {
		t.Fatal(err)
	}
	if c := run.Summary.Counters; c.SessionsStarted != 2 || c.Outcome(measure.OutcomeCompleted) != 2 || c.TurnRequests != 4 {
		t.Errorf("counters %+v; want 2 completed conversations and 4 turn requests besides", c)
	}
	// records.jsonl: one line per request, each turn of each conversation.
	records := readRecords(t, filepath.Join(out, "conv"))
	turns := map[string][]int{}
	for _, r := range records {
		turns[r.Session] = append(turns[r.Session], r.Turn)
		if r.Outcome != measure.OutcomeCompleted || r.OutputTokens != 4 || r.Dialect != "openai-chat" || r.Start.IsZero() ||
			!(r.TTFTMs > 0 && r.TTFCMs > 0 && r.E2EMs >= r.TTFTMs) || len(r.Rules) > 0 || r.Warmup {
			t.Errorf("record %+v: want a completed request of 4 tokens, its latencies measured", r)
		}
	}
	if len(records) != 6 || len(turns) != 2 || run.Summary.Records == nil || run.Summary.Records.Written != 6 || run.Summary.Records.LeftOut != 0 {
		t.Errorf("%d records of sessions %v, summary %+v: want turns 1, 2, 3 of 2 conversations", len(records), turns, run.Summary.Records)
	}
	for id, ts := range turns {
		if !slices.Equal(ts, []int{1, 2, 3}) {
			t.Errorf("session %s: records of turns %v, want 1, 2, 3", id, ts)
		}
	}
}

// readRecords reads a run directory's records.jsonl.
func readRecords(t *testing.T, dir string) []measure.Record {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, measure.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []measure.Record
	for line := range bytes.Lines(b) {
		var r measure.Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%s: %v: %s", measure.RecordsFile, err, line)
		}
		out = append(out, r)
	}
	return out
}

// TestSweepRateSweep: sweep --rate sweep against the mock runs a synchronous step and a
// throughput step, then open-loop rates strictly between the request rates they measured.
func TestSweepRateSweep(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	m := newEndpointMock(t, "")
	out := filepath.Join(t.TempDir(), "out")
	code, output := runMain(t, "sweep", "--target", m.URL, "--dialect", "openai-chat", "--model", "m", "--output-tokens", "4",
		"--rate", "sweep", "--steps", "2", "--throughput-clients", "6", "--sessions", "6", "--no-leak-check", "--quiet", "--run-id", "ers", "--out", out)
	if code != 0 {
		t.Fatalf("sweep exit %d:\n%s", code, output)
	}
	res := readSweep(t, filepath.Join(out, "ers"))
	rs := res.RateSweep
	if rs == nil || len(rs.Rates) != 2 || len(res.Steps) != 4 {
		t.Fatalf("sweep.json: rate sweep %+v, %d steps; want 2 rates and 4 steps", rs, len(res.Steps))
	}
	if !(rs.SynchronousRate < rs.Rates[0] && rs.Rates[0] < rs.Rates[1] && rs.Rates[1] < rs.ThroughputRate) {
		t.Errorf("want synchronous < rates < throughput: %v < %v < %v", rs.SynchronousRate, rs.Rates, rs.ThroughputRate)
	}
	if first, last := res.Steps[0].Step, res.Steps[3].Step; first.Profile != sweep.ProfileSynchronous || last.Profile != sweep.ProfileThroughput || res.Steps[1].Step.Rate != rs.Rates[0] {
		t.Errorf("steps %v, %v, …, %v; want synchronous, the rates, throughput", first, res.Steps[1].Step, last)
	}
	for _, want := range []string{"rate sweep: synchronous", "throughput (6 clients)"} {
		if !strings.Contains(output, want) {
			t.Errorf("the sweep's output does not say %q:\n%s", want, output)
		}
	}
	if !hasRow(output, "synchronous (1 client) ttft", 4) {
		t.Errorf("the latency table has no synchronous ttft row:\n%s", output)
	}
}

// TestLoadMaxCompletionTokens: --max-tokens-field max_completion_tokens sends the length in
// that field alone, --min-tokens and --ignore-eos add vLLM's min_tokens (equal) and
// ignore_eos, and the mock honours max_completion_tokens: each answer has that many tokens.
func TestLoadMaxCompletionTokens(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	m := newEndpointMock(t, "")
	code, output := runMain(t, "load", "--target", m.URL+"/v1", "--dialect", "openai-chat", "--model", "m",
		"--input-tokens", "16", "--output-tokens", "5", "--max-tokens-field", "max_completion_tokens", "--min-tokens", "--ignore-eos",
		"--clients", "2", "--sessions", "4", "--runtime-metrics", "-", "--out", "-")
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	if !strings.Contains(output, "tokens: 20 output") || strings.Contains(output, "estimated") {
		t.Errorf("want 4 answers of 5 tokens each, counted from usage:\n%s", output)
	}
	for _, r := range m.chatRequests() {
		var body map[string]any
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if _, ok := body["max_tokens"]; ok || body["max_completion_tokens"] != float64(5) || body["min_tokens"] != float64(5) || body["ignore_eos"] != true {
			t.Errorf("body %s: want max_completion_tokens 5, min_tokens 5, ignore_eos true and no max_tokens", r.body)
		}
	}
}

// TestLoadOnePrompt: load --prompt sends that text as the one user message of every request
// and passes; an empty --prompt is refused before anything is sent, naming the flag.
func TestLoadOnePrompt(t *testing.T) {
	// Serial, not t.Parallel(): see the serial endpoint tests' note at the end of this file.
	const prompt = "Name three rivers of Europe."
	m := newEndpointMock(t, "")
	code, output := runMain(t, "load", "--target", m.URL+"/v1", "--dialect", "openai-chat", "--model", "m",
		"--prompt", prompt, "--output-tokens", "8", "--clients", "2", "--sessions", "4", "--runtime-metrics", "-", "--out", "-")
	if code != 0 || !strings.Contains(output, "verdict: PASS") {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	chats := m.chatRequests()
	for _, r := range chats {
		var body struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Messages) != 1 || body.Messages[0].Role != "user" || body.Messages[0].Content != prompt {
			t.Errorf("messages %+v, want the one user message %q", body.Messages, prompt)
		}
	}
	if len(chats) < 4 {
		t.Errorf("%d streams, want the 4 sessions' (and the preflight's)", len(chats))
	}
	code, output = runMain(t, "load", "--target", m.URL, "--dialect", "openai-chat", "--prompt", " ")
	if code != exitUsage || !strings.Contains(output, `--prompt " ": want the user's message`) {
		t.Errorf("an empty --prompt: exit %d, want %d and the flag named:\n%s", code, exitUsage, output)
	}
}

// serialEndpointTests: the sweep, run and load tests above run child processes of their own
// and are serial, so they run before the package's parallel tests and add no load under those
// that bound a child's memory or time (TestBigFramesStayBounded's peak RSS grew past its
// 256 MiB bound, to 373 and 412 MiB, when they ran beside it on 2 busy cores).

// TestEmptyEndpointAnswerFails: an OpenAI-compatible endpoint whose every answer ends as it
// should (finish_reason stop, a usage chunk, [DONE]) but carries no text measured nothing and
// answered nothing: R-answer-output fails the run, and gate with no flags fails it too. The
// same stream with text passes.
func TestEmptyEndpointAnswerFails(t *testing.T) {
	t.Parallel()
	stream := func(content string, tokens int) string {
		chunk := func(body string) string {
			return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m",` + body + "}\n\n"
		}
		return chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":`+strconv.Quote(content)+`},"finish_reason":null}]`) +
			chunk(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]`) +
			chunk(fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":%d,"total_tokens":%d}`, tokens, 8+tokens)) +
			"data: [DONE]\n\n"
	}
	for _, tc := range []struct {
		name, body string
		want       int
	}{
		{"empty", stream("", 0), exitFailure},
		{"answered", stream("Hi", 1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, tc.body)
			})
			out := t.TempDir()
			code, output := runMain(t, "load", "--target", srv.URL+"/v1", "--dialect", "openai-chat", "--model", "m",
				"--input-tokens", "16", "--output-tokens", "16", "--min-tokens", "--ignore-eos", "--clients", "2", "--sessions", "6",
				"--runtime-metrics", "-", "--quiet", "--run-id", "e", "--out", out)
			if code != tc.want {
				t.Fatalf("load exit %d, want %d:\n%s", code, tc.want, output)
			}
			gateCode, gateOutput := runMain(t, "gate", filepath.Join(out, "e"))
			if gateCode == 0 != (tc.want == 0) {
				t.Errorf("gate exit %d after load exit %d:\n%s", gateCode, code, gateOutput)
			}
			if has := strings.Contains(output, string(protocol.RAnswerOutput)); has != (tc.want != 0) {
				t.Errorf("%s named: %t, want %t:\n%s", protocol.RAnswerOutput, has, tc.want != 0, output)
			}
		})
	}
}

// emptyAnswerStreams are, per dialect, a stream that ends as its wire says but answers nothing,
// and the same stream with an answer (as their real servers send them; from a new user's
// hostile pass, where every empty one passed --no-ground-truth with exit 0).
var emptyAnswerStreams = map[string]struct{ empty, answered string }{
	"openai-chat": {
		empty: sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":0,"total_tokens":5}}`, `[DONE]`),
		answered: sseData(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`, `[DONE]`),
	},
	"anthropic-messages": {
		empty: sseEvents("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":0}}`,
			"message_stop", `{"type":"message_stop"}`),
		answered: sseEvents("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
			"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
			"content_block_stop", `{"type":"content_block_stop","index":0}`,
			"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`,
			"message_stop", `{"type":"message_stop"}`),
	},
	"openai-responses": {
		empty: sseEvents("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[],"usage":null}}`,
			"response.completed", `{"type":"response.completed","sequence_number":1,"response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[],"usage":{"input_tokens":5,"output_tokens":0,"total_tokens":5}}}`),
		answered: sseEvents("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[],"usage":null}}`,
			"response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
			"response.content_part.added", `{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`,
			"response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello"}`,
			"response.output_text.done", `{"type":"response.output_text.done","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hello"}`,
			"response.content_part.done", `{"type":"response.content_part.done","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"Hello","annotations":[]}}`,
			"response.output_item.done", `{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}}`,
			"response.completed", `{"type":"response.completed","sequence_number":7,"response":{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"m","output":[{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hello","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":1,"total_tokens":6}}}`),
	},
	"ai-sdk": {
		empty: sseData(`{"type":"start","messageId":"m1"}`, `{"type":"start-step"}`, `{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`, `[DONE]`),
		answered: sseData(`{"type":"start","messageId":"m1"}`, `{"type":"start-step"}`, `{"type":"text-start","id":"0"}`, `{"type":"text-delta","id":"0","delta":"Hello"}`,
			`{"type":"text-end","id":"0"}`, `{"type":"finish-step"}`, `{"type":"finish","finishReason":"stop"}`, `[DONE]`),
	},
	"ag-ui": {
		empty: sseData(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`, `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`),
		answered: sseData(`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`, `{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hello"}`, `{"type":"TEXT_MESSAGE_END","messageId":"m1"}`, `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`),
	},
	"langgraph": {
		empty: sseEvents("metadata", `{"run_id":"run-1","attempt":1}`,
			"values", `{"messages":[{"type":"human","content":"hi","id":"h1"}]}`,
			"updates", `{"agent":{"messages":[{"type":"ai","content":"","id":"ai1","tool_calls":[]}]}}`,
			"values", `{"messages":[{"type":"human","content":"hi","id":"h1"},{"type":"ai","content":"","id":"ai1","tool_calls":[]}]}`),
		answered: sseEvents("metadata", `{"run_id":"run-1","attempt":1}`,
			"values", `{"messages":[{"type":"human","content":"hi","id":"h1"}]}`,
			"messages", `[{"type":"AIMessageChunk","id":"ai1","content":"Hello","tool_call_chunks":[]},{"langgraph_node":"agent","langgraph_step":1}]`,
			"updates", `{"agent":{"messages":[{"type":"ai","content":"Hello","id":"ai1","tool_calls":[]}]}}`,
			"values", `{"messages":[{"type":"human","content":"hi","id":"h1"},{"type":"ai","content":"Hello","id":"ai1","tool_calls":[]}]}`),
	},
}

// sseData is an SSE stream of one data line per event.
func sseData(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// sseEvents is an SSE stream of named events: name, data, name, data, ...
func sseEvents(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("event: " + pairs[i] + "\ndata: " + pairs[i+1] + "\n\n")
	}
	return b.String()
}

// TestEmptyAnswerFailsEveryDialect: under --no-ground-truth, a target of any dialect whose
// every answer ends as its wire says but carries no text, thinking or tool call fails the run
// on R-answer-output, and gate with no flags fails it too; the same stream with text passes.
func TestEmptyAnswerFailsEveryDialect(t *testing.T) {
	t.Parallel()
	for dialect, streams := range emptyAnswerStreams {
		for _, tc := range []struct {
			name, body string
			want       int
		}{
			{"empty", streams.empty, exitFailure},
			{"answered", streams.answered, 0},
		} {
			t.Run(dialect+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
					if r.Method != http.MethodPost {
						http.NotFound(w, r)
						return
					}
					w.Header().Set("Content-Type", "text/event-stream")
					w.Header().Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
					_, _ = io.WriteString(w, tc.body)
				})
				out := t.TempDir()
				code, output := runMain(t, "load", "--target", srv.URL, "--dialect", dialect, "--no-ground-truth", "--clients", "2", "--sessions", "4",
					"--runtime-metrics", "-", "--quiet", "--run-id", "e", "--out", out)
				if code != tc.want {
					t.Fatalf("load exit %d, want %d:\n%s", code, tc.want, output)
				}
				if has := strings.Contains(output, string(protocol.RAnswerOutput)); has != (tc.want != 0) {
					t.Errorf("%s named: %t, want %t:\n%s", protocol.RAnswerOutput, has, tc.want != 0, output)
				}
				if gateCode, gateOutput := runMain(t, "gate", filepath.Join(out, "e")); gateCode == 0 != (tc.want == 0) {
					t.Errorf("gate exit %d after load exit %d:\n%s", gateCode, code, gateOutput)
				}
			})
		}
	}
}
