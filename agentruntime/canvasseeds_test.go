package agentruntime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/simcanvas"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// TestCanvasRedactedBlock: a workflow that redacts PII streams nothing of its block live; the
// block's output, with every PII span replaced, comes with block:completed. The same scenario
// on a plain workflow streams live and keeps its PII.
func TestCanvasRedactedBlock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0, Options{})
	redacted := e.open(simCanvas, "openai-redacted", "pii-tool", 1, t.Name())
	body := string(redacted.body)
	for _, live := range []string{simcanvas.TypeChunk + `"`, simcanvas.TypeChunkReset, simcanvas.TypeThinking, simcanvas.TypeTool} {
		if strings.Contains(body, live) {
			t.Errorf("redacted workflow streamed %s frames:\n%s", live, body)
		}
	}
	for _, want := range []string{simcanvas.RedactedEmail, simcanvas.RedactedPhone, `"redacted":true`, simcanvas.TypeBlockCompleted} {
		if !strings.Contains(body, want) {
			t.Errorf("redacted stream lacks %s:\n%s", want, body)
		}
	}
	if simcanvas.HasPII(body) {
		t.Errorf("PII left in the redacted stream:\n%s", body)
	}
	dep, _ := e.rt.deps.Lookup("openai-redacted")
	if vs := checkRedacted(t, dep, "pii-tool", 1, redacted); len(vs) > 0 {
		t.Errorf("redacted stream has violations: %+v", vs)
	}
	plain := string(e.open(simCanvas, "openai-all", "pii-tool", 1, t.Name()+"-plain").body)
	if !strings.Contains(plain, simcanvas.TypeThinking) || !strings.Contains(plain, simcanvas.TypeChunkReset) || !simcanvas.HasPII(plain) {
		t.Errorf("the plain workflow should stream live, with the PII as scripted:\n%s", plain)
	}
}

// TestCanvasRedactionFaults: each redaction fault changes the stream the way it says, and the
// checker reports its rule and no other.
func TestCanvasRedactionFaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fault, added string
		rule         string
	}{
		// Live frames for the redacted block: its thinking, chunks, reset and tools.
		{"redact-live", simcanvas.TypeThinking, "R-redact-live"},
		// The raw address in the block output.
		{"unredacted-output", "max.mustermann@example.org", "R-redact-output"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			f, err := ParseFaults([]string{tc.fault})
			if err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, 0, Options{Faults: f})
			sr := e.open(simCanvas, "anthropic-redacted", "pii-tool", 2, t.Name())
			if !strings.Contains(string(sr.body), tc.added) {
				t.Fatalf("fault %s: no %s in the stream:\n%s", tc.fault, tc.added, sr.body)
			}
			dep, _ := e.rt.deps.Lookup("anthropic-redacted")
			if rules := rulesOf(checkRedacted(t, dep, "pii-tool", 2, sr)); len(rules) != 1 || string(rules[0]) != tc.rule {
				t.Errorf("fault %s: rules %v, want [%s]", tc.fault, rules, tc.rule)
			}
		})
	}
}

