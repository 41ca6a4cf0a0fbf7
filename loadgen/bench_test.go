package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/scenarios"
)

// TestMain doubles as a holding SSE server for BenchmarkOpenStreamMemory: run in a child
// process, so the server's own per-connection memory is not counted as the generator's.
func TestMain(m *testing.M) {
	switch os.Getenv("LOADGEN_CHILD_SERVER") {
	case "hold":
		holdServer()
		return
	case "hold-tls":
		holdTLSServer()
		return
	case "paced":
		pacedServer()
		return
	}
	os.Exit(m.Run())
}

// holdServer answers every request with the stream headers and one chunk, then holds the
// stream open until the client leaves.
func holdServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: protocols, HTTP2: &http.HTTP2Config{MaxConcurrentStreams: 100_000}}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = io.WriteString(w, "data: {\"blockId\":\"b1\",\"chunk\":\"Hello\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	_ = srv.Serve(ln)
}

// holdTLSServer is holdServer over TLS (HTTP/1.1 and h2 by ALPN) on httptest's certificate,
// which it writes as PEM to $LOADGEN_CERT for the client to trust.
func holdTLSServer() {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = io.WriteString(w, "data: {\"blockId\":\"b1\",\"chunk\":\"Hello\"}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	ts.EnableHTTP2 = true
	ts.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 100_000}
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	if err := os.WriteFile(os.Getenv("LOADGEN_CERT"), cert, 0o600); err != nil {
		fmt.Println("write cert:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on %s\n", ts.URL)
	select {}
}

// pacedServer answers every request with the body in $LOADGEN_BODY: its first frame exactly
// $LOADGEN_TTFT after the request arrived, the rest $LOADGEN_HOLD later. It is the reference
// for the harness's own timing error: a TTFC the generator measures beyond TTFT is the
// harness's (client, loopback and server scheduling), since nothing else sits in between.
func pacedServer() {
	body, err := os.ReadFile(os.Getenv("LOADGEN_BODY"))
	ttft, err2 := time.ParseDuration(os.Getenv("LOADGEN_TTFT"))
	hold, err3 := time.ParseDuration(os.Getenv("LOADGEN_HOLD"))
	if err != nil || err2 != nil || err3 != nil {
		fmt.Println("paced server: bad environment:", err, err2, err3)
		os.Exit(1)
	}
	first := bytes.Index(body, []byte("\n\n")) + 2
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Sim-Stream-Protocol", "agent-events-v1")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(time.Until(arrived.Add(ttft)))
		_, _ = w.Write(body[:first])
		w.(http.Flusher).Flush()
		time.Sleep(hold)
		_, _ = w.Write(body[first:])
	}))
}

// startChildServer runs this test binary as one of the child servers and returns its URL.
func startChildServer(b *testing.B, env ...string) string {
	b.Helper()
	srv := exec.Command(os.Args[0], "-test.run=^$")
	srv.Env = append(os.Environ(), env...)
	out, err := srv.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "listening on ") {
		b.Fatalf("child server: %q %v", line, err)
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "listening on "))
}

