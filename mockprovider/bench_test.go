package mockprovider

import (
	"context"
	"testing"
	"time"
)

// BenchmarkPacing plays 500 concurrent 20 tokens/s streams for 3 s through real h2c per
// iteration (the self-test, scaled down) and reports the pacing error percentiles and the CPU
// cost per token. `streambench mock --self-test` runs the full 2,000-stream version.
func BenchmarkPacing(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := SelfTest(context.Background(), SelfTestOptions{
			Streams: 500, TokensPerSecond: 20, Duration: 3 * time.Second, Ramp: time.Second, Connections: 2,
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