// checkRedacted runs the redacting workflow's checker over a captured stream, as check does.
func checkRedacted(t *testing.T, dep *Deployment, scenario string, seed uint64, sr streamResult) []protocol.Violation {
	t.Helper()
	c, err := simcanvas.New().Configure(dep.Slug, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := scenarios.Embedded().Get(scenario)
	s := &protocol.Session{ID: "check", Target: dep.Slug, Expected: sc.Render(seed).Expected()}
	vs := c.CheckHeaders(sr.resp.Header, s)
	ch := c.NewChecker(s)
	return append(vs, ch.Finish(replay(ch, sr.body))...)
}

// canvasStream is a resumable execution's stream being read.
type canvasStream struct {
	t    *testing.T
	resp *http.Response
	dec  *sse.Decoder
	exec string // its execution id
}

// startResumable opens a resumable execution of scenario.
func (e *env) startResumable(t *testing.T, slug, scenario, session string) *canvasStream {
	t.Helper()
	body := fmt.Sprintf(`{"input":%q,"stream":true,"resumable":true}`, directive(scenario, 1, session))
	req, err := http.NewRequestWithContext(ctxTimeout(t, 20*time.Second), http.MethodPost, e.url+"/api/workflows/"+slug+"/execute", strings.NewReader(body))
	resp := e.send(t, req, err)
	if resp.StatusCode != http.StatusOK || resp.Header.Get(simcanvas.ExecutionIDHeader) == "" {
		t.Fatalf("execute: status %d, %s %q", resp.StatusCode, simcanvas.ExecutionIDHeader, resp.Header.Get(simcanvas.ExecutionIDHeader))
	}
	return &canvasStream{t: t, resp: resp, dec: sse.NewDecoder(resp.Body), exec: resp.Header.Get(simcanvas.ExecutionIDHeader)}
}

// lastAfter reads n answer chunks and returns the Last-Event-ID a reconnect then sends.
func (cs *canvasStream) lastAfter(n int) string {
	cs.readChunks(n)
	return cs.dec.LastEventID()
}

// readChunks reads frames until n answer chunks arrived, returning the frames' data.
func (cs *canvasStream) readChunks(n int) []string {
	cs.t.Helper()
	var out []string
	var ev sse.Event
	for seen := 0; seen < n; {
		if err := cs.dec.Next(&ev); err != nil {
			cs.t.Fatalf("after %d chunks: %v", seen, err)
		}
		out = append(out, string(ev.Data))
		if bytes.Contains(ev.Data, []byte(`"type":"stream:chunk"`)) {
			seen++
		}
	}
	return out
}

// reconnect sends the reconnect request with Last-Event-ID last.
func (e *env) reconnect(t *testing.T, workflow, execution, last string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxTimeout(t, 20*time.Second), http.MethodGet,
		e.url+"/api/workflows/"+workflow+"/executions/"+execution+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, b := e.do(req)
	return resp, []byte(b)
}

// frameTypes lists the envelope types of a stream body, and whether it ended with [DONE].
func frameTypes(t *testing.T, body []byte) (types []string, ids []int64, done bool) {
	t.Helper()
	err := eachEvent(body, func(ev *sse.Event) {
		if string(ev.Data) == "[DONE]" {
			done = true
			return
		}
		var env struct {
			Type    string `json:"type"`
			EventID int64  `json:"eventId"`
		}
		if err := json.Unmarshal(ev.Data, &env); err != nil {
			t.Fatalf("frame %s: %v", ev.Data, err)
		}
		if ev.ID != strconv.FormatInt(env.EventID, 10) {
			t.Errorf("frame %s: SSE id %q, want the eventId", ev.Data, ev.ID)
		}
		types, ids = append(types, env.Type), append(ids, env.EventID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return types, ids, done
}

// TestCanvasReconnectAfterEnd: the client drops after five chunks and comes back once the
// execution has ended: the replay holds the buffered events after its Last-Event-ID (and never
// a live-only one), then [DONE]; the buffer is released, and a second reconnect finds nothing.
func TestCanvasReconnectAfterEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.05, Options{ToolTimeScale: 0.05})
	cs := e.startResumable(t, "openai-all", "reconnect-after-end", t.Name())
	last := cs.lastAfter(5)
	cs.resp.Body.Close()
	eventually(t, 10*time.Second, "the execution ends without its client", func() bool {
		return gauge(t, e.rt.metrics.registry, MetricClientStreamsOpen) == 0
	})
	if n := gauge(t, e.rt.metrics.registry, MetricCanvasResumableOpen); n != 1 {
		t.Fatalf("%s = %v while the execution waits for its client, want 1", MetricCanvasResumableOpen, n)
	}
	resp, body := e.reconnect(t, "openai-all", cs.exec, last)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reconnect: status %d: %s", resp.StatusCode, body)
	}
	types, ids, done := frameTypes(t, body)
	want := []string{simcanvas.TypeStreamDone, simcanvas.TypeBlockCompleted, simcanvas.TypeExecutionCompleted}
	if strings.Join(types, " ") != strings.Join(want, " ") || !done {
		t.Errorf("replay %v (done %v), want %v then [DONE]", types, done, want)
	}
	lastID, _ := strconv.ParseInt(last, 10, 64)
	through, _ := strconv.ParseInt(resp.Header.Get(simcanvas.HeaderReplayThrough), 10, 64)
	if len(ids) == 0 || ids[0] <= lastID || ids[len(ids)-1] != through {
		t.Errorf("replayed ids %v after Last-Event-ID %d, %s %d", ids, lastID, simcanvas.HeaderReplayThrough, through)
	}
	if n := gauge(t, e.rt.metrics.registry, MetricCanvasResumableOpen); n != 0 {
		t.Errorf("%s = %v after the reconnect saw the end, want 0", MetricCanvasResumableOpen, n)
	}
	if resp, body := e.reconnect(t, "openai-all", cs.exec, last); resp.StatusCode != http.StatusNotFound {
		t.Errorf("second reconnect: status %d, want 404: %s", resp.StatusCode, body)
	}
}

// TestCanvasReconnectAfterUnnoticedDrop: an execution whose run ended with its first stream
// still attached is what a client sees whose drop the server had not noticed yet (on a busy
// machine it reads the close late): a reconnect right after still gets the replay and the
// end, not a 404; the execution is released after a short grace.
func TestCanvasReconnectAfterUnnoticedDrop(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.05, Options{ToolTimeScale: 0.05})
	cs := e.startResumable(t, "openai-all", "reconnect-after-end", t.Name())
	last := cs.lastAfter(5)
	// The first stream stays attached to its end: the server never sees it go.
	if _, err := io.Copy(io.Discard, cs.resp.Body); err != nil {
		t.Fatal(err)
	}
	cs.resp.Body.Close()
	resp, body := e.reconnect(t, "openai-all", cs.exec, last)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reconnect after the run ended with its first stream attached: status %d: %s", resp.StatusCode, body)
	}
	if _, _, done := frameTypes(t, body); !done {
		t.Errorf("replay without [DONE]: %s", body)
	}
	eventually(t, 10*time.Second, "the execution released", func() bool {
		return gauge(t, e.rt.metrics.registry, MetricCanvasResumableOpen) == 0
	})
}