// BenchmarkTTFCFidelity measures the harness's own error on time to first chunk: a server in a
// child process sends the first chunk exactly 200 ms after each request arrives, sessions start
// at 400/s and last ~5 s (about 2,000 open streams), and the generator's TTFC minus 200 ms is
// reported at p50/p99/max (target p99 ≤ 1 ms). Run it once:
//
//	go test -run '^$' -bench TTFCFidelity -benchtime 1x ./loadgen
func BenchmarkTTFCFidelity(b *testing.B) {
	const ttft = 200 * time.Millisecond
	lib, final := benchLibrary(b, 40)
	body, _ := optedInBody(final)
	bodyFile := filepath.Join(b.TempDir(), "body")
	if err := os.WriteFile(bodyFile, body, 0o644); err != nil {
		b.Fatal(err)
	}
	url := startChildServer(b, "LOADGEN_CHILD_SERVER=paced", "LOADGEN_BODY="+bodyFile, "LOADGEN_TTFT="+ttft.String(), "LOADGEN_HOLD=4800ms")
	mix := optedInMix(b, "bench", "bench-answer", "bench")
	for b.Loop() {
		var peak int64
		run := runLoad(b, Config{
			Target: url, Library: lib, Mix: mix, RunID: "fidelity", Rate: 400, Duration: 10 * time.Second,
			NoLeakCheck: true, RuntimeMetricsURL: "-",
			Outputs: []Output{ProgressFunc(func(p Progress) { peak = max(peak, p.Active) })},
		})
		if n := run.Summary.TotalViolations(); n != 0 || run.Summary.Counters.Errors() != 0 {
			b.Fatalf("violations %v errors %d", run.Summary.Violations, run.Summary.Counters.Errors())
		}
		var h *hdrhistogram.Histogram
		for _, k := range run.Histograms.Keys() {
			if k.Metric == measure.FirstChunk {
				h = run.Histograms.Get(k)
			}
		}
		ms := func(us int64) float64 { return float64(us-ttft.Microseconds()) / 1000 }
		b.ReportMetric(ms(h.ValueAtQuantile(50)), "err-p50-ms")
		b.ReportMetric(ms(h.ValueAtQuantile(99)), "err-p99-ms")
		b.ReportMetric(ms(h.Max()), "err-max-ms")
		b.ReportMetric(float64(peak), "peak-streams")
		b.ReportMetric(float64(run.Summary.Counters.LateStarts), "late-starts")
	}
}

// benchLibrary is one scenario with literal text, so every session expects the same answer
// and one pre-encoded stream body serves them all.
func benchLibrary(b *testing.B, words int) (*scenarios.Library, string) {
	b.Helper()
	text := strings.TrimSpace(strings.Repeat("streaming tokens arrive one frame at a time ", words/8+1))
	dir := b.TempDir()
	yaml := fmt.Sprintf("name: bench-answer\ntiming: {ttft: 1ms, itl: 1ms}\nturns:\n  - text: %q\n", text)
	if err := os.WriteFile(filepath.Join(dir, "bench-answer.yaml"), []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	lib, err := scenarios.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	sc, _ := lib.Get("bench-answer")
	return lib, sc.Render(1).Expected().FinalText()
}

// bodyTransport answers every request with the same opted-in sim-chat stream from memory.
type bodyTransport struct{ body []byte }

func (t bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Sim-Stream-Protocol", "agent-events-v1")
	return &http.Response{StatusCode: http.StatusOK, Header: h, Body: io.NopCloser(bytes.NewReader(t.body)), Request: req}, nil
}

// optedInBody encodes final as one chunk frame per word, then the final envelope and [DONE].
func optedInBody(final string) (body []byte, frames int) {
	var b bytes.Buffer
	quote := func(s string) string { q, _ := json.Marshal(s); return string(q) }
	rest := final
	for rest != "" {
		i := strings.IndexByte(rest[1:], ' ')
		piece := rest
		if i >= 0 {
			piece = rest[:i+1]
		}
		rest = rest[len(piece):]
		b.WriteString(`data: {"blockId":"b1","chunk":` + quote(piece) + "}\n\n")
		frames++
	}
	b.WriteString(`data: {"event":"final","data":{"success":true,"output":{"content":` + quote(final) + "}}}\n\n")
	b.WriteString("data: \"[DONE]\"\n\n")
	return b.Bytes(), frames + 2
}

// BenchmarkClientPerFrame measures the generator's own cost per received frame: SSE decoding,
// the sim-chat checker, metrics, and the session around them, on one goroutine (so ns/frame
// is CPU per frame), with the stream served from memory (no network, no server).
//
//	go test -run '^$' -bench ClientPerFrame -benchmem ./loadgen
func BenchmarkClientPerFrame(b *testing.B) {
	lib, final := benchLibrary(b, 400)
	body, frames := optedInBody(final)
	mix := optedInMix(b, "bench", "bench-answer", "bench")
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPUTime()
	run, err := Run(context.Background(), withDialects(Config{
		Target: "http://in-memory", Transport: bodyTransport{body}, Library: lib, Mix: mix,
		RunID: "bench", Clients: 1, Sessions: int64(b.N), NoLeakCheck: true, RuntimeMetricsURL: "-",
	}))
	cpu := processCPUTime() - cpu0
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if n := run.Summary.TotalViolations(); n != 0 || run.Summary.Counters.SessionsOK != int64(b.N) {
		b.Fatalf("violations %v, ok %d of %d", run.Summary.Violations, run.Summary.Counters.SessionsOK, b.N)
	}
	// Wall time per frame, and CPU time per frame (the process's user+system time, which a
	// busy machine inflates less than wall time).
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*int64(frames)), "ns/frame")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(int64(b.N)*int64(frames)), "cpu-ns/frame")
	b.ReportMetric(float64(frames), "frames/session")
}

