package simchat

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/internal/dialecttest"
	"github.com/streambench/streambench/protocol/internal/jsonwire"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

func TestWriterGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	steps := []error{
		w.Thinking("b1", "Let me think…"),
		w.Chunk("b1", "Hel"),
		w.Chunk("b1", ""), // never sent: the protocol has no empty chunks
		w.Chunk("b1", "lo \"quoted\"\n\t<tag> \u2028 \x01 bad:\xff"),
		w.Reset("b1"),
		w.ToolStart("b1", "call_1", "search_call"),
		w.ToolEnd("b1", "call_1", "search_call", scenarios.OutcomeError),
		w.StreamError("b1", "tool crashed"),
		w.Final(FinalOutput{Content: "Hello", ToolCalls: []ToolSummary{{ID: "call_1", Name: "search_call", Status: scenarios.OutcomeError}}}),
		w.Error("Model timed out"),
		w.Raw([]byte("{\"not\":\n\"closed\"")),
		w.Done(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	golden.Check(t, "testdata/writer.golden", buf.Bytes())

	// Every frame the writer produces decodes as one SSE event carrying valid JSON.
	dec := sse.NewDecoder(&buf)
	var ev sse.Event
	n := 0
	for dec.Next(&ev) == nil {
		n++
		if !json.Valid(ev.Data) && !strings.HasPrefix(string(ev.Data), "{\"not\"") {
			t.Errorf("frame %d is not JSON: %q", n, ev.Data)
		}
	}
	if n != len(steps)-1 {
		t.Errorf("decoded %d frames, want %d", n, len(steps)-1)
	}
}

// failingWriter fails every write, as a disconnected client does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriterReportsWriteErrors(t *testing.T) {
	t.Parallel()
	w := NewWriter(failingWriter{})
	if err := w.Chunk("b1", "x"); err == nil || !strings.Contains(err.Error(), "closed pipe") {
		t.Errorf("Chunk on a failing writer = %v, want the wrapped write error", err)
	}
	if err := w.Final(func() {}); err == nil {
		t.Error("Final with an unencodable output succeeded")
	}
}

func TestOptedIn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []string
		want   bool
	}{
		{"absent", nil, false},
		{"exact token", []string{"agent-events-v1"}, true},
		{"case-insensitive", []string{"Agent-Events-V1"}, true},
		{"in a list", []string{"text, agent-events-v1"}, true},
		{"list without spaces", []string{"text,agent-events-v1,other"}, true},
		{"second header line", []string{"text", "agent-events-v1"}, true},
		{"other version", []string{"agent-events-v2"}, false},
		{"prefix only", []string{"agent-events-v1x"}, false},
		{"empty", []string{""}, false},
	}
	for _, tc := range cases {
		h := http.Header{}
		for _, v := range tc.values {
			h.Add(ProtocolHeader, v)
		}
		if got := OptedIn(h); got != tc.want {
			t.Errorf("%s: OptedIn(%q) = %t, want %t", tc.name, tc.values, got, tc.want)
		}
	}
}

// The request reaches a server exactly as docs/PROTOCOLS.md describes, and the server's response
// headers are judged by CheckHeaders.
func TestRequestAndHeaders(t *testing.T) {
	t.Parallel()
	type seen struct {
		method, path, accept, proto string
		body                        RequestBody
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var s seen
		s.method, s.path, s.accept, s.proto = r.Method, r.URL.Path, r.Header.Get("Accept"), r.Header.Get(ProtocolHeader)
		if err := json.NewDecoder(r.Body).Decode(&s.body); err != nil {
			t.Errorf("request body: %v", err)
		}
		got <- s
		SetResponseHeaders(w.Header(), OptedIn(r.Header))
		if r.URL.Query().Get("break") == "1" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set(ProtocolHeader, ProtocolToken)
		}
	}))
	t.Cleanup(srv.Close)

	cases := []struct {
		name    string
		optedIn bool
		brk     bool
		want    int // R-headers violations
	}{
		{"opted in", true, false, 0},       // header sent and echoed
		{"legacy", false, false, 0},        // no header either way
		{"legacy, broken", false, true, 2}, // wrong content type and an echo nobody asked for
	}
	for _, tc := range cases {
		d := NewClient(tc.optedIn, Policy{})
		s := &protocol.Session{ID: "sess-1", Target: "openai all", Input: "[[streambench scenario=x seed=1]] hi"}
		base := srv.URL
		req, err := d.NewRequest(context.Background(), base, s)
		if err != nil {
			t.Fatal(err)
		}
		if tc.brk {
			req.URL.RawQuery = "break=1"
		}
		resp := dialecttest.Do(t, srv.Client(), req, nil)
		r := <-got
		if r.method != http.MethodPost || r.path != "/api/chat/openai all" || r.accept != "text/event-stream" {
			t.Errorf("%s: request %s %s Accept %q", tc.name, r.method, r.path, r.accept)
		}
		if (r.proto == ProtocolToken) != tc.optedIn {
			t.Errorf("%s: %s = %q, opted in %t", tc.name, ProtocolHeader, r.proto, tc.optedIn)
		}
		if r.body.Input == nil || *r.body.Input != s.Input || r.body.ConversationID != s.ID {
			t.Errorf("%s: body %+v", tc.name, r.body)
		}
		vs := d.CheckHeaders(resp.Header, s)
		if len(vs) != tc.want {
			t.Errorf("%s: header violations %v, want %d", tc.name, vs, tc.want)
		}
		for _, v := range vs {
			if v.Rule != protocol.RHeaders {
				t.Errorf("%s: rule %s, want R-headers", tc.name, v.Rule)
			}
		}
	}
	// An opted-in client whose header is not echoed.
	h := http.Header{}
	SetResponseHeaders(h, false)
	if vs := NewClient(true, Policy{}).CheckHeaders(h, &protocol.Session{}); len(vs) != 1 {
		t.Errorf("missing echo: violations %v, want one", vs)
	}
}