// TestCanvasReconnectMidAnswer: a reconnect at once goes on live: the answer's remaining
// chunks, then the end; nothing at or before the Last-Event-ID comes again.
func TestCanvasReconnectMidAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.05, Options{})
	cs := e.startResumable(t, "anthropic-all", "reconnect-mid-answer", t.Name())
	last := cs.lastAfter(20)
	cs.resp.Body.Close()
	resp, body := e.reconnect(t, "anthropic-all", cs.exec, last)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reconnect: status %d: %s", resp.StatusCode, body)
	}
	types, ids, done := frameTypes(t, body)
	lastID, _ := strconv.ParseInt(last, 10, 64)
	if !done || len(types) < 4 || types[len(types)-1] != simcanvas.TypeExecutionCompleted || ids[0] <= lastID {
		t.Errorf("resumed stream %v ids %v (done %v) after Last-Event-ID %d", types, ids, done, lastID)
	}
	if !strings.Contains(strings.Join(types, " "), simcanvas.TypeChunk) {
		t.Errorf("resumed stream has no live chunks: %v", types)
	}
	eventually(t, 5*time.Second, "the execution's buffer released", func() bool {
		return gauge(t, e.rt.metrics.registry, MetricCanvasResumableOpen) == 0
	})
}

// TestCanvasReconnectWindow: a client that drops and never comes back: when the window ends,
// the run is cancelled (the provider sees the client go) and its buffer released.
func TestCanvasReconnectWindow(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 1, Options{ReconnectWindow: 100 * time.Millisecond})
	cs := e.startResumable(t, "openai-all", "reconnect-mid-answer", t.Name())
	cs.readChunks(2)
	cs.resp.Body.Close()
	eventually(t, 3*time.Second, "the run cancelled and its buffer released when the window ended", func() bool {
		return gauge(t, e.rt.metrics.registry, MetricCanvasResumableOpen) == 0 &&
			gauge(t, e.rt.metrics.registry, MetricClientStreamsOpen) == 0
	})
	eventually(t, 3*time.Second, "the provider sees the client go", func() bool {
		recs := e.mock.Sessions(t.Name())
		return len(recs) == 1 && recs[0].Outcome == mockrecords.OutcomeClientCancelled
	})
}

// TestCanvasReconnectBadRequests: what cannot be resumed is answered with a JSON error.
func TestCanvasReconnectBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 0.05, Options{})
	cs := e.startResumable(t, "openai-all", "reconnect-mid-answer", t.Name())
	exec := cs.exec
	for _, tc := range []struct {
		workflow, execution, last string
		status                    int
	}{
		// An execution that does not exist.
		{"openai-all", "exec_NOPE", "", http.StatusNotFound},
		// An execution of another workflow.
		{"anthropic-all", exec, "", http.StatusNotFound},
		// A Last-Event-ID that is no event id.
		{"openai-all", exec, "seven", http.StatusBadRequest},
	} {
		resp, body := e.reconnect(t, tc.workflow, tc.execution, tc.last)
		if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
			t.Errorf("%s/%s Last-Event-ID %q: status %d %s, want %d with a JSON error", tc.workflow, tc.execution, tc.last, resp.StatusCode, body, tc.status)
		}
	}
	// A plain execution has no SSE ids and is not kept.
	plain := e.open(simCanvas, "openai-all", "plain-answer", 1, t.Name()+"-plain")
	if bytes.Contains(plain.body, []byte("\nid: ")) || bytes.HasPrefix(plain.body, []byte("id: ")) {
		t.Errorf("a plain execution has SSE ids:\n%s", plain.body)
	}
	if resp, _ := e.reconnect(t, "openai-all", plain.resp.Header.Get(simcanvas.ExecutionIDHeader), ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("reconnect to a plain execution: status %d, want 404", resp.StatusCode)
	}
}

// TestWriterFrameType: what a resumable execution reads of each frame the Writer writes.
func TestWriterFrameType(t *testing.T) {
	t.Parallel()
	var w *simcanvas.Writer
	var typ []string
	var ids []int64
	w = simcanvas.NewWriter(writerFunc(func(p []byte) (int, error) {
		typ, ids = append(typ, w.Type), append(ids, w.EventID())
		return len(p), nil
	}), "exec", "wf")
	w.IDs = true
	for _, tc := range []struct {
		write func() error
		typ   string
		id    int64
	}{
		// A frame as the Writer writes it with IDs.
		{func() error { return w.BlockCompleted("b", nil, 0) }, "block:completed", 1},
		// The end marker has no type.
		{w.Done, "", 1},
		// Nor has a raw fault frame.
		{func() error { return w.Raw([]byte(`{"type":"stream:chunk"}`)) }, "", 1},
	} {
		typ, ids = nil, nil
		if err := tc.write(); err != nil || len(typ) != 1 || typ[0] != tc.typ || (tc.typ != "" && ids[0] != tc.id) {
			t.Errorf("frame types %q, ids %v, err %v; want %q, %d", typ, ids, err, tc.typ, tc.id)
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
