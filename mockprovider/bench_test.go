package mockprovider

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/scenarios"
)

// BenchmarkPacing plays 2,000 concurrent 20 tokens/s streams for 5 s, one HTTP/1.1 connection
// each, per iteration (the self-test, shortened; SB_H2C=N multiplexes them over N h2c
// connections instead) and reports the pacing error percentiles and the CPU cost per token.
// `streambench mock --self-test` runs the same with flags, and with GOMAXPROCS raised (see
// docs/BENCHMARKS.md): run this with GOMAXPROCS=4 on a 2-core machine to compare.
func BenchmarkPacing(b *testing.B) {
	h2cConns, _ := strconv.Atoi(os.Getenv("SB_H2C"))
	b.ReportAllocs()
	for b.Loop() {
		res, err := SelfTest(context.Background(), SelfTestOptions{
			Streams: 2000, TokensPerSecond: 20, Duration: 5 * time.Second, Ramp: time.Second, Connections: h2cConns,
		})
		if err != nil {
			b.Fatal(err)
		}
		if res.Failed > 0 {
			b.Fatalf("%d streams failed: %s", res.Failed, res.FirstFailure)
		}
		b.ReportMetric(float64(res.PacingError.ValueAtQuantile(50)), "pacing-p50-µs")
		b.ReportMetric(float64(res.PacingError.ValueAtQuantile(99)), "pacing-p99-µs")
		b.ReportMetric(float64(res.PacingError.Max()), "pacing-max-µs")
		b.ReportMetric(float64(res.CPUPerToken.Nanoseconds())/1e3, "cpu-µs/token")
	}
}

// discardFlusher is a ResponseWriter that throws bytes away, so a benchmark measures the
// mock's own cost per request and frame.
type discardFlusher struct{ header http.Header }

func (d *discardFlusher) Header() http.Header         { return d.header }
func (d *discardFlusher) WriteHeader(int)             {}
func (d *discardFlusher) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardFlusher) Flush()                      {}

// BenchmarkServeTurn plays one whole turn per iteration with no delays into a discarding
// writer: request parsing, selection, rendering, one frame per step, records and metrics.
// It reports the cost per frame as well as per request.
func BenchmarkServeTurn(b *testing.B) {
	for _, bc := range []struct {
		name, path, scenario string
	}{
		{"openai/plain-answer", PathOpenAI, "plain-answer"},
		{"openai/long-answer", PathOpenAI, "long-answer"},
		{"anthropic/long-answer", PathAnthropic, "long-answer"},
		{"openai/tool-chain", PathOpenAI, "tool-chain"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, err := New(Options{Library: scenarios.Embedded(), TimeScale: 0, SessionHistory: 1024})
			if err != nil {
				b.Fatal(err)
			}
			body := openaiBody(directive(bc.scenario, 1, "bench"), true)
			if bc.path == PathAnthropic {
				body = anthropicBody(directive(bc.scenario, 1, "bench"), true)
			}
			sc, _ := scenarios.Embedded().Get(bc.scenario)
			frames := len(sc.Render(1).Turns[0].Steps)
			w := &discardFlusher{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, bc.path, strings.NewReader(body))
				clear(w.header)
				srv.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*frames), "ns/frame")
		})
	}
}
