package selfbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/protocol/openai"
	"github.com/streambench/streambench/scenarios"
)

// serveNaive serves a NaiveServer for the test's length and returns its address.
func serveNaive(t *testing.T, ttft, itl time.Duration, tokens int) string {
	t.Helper()
	srv, err := NewNaiveServer(ttft, itl, tokens)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(serveFloor(t, srv), "http://")
}

// TestNaiveServerSpeaksTheMocksChunks reads a naive stream as an OpenAI client would: a role
// chunk, one content chunk per token, a finish chunk, [DONE].
func TestNaiveServerSpeaksTheMocksChunks(t *testing.T) {
	t.Parallel()
	addr := serveNaive(t, 0, 0, 3)
	resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		t.Fatalf("HTTP %d, Content-Type %q", resp.StatusCode, ct)
	}
	var datas []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			datas = append(datas, d)
		}
	}
	if len(datas) != 6 || datas[5] != "[DONE]" {
		t.Fatalf("data lines %q: want role, 3 content chunks, finish, [DONE]", datas)
	}
	var text strings.Builder
	for i, d := range datas[:5] {
		var c struct {
			Object  string
			Choices []struct {
				Delta struct {
					Role    string
					Content *string
				}
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" || len(c.Choices) != 1 {
			t.Fatalf("chunk %d %s: %v", i, d, err)
		}
		ch := c.Choices[0]
		switch {
		case i == 0 && (ch.Delta.Role != "assistant" || ch.Delta.Content == nil || *ch.Delta.Content != ""):
			t.Errorf("first chunk %s: want the role and empty content", d)
		case i == 4 && (ch.FinishReason == nil || *ch.FinishReason != "stop" || ch.Delta.Content != nil):
			t.Errorf("last chunk %s: want finish_reason stop and an empty delta", d)
		case i > 0 && i < 4:
			if ch.Delta.Content == nil || *ch.Delta.Content == "" || ch.FinishReason != nil {
				t.Errorf("chunk %d %s: want content and no finish_reason", i, d)
			} else {
				text.WriteString(*ch.Delta.Content)
			}
		}
	}
	if text.String() != " streaming tokens arrive" {
		t.Errorf("text %q", text.String())
	}
}

