package agentruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/protocol/simchat"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// env is one mock provider and one runtime, each on its own httptest server.
type env struct {
	t       testing.TB
	mock    *mockprovider.Server
	mockURL string
	rt      *Server
	url     string
	client  *http.Client
}

// newEnv starts a mock (TimeScale mockScale, served HTTP/1.1 + h2c) and a runtime in front of
// it. The runtime's provider client uses h2c unless opts says otherwise.
func newEnv(t testing.TB, mockScale float64, opts Options) *env {
	t.Helper()
	mock, mts := mocktest.Serve(t, mockprovider.Options{TimeScale: mockScale})
	opts.ProviderURL = mts.URL
	if opts.Heartbeat == 0 {
		opts.Heartbeat = -1
	}
	rt, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rts := httptest.NewServer(rt.Handler())
	e := &env{t: t, mock: mock, mockURL: mts.URL, rt: rt, url: rts.URL, client: rts.Client()}
	t.Cleanup(func() { // then mts closes (mocktest.Serve's cleanup)
		rts.CloseClientConnections()
		rts.Close()
		_ = rt.Close()
		mts.CloseClientConnections()
	})
	return e
}

// directive is the user input that selects scenario/seed at the mock, tagged with session.
func directive(scenario string, seed uint64, session string) string {
	return scenarios.Directive{Scenario: scenario, Seed: seed, Session: session}.String() + " hello"
}

// post sends a JSON body and returns the response with its whole body read.
func (e *env) post(path string, hdr http.Header, body string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, b := e.do(req)
	return resp, []byte(b)
}

// do sends req and reads the whole answer.
func (e *env) do(req *http.Request) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatalf("%s %s: reading body: %v", req.Method, req.URL.Path, err)
	}
	return resp, string(b)
}