func FuzzChecker(f *testing.F) {
	f.Add([]byte("data: {\"blockId\":\"b1\",\"chunk\":\"Hi\"}\n\ndata: {\"event\":\"final\",\"data\":{\"success\":true,\"output\":{}}}\n\ndata: \"[DONE]\"\n\n"), true, true)
	f.Add([]byte("data: {\"blockId\":\"b1\",\"event\":\"tool\",\"phase\":\"end\",\"id\":\"x\"}\n\ndata: {\"event\":\"final\",\"data\":{\"success\":true,\"output\":{\"toolCalls\":[{\"input\":1}]}}}\n\n"), true, false)
	f.Add([]byte("data: {\"blockId\":\"b1\",\"event\":\"chunk_reset\"}\n\ndata: [DONE]\n\ndata: {}\n\n"), false, true)
	f.Add([]byte("data: {\"event\":\"thinking\",\"data\":7}\n\ndata: null\n\ndata: {\"chunk\":\"\\ud800\"}\n\n"), true, false)
	sc := dialecttest.Script(f, "preamble-tool", 1)
	exp := sc.Expected()
	f.Fuzz(func(t *testing.T, stream []byte, optedIn, aborted bool) {
		s := &protocol.Session{Expected: exp, Aborted: aborted}
		c := NewChecker(s, optedIn, Policy{IncludeThinking: true, IncludeToolCalls: optedIn})
		dialecttest.Judge(t, stream, c, func(ev *sse.Event, o protocol.Observation) {
			if o.TextBytes < 0 || o.TextBytes > len(ev.Data) {
				t.Fatalf("TextBytes %d for a %d-byte frame", o.TextBytes, len(ev.Data))
			}
		})
	})
}

func BenchmarkWriterChunk(b *testing.B) {
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Chunk("b1", " token"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckerChunk measures judging one opted-in answer chunk, the checker's hot path.
func BenchmarkCheckerChunk(b *testing.B) {
	sc := dialecttest.Script(b, "long-answer", 1)
	exp := sc.Expected()
	var pieces [][]byte
	for _, st := range sc.Turns[len(sc.Turns)-1].Steps {
		if st.Kind == scenarios.StepText {
			pieces = append(pieces, []byte(`{"blockId":"b1","chunk":`+string(jsonwire.AppendString(nil, st.Text))+`}`))
		}
	}
	s := &protocol.Session{Expected: exp}
	c := NewChecker(s, true, Policy{})
	ev := sse.Event{}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(pieces) {
			c, i = NewChecker(s, true, Policy{}), 0
		}
		ev.Data = pieces[i]
		c.Observe(&ev)
		i++
	}
}

// plainChunk must agree with encoding/json whenever it takes the fast path.
func FuzzPlainChunk(f *testing.F) {
	f.Add([]byte(`{"blockId":"b1","chunk":"Hello"}`))
	f.Add([]byte(`{"blockId":"b1","chunk":"日本 résumé"}`))
	f.Add([]byte(`{"blockId":"b1","chunk":"a\"b"}`))
	f.Add([]byte("{\"blockId\":\"b1\",\"chunk\":\"\xff\"}"))
	f.Add([]byte(`{"blockId":"b1","chunk":""}`))
	f.Add([]byte(`{"blockId":"b1","chunk":"x"} `))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, chunk, ok := plainChunk(data)
		if !ok {
			return
		}
		var fr frame
		if err := json.Unmarshal(data, &fr); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
		}
		if fr.Event != nil || fr.BlockID == nil || fr.Chunk == nil || *fr.BlockID != string(id) || *fr.Chunk != string(chunk) || *fr.Chunk == "" {
			t.Fatalf("fast path read %q/%q from %q, encoding/json %+v", id, chunk, data, fr)
		}
	})
}

func TestPlainChunkFastPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		data string
		ok   bool
	}{
		{`{"blockId":"b1","chunk":"Hello"}`, true},                 // the writer's shape
		{`{"blockId":"b1","chunk":" 日本"}`, true},                   // raw UTF-8 needs no unescaping
		{`{"blockId":"b1","chunk":"a\nb"}`, false},                 // escapes take the general path
		{`{"blockId":"b1","chunk":""}`, false},                     // an empty chunk is a framing error there
		{`{"blockId":"b1","chunk":"x","event":"thinking"}`, false}, // extra keys
		{`{"chunk":"x","blockId":"b1"}`, false},                    // other key order
		{"{\"blockId\":\"b1\",\"chunk\":\"\xc3\"}", false},         // invalid UTF-8 is replaced by encoding/json
	}
	for _, tc := range cases {
		if _, _, ok := plainChunk([]byte(tc.data)); ok != tc.ok {
			t.Errorf("plainChunk(%q) ok = %t, want %t", tc.data, ok, tc.ok)
		}
	}
}

// BenchmarkCheckerStream judges whole conforming streams (thinking, preambles, resets, tools,
// final envelope) and reports the cost per frame, the figure behind the load generator's CPU
// per received frame.
func BenchmarkCheckerStream(b *testing.B) {
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	for _, name := range []string{"thinking-answer", "tool-chain", "long-answer"} {
		b.Run(name, func(b *testing.B) {
			sc := dialecttest.Script(b, name, 1)
			var frames [][]byte
			for _, fr := range relay(b, sc, true, all) {
				frames = append(frames, []byte(strings.TrimSuffix(strings.TrimPrefix(fr, "data: "), "\n\n")))
			}
			s := session(sc, true, all)
			var ev sse.Event
			b.ReportAllocs()
			for b.Loop() {
				c := s.checker()
				for _, fr := range frames {
					ev.Data = fr
					c.Observe(&ev)
				}
				if vs := c.Finish(nil); len(vs) != 0 {
					b.Fatal(vs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(frames)), "ns/frame")
			b.ReportMetric(float64(len(frames)), "frames/stream")
		})
	}
}

// plainThinking must agree with encoding/json whenever it takes the fast path.
func FuzzPlainThinking(f *testing.F) {
	f.Add([]byte(`{"blockId":"b1","event":"thinking","data":"Let me think"}`))
	f.Add([]byte(`{"blockId":"b1","event":"thinking","data":"a\"b"}`))
	f.Add([]byte(`{"blockId":"b1","event":"thinking","data":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		text, ok := plainThinking(data)
		if !ok {
			return
		}
		var fr frame
		var got string
		if err := json.Unmarshal(data, &fr); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json rejects it: %v", data, err)
		}
		if err := json.Unmarshal(fr.Data, &got); err != nil || fr.Event == nil || *fr.Event != "thinking" || fr.Chunk != nil || got != string(text) {
			t.Fatalf("fast path read %q from %q, encoding/json %+v %q %v", text, data, fr, got, err)
		}
	})
}

// The fast paths must reach exactly the verdict of the general path, frame by frame.
func FuzzFastPathAgrees(f *testing.F) {
	all := Policy{IncludeThinking: true, IncludeToolCalls: true}
	expected := dialecttest.FastPathCorpus(f, []string{"tool-chain", "thinking-answer"}, func(sc *scenarios.Script) []string {
		return relay(f, sc, true, all)
	})
	f.Fuzz(func(t *testing.T, stream []byte, name string) {
		exp, ok := expected[name]
		if !ok {
			return
		}
		for _, noTruth := range []bool{false, true} { // without ground truth the fast path takes any thinking
			s := &protocol.Session{Expected: exp, NoGroundTruth: noTruth}
			fast, general := NewChecker(s, true, all), NewChecker(s, true, all)
			general.generalOnly = true
			dialecttest.FastPathAgrees(t, stream, fast, general)
		}
	})
}