func TestNewNaiveServerRejectsBadShapes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		ttft, itl time.Duration
		tokens    int
	}{
		{"negative TTFT", -time.Millisecond, 0, 1}, // a delay cannot be negative
		{"negative ITL", 0, -time.Millisecond, 1},  // nor an inter-token one
		{"no tokens", 0, 0, 0},                     // a stream with nothing to pace
	} {
		if _, err := NewNaiveServer(tc.ttft, tc.itl, tc.tokens); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// TestIsContentChunk holds the client's one test of a frame to both servers' frames: the
// mock's own writer and the naive server.
func TestIsContentChunk(t *testing.T) {
	t.Parallel()
	var mock bytes.Buffer
	sw := openai.NewStreamWriter(&mock, openai.StreamMeta{ID: "x", Model: "m"}, false)
	turn := &scenarios.ScriptTurn{Steps: []scenarios.Step{{Kind: scenarios.StepText, Text: " word"}}}
	if err := sw.Start(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Step(turn, &turn.Steps[0]); err != nil {
		t.Fatal(err)
	}
	if err := sw.Finish(turn); err != nil {
		t.Fatal(err)
	}
	frames := strings.Split(strings.TrimSuffix(mock.String(), "\n\n"), "\n\n")
	for _, tc := range []struct {
		name  string
		frame string
		want  bool
	}{
		{"mock role chunk", frames[0], false},   // content "" is not a token
		{"mock content chunk", frames[1], true}, // the token
		{"mock finish chunk", frames[2], false}, // delta {}
		{"mock [DONE]", frames[3], false},       // the end
		{"naive content chunk", `data: {"id":"a","choices":[{"index":0,"delta":{"content":" x"},"logprobs":null,"finish_reason":null}]}`, true},
		{"naive role chunk", `data: {"id":"a","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`, false},
		{"cut after the opening quote", `data: {"delta":{"content":"`, false}, // nothing to tell yet
	} {
		if got := isContentChunk([]byte(tc.frame)); got != tc.want {
			t.Errorf("%s: isContentChunk(%q) = %t, want %t", tc.name, tc.frame, got, tc.want)
		}
	}
}

// TestCrossStreamMeasuresANaiveStream plays one stream of the naive server and checks what the
// client recorded: 100 tokens, one TTFT, 99 gaps, one end.
func TestCrossStreamMeasuresANaiveStream(t *testing.T) {
	t.Parallel()
	addr := serveNaive(t, 0, time.Millisecond, crossTokens)
	h := newCrossHistograms()
	n, err := crossStream(context.Background(), addr, crossRequest(addr), time.Millisecond, make([]byte, 0, crossReadBuffer), h)
	if err != nil {
		t.Fatal(err)
	}
	if n != crossTokens || h.ttftError.TotalCount() != 1 || h.gapError.TotalCount() != crossTokens-1 || h.endLate.TotalCount() != 1 {
		t.Errorf("%d tokens; recorded %d TTFT, %d gaps, %d ends", n, h.ttftError.TotalCount(), h.gapError.TotalCount(), h.endLate.TotalCount())
	}
	// A TTFT of 0 against the measurement's 100 ms: the first token is early, recorded as 0.
	if v := h.ttftError.Max(); v != 0 {
		t.Errorf("TTFT error %d µs for a token 100 ms early; want 0 (clamped)", v)
	}
}

// TestCrossStreamFailsShortOrRefusedStreams: a stream that ends before its tokens, or is
// refused, is a failure, never a measurement.
func TestCrossStreamFailsShortOrRefusedStreams(t *testing.T) {
	t.Parallel()
	short := serveNaive(t, 0, 0, crossTokens-1)
	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	t.Cleanup(refused.Close)
	for _, tc := range []struct {
		name, addr, want string
	}{
		{"one token short", short, "[DONE] after 99 content chunks, want 100"},                     // the naive server sent 99
		{"HTTP 503", strings.TrimPrefix(refused.URL, "http://"), `response "HTTP/1.1 503 Service`}, // not a stream
	} {
		_, err := crossStream(context.Background(), tc.addr, crossRequest(tc.addr), time.Millisecond, make([]byte, 0, crossReadBuffer), newCrossHistograms())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// A server's two rounds pool: counts and CPU add, histograms merge (the p99 is over both
// rounds' streams), the first failure is kept, the peak RSS is the larger.
func TestServerPacingPools(t *testing.T) {
	round := func(ttftMicros int64, failure string, rss int64) *serverPacing {
		h := newCrossHistograms()
		for range 99 {
			h.record(h.ttftError, ttftMicros)
		}
		h.record(h.gapError, 1000)
		h.record(h.endLate, 2000)
		p := &serverPacing{name: "mock", streams: 100, tokens: 9900, crossHistograms: h,
			serverCPU: time.Second, clientCPU: 2 * time.Second, serverPeakRSSKiB: rss}
		if failure != "" {
			p.failed, p.firstFailure = 1, failure
		}
		return p
	}
	p := round(100, "", 500)
	p.pool(round(10_000, "stream 3: refused", 400))
	if p.streams != 200 || p.failed != 1 || p.firstFailure != "stream 3: refused" || p.tokens != 19800 {
		t.Errorf("counts after pooling: %+v", p)
	}
	if p.serverCPU != 2*time.Second || p.clientCPU != 4*time.Second || p.serverPeakRSSKiB != 500 {
		t.Errorf("CPU %s / %s, RSS %d KiB: want 2s / 4s, 500", p.serverCPU, p.clientCPU, p.serverPeakRSSKiB)
	}
	if got := p.ttftError.TotalCount(); got != 198 {
		t.Errorf("TTFT errors pooled: %d, want 198", got)
	}
	if got := quantileMs(p.ttftError, 99, 0); got < 9.9 || got > 10.1 {
		t.Errorf("pooled TTFT error p99 %.2f ms, want the second round's 10 ms", got)
	}
	if got := p.cpuPerToken(); got < 101 || got > 102 {
		t.Errorf("CPU per token %.1f µs, want 2 s / 19,800 = 101 µs", got)
	}
}