// BenchmarkOpenStreamMemory opens streams against a server in a child process that holds
// them open, and reports the generator's memory per open stream: live heap plus goroutine
// stacks, after GC, divided by the number of open streams. Run it once:
//
//	go test -run '^$' -bench OpenStreamMemory -benchtime 1x ./loadgen
func BenchmarkOpenStreamMemory(b *testing.B) {
	for _, tc := range []struct {
		mode    string // http1, h2c, https1 (the stream transport over TLS), h2 (TLS, ALPN)
		streams []int
	}{
		{"http1", []int{1000, 4000}},
		{"h2c", []int{1000, 4000}},
		{"https1", []int{2000, 5000}},
		{"h2", []int{2000, 5000}},
	} {
		for _, streams := range tc.streams {
			b.Run(fmt.Sprintf("%s/streams=%d", tc.mode, streams), func(b *testing.B) {
				for b.Loop() {
					b.ReportMetric(openStreamMemory(b, streams, tc.mode), "B/stream")
				}
			})
		}
	}
}

func openStreamMemory(b *testing.B, streams int, mode string) float64 {
	b.Helper()
	var url string
	var conf *tls.Config
	if mode == "https1" || mode == "h2" {
		ca := filepath.Join(b.TempDir(), "ca.pem")
		url = startChildServer(b, "LOADGEN_CHILD_SERVER=hold-tls", "LOADGEN_CERT="+ca)
		pem, err := os.ReadFile(ca)
		if err != nil {
			b.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		conf = &tls.Config{RootCAs: pool}
	} else {
		url = startChildServer(b, "LOADGEN_CHILD_SERVER=hold")
	}
	mix := optedInMix(b, "hold", "plain-answer", "hold")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	measured := make(chan float64, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Run(ctx, withDialects(Config{
			Target: url, Mix: mix, RunID: "hold", Clients: streams, Sessions: int64(streams),
			NoLeakCheck: true, RuntimeMetricsURL: "-", StreamTimeout: time.Minute,
			HTTP2: mode == "h2c" || mode == "h2", TLS: conf,
			Outputs: []Output{ProgressFunc(func(p Progress) {
				if p.Active == int64(streams) {
					select {
					case measured <- 0:
					default:
					}
				}
			})},
		}))
	}()
	select {
	case <-measured:
	case <-time.After(45 * time.Second):
		b.Fatalf("%d streams did not all open within 45s", streams)
	}
	// Stacks shrink by half per GC cycle while a goroutine uses under a quarter of its
	// stack; a long-running generator goes through many cycles, so measure the steady state
	// (the JSON decoding in the checkers grows stacks briefly).
	for range 4 {
		runtime.GC()
	}
	runtime.ReadMemStats(&after)
	if f := os.Getenv("LOADGEN_HEAP_PROFILE"); f != "" {
		// A heap profile at the measured moment shows where per-stream memory goes.
		if w, err := os.Create(f); err == nil {
			_ = pprof.WriteHeapProfile(w)
			_ = w.Close()
		}
	}
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	stacks := float64(after.StackInuse) - float64(before.StackInuse)
	b.ReportMetric(heap/float64(streams), "heapB/stream")
	b.ReportMetric(stacks/float64(streams), "stackB/stream")
	cancel()
	<-done
	return (heap + stacks) / float64(streams)
}

// processCPUTime is the process's user + system CPU time so far.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// optedInMix is a mix of one scenario played by opted-in sim-chat clients against one target.
func optedInMix(tb testing.TB, name, scenario, slug string) *Mix {
	tb.Helper()
	mix, err := NewMix(name, 1, map[string]float64{scenario: 1}, []Profile{
		{Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1, Targets: []Target{{Slug: slug}}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return mix
}
