package mockprovider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSelfTestPlaysAndCountsEveryStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		wire  string
		conns int
	}{
		{"openai", 2},    // h2c, streams multiplexed over two connections
		{"anthropic", 2}, // the other wire
		{"openai", 0},    // one HTTP/1.1 connection per stream, drained by the raw client
		{"anthropic", 0}, // the other wire, raw
	} {
		t.Run(fmt.Sprintf("%s/conns=%d", tc.wire, tc.conns), func(t *testing.T) {
			t.Parallel()
			// 10 streams of 0.2 s at 50 tokens/s: 10 tokens each.
			res, err := SelfTest(context.Background(), SelfTestOptions{
				Streams: 10, TokensPerSecond: 50, Duration: 200 * time.Millisecond, Ramp: 10 * time.Millisecond, Connections: tc.conns, Wire: tc.wire,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 10 || res.Failed != 0 {
				t.Fatalf("completed %d, failed %d (%s), want 10 and 0", res.Completed, res.Failed, res.FirstFailure)
			}
			if res.Tokens != 100 || res.Frames != 100 || res.PacingErrorWithRamp.TotalCount() != 100 || res.PacingError.TotalCount() > 100 {
				t.Errorf("tokens %d, frames %d, pacing samples %d (%d after the ramp); want 100 each (and no more after the ramp)", res.Tokens, res.Frames, res.PacingErrorWithRamp.TotalCount(), res.PacingError.TotalCount())
			}
			if res.CPU <= 0 || res.CPUPerToken <= 0 {
				t.Errorf("CPU %s, per token %s: want both measured", res.CPU, res.CPUPerToken)
			}
			if out := res.String(); !strings.Contains(out, "pacing error") || !strings.Contains(out, "µs per token") {
				t.Errorf("report lacks figures:\n%s", out)
			}
		})
	}
	if _, err := SelfTest(context.Background(), SelfTestOptions{Wire: "grpc"}); err == nil || !strings.Contains(err.Error(), `wire "grpc"`) {
		t.Errorf("unknown wire: err %v, want one naming it", err)
	}
	// More HTTP/1.1 streams than file descriptors: refused up front, not a pile of EMFILEs.
	if _, err := SelfTest(context.Background(), SelfTestOptions{Streams: 10_000_000}); err == nil || !strings.Contains(err.Error(), "file descriptors") || !strings.Contains(err.Error(), "--conns") {
		t.Errorf("10 million HTTP/1.1 streams: err %v, want one naming the descriptor limit and --conns", err)
	}
}

// TestSelfTestOptionsString: the self-test's one-line description names its transport.
func TestSelfTestOptionsString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    SelfTestOptions
		want string
	}{
		// one HTTP/1.1 connection per stream
		{"http1", SelfTestOptions{Streams: 2, TokensPerSecond: 20, Duration: time.Second, Wire: "openai"}, "2 streams × 20 tokens/s for 1s over one HTTP/1.1 connection per stream, openai wire"},
		// multiplexed over h2c
		{"h2c", SelfTestOptions{Streams: 2, TokensPerSecond: 20, Duration: time.Second, Connections: 3, Wire: "anthropic"}, "2 streams × 20 tokens/s for 1s over 3 h2c connection(s), anthropic wire"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.o.String(); got != tc.want {
				t.Fatalf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}