// send sends req, built with err, and closes its body when the test ends; an error fails t.
func (e *env) send(t testing.TB, req *http.Request, err error) *http.Response {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// clientKind is one way a client talks to the runtime.
type clientKind struct {
	dialect string // sim-chat, sim-canvas, compose
	optedIn bool   // sim-chat only
}

func (c clientKind) String() string {
	switch {
	case c.dialect != simchat.Name:
		return c.dialect
	case c.optedIn:
		return "sim-chat-optin"
	}
	return "sim-chat-legacy"
}

// streamResult is one stream as a client saw it.
type streamResult struct {
	resp *http.Response
	body []byte
}

// open runs one session of scenario on deployment slug as client c and returns the whole stream.
func (e *env) open(c clientKind, slug, scenario string, seed uint64, session string) streamResult {
	e.t.Helper()
	input := directive(scenario, seed, session)
	var path, body string
	hdr := http.Header{}
	switch c.dialect {
	case simchat.Name:
		path, body = "/api/chat/"+slug, fmt.Sprintf(`{"input":%q}`, input)
		if c.optedIn {
			hdr.Set(simchat.ProtocolHeader, simchat.ProtocolToken)
		}
	case simcanvas.Name:
		path, body = "/api/workflows/"+slug+"/execute", fmt.Sprintf(`{"input":%q,"stream":true}`, input)
	case compose.Name:
		path, body = "/agent/"+slug+"/stream", fmt.Sprintf(`{"message":%q}`, input)
	}
	resp, b := e.post(path, hdr, body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s %s: status %d: %s", c, path, resp.StatusCode, b)
	}
	return streamResult{resp: resp, body: b}
}

// clientOf returns the load generator's client (and its checker) for a client kind against
// deployment dep.
func clientOf(c clientKind, dep *Deployment) protocol.Client {
	switch c.dialect {
	case simcanvas.Name:
		// Configured for the workflow, as the load generator does: the id names the model's
		// capability (nothink).
		c, err := simcanvas.New().Configure(dep.Slug, nil)
		if err != nil {
			panic(err)
		}
		return c
	case compose.Name:
		return compose.NewClient()
	}
	return simchat.NewClient(c.optedIn, dep.Policy())
}

// check runs the dialect's own checker over a captured stream, as the load generator would.
func check(t testing.TB, c clientKind, dep *Deployment, scenario string, seed uint64, sr streamResult) []protocol.Violation {
	t.Helper()
	sc, ok := scenarios.Embedded().Get(scenario)
	if !ok {
		t.Fatalf("no scenario %q", scenario)
	}
	s := &protocol.Session{
		ID: "check", Target: dep.Slug, Input: directive(scenario, seed, "check"), Expected: sc.Render(seed).Expected(),
	}
	d := clientOf(c, dep)
	vs := d.CheckHeaders(sr.resp.Header, s)
	ch := d.NewChecker(s)
	return append(vs, ch.Finish(replay(ch, sr.body))...)
}

// eachEvent calls fn on each event of body and returns what cut the decoding (nil at EOF).
func eachEvent(body []byte, fn func(*sse.Event)) error {
	dec := sse.NewDecoder(bytes.NewReader(body))
	var ev sse.Event
	for {
		if err := dec.Next(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		fn(&ev)
	}
}

// replay feeds body's events to ch and returns what cut the decoding (nil at EOF).
func replay(ch protocol.Checker, body []byte) error {
	return eachEvent(body, func(ev *sse.Event) { ch.Observe(ev) })
}

// rulesOf lists the distinct rules of vs.
func rulesOf(vs []protocol.Violation) []protocol.Rule {
	var out []protocol.Rule
	for _, v := range vs {
		if !slices.Contains(out, v.Rule) {
			out = append(out, v.Rule)
		}
	}
	slices.Sort(out)
	return out
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(timestamp|startTime)":"[^"]*"`), `"$1":"<time>"`},
	{regexp.MustCompile(`"executionId":"[^"]*"`), `"executionId":"<exec>"`},
	{regexp.MustCompile(`"(elapsedMs|duration|durationMs)":\d+`), `"$1":0`},
	// Canvas event ids count frames; they are renumbered so that tool ends settling in either
	// order (parallel tools) normalize to the same stream. The checkers verify the sequence.
	{regexp.MustCompile(`"eventId":\d+`), `"eventId":0`},
	{regexp.MustCompile(`"id":"rct_[^"]*"`), `"id":"rct_<run>"`},
	// The deployment (and so its wire and model) is in workflow ids and model names; golden
	// files are shared by both wires.
	{regexp.MustCompile(`"(workflowId|model)":"[^"]*"`), `"$1":"<deployment>"`},
}

// normalize makes a captured stream deterministic for golden comparison: times, ids and
// durations are replaced, and tool end frames that settled together (parallel tools) are put
// in a stable order.
func normalize(body []byte) string {
	for _, n := range normalizers {
		body = n.re.ReplaceAll(body, []byte(n.with))
	}
	frames := strings.SplitAfter(string(body), "\n\n")
	isEnd := func(f string) bool {
		return strings.Contains(f, `"phase":"end"`) || strings.Contains(f, `"type":"tool_end"`)
	}
	for i := 0; i < len(frames); {
		j := i
		for j < len(frames) && isEnd(frames[j]) {
			j++
		}
		if j > i {
			slices.Sort(frames[i:j])
			i = j
		} else {
			i++
		}
	}
	return strings.Join(frames, "")
}

// gauge reads a metric's current value (summed over labels) from the runtime's registry.
func gauge(t testing.TB, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += metricValue(m)
		}
	}
	return sum
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	}
	return 0
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ctxTimeout is a test context bounded so a hang fails instead of stalling the suite.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// labelledGoroutines counts the goroutines of rt doing runtime work: those carrying rt's
// instance label with a frame of this package on their stack (handlers, tools, stream loops).
// Pooled provider connections (whose read loops inherit the label of the request that dialed
// them) and the HTTP server's background reads are not counted: they are not per-stream work.
// Other tests' runtimes have other labels, so the count holds with tests running in parallel.
func labelledGoroutines(t testing.TB, rt *Server) int {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%q:%q", LabelKey, rt.Instance())
	n := 0
	// Records are "N @ pcs...\n# labels: {...}\n#\tframes", separated by blank lines; the first
	// follows the "goroutine profile: total N" header line.
	_, records, _ := strings.Cut(b.String(), "\n")
	for _, rec := range strings.Split(records, "\n\n") {
		var count int
		if _, err := fmt.Sscanf(rec, "%d @", &count); err != nil {
			continue
		}
		if strings.Contains(rec, want) && strings.Contains(rec, "streambench/agentruntime.") {
			n += count
		}
	}
	return n
}
