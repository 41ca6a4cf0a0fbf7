package workload

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/loadgen/leakcheck"
	"github.com/streambench/streambench/measure"
)

// Leaks are the flags of a leak check that spans a sharded run (leaks and merge).
type Leaks struct {
	RuntimeMetrics, Mock string
	grace                time.Duration
	perStream            float64
	PeakStreams          int64
}

// Redactor hides the userinfo of the leak check's URLs in what it prints and records.
func (l *Leaks) Redactor() *loadgen.Redactor {
	return loadgen.NewRedactor(nil, []string{l.RuntimeMetrics, l.Mock}, nil)
}

// AddLeaks registers the leak check's flags on fs: where to read, and with verify how to judge.
func AddLeaks(fs *pflag.FlagSet, verify bool) *Leaks {
	l := &Leaks{}
	fs.StringVar(&l.RuntimeMetrics, "runtime-metrics", "", "the runtime's Prometheus endpoint, e.g. http://runtime:8080/metrics")
	fs.StringVar(&l.Mock, "mock", "", "the mock provider's base URL (its /metrics is read)")
	if verify {
		fs.DurationVar(&l.grace, "leak-grace", leakcheck.DefaultGrace, "how long gauges may take to return to their baseline")
		fs.Float64Var(&l.perStream, "leak-per-stream", leakcheck.DefaultPerStream, "goroutines, descriptors and handles per peak open stream the runtime and mock may keep, on top of 16")
		fs.Int64Var(&l.PeakStreams, "peak-streams", 0, "the run's peak open streams over every shard, for that tolerance (merge: default the sum of the shards' peaks in their timelines)")
	}
	return l
}

// Probe is the leak check the flags ask for.
func (l *Leaks) Probe() *leakcheck.Probe {
	return &leakcheck.Probe{RuntimeURL: l.RuntimeMetrics, MockURL: strings.TrimSuffix(l.Mock, "/"),
		Grace: l.grace, PerStream: l.perStream, Peak: func() int64 { return l.PeakStreams }}
}

// Verify verifies against the baseline file; the URLs' userinfo is hidden in what it says.
func (l *Leaks) Verify(ctx context.Context, file string) ([]measure.Leak, []measure.LeakNotChecked, error) {
	leaks, notChecked, err := l.Probe().VerifyFile(ctx, file)
	if err != nil {
		return nil, nil, l.Redactor().Error(err)
	}
	for i := range notChecked {
		notChecked[i].Reason = l.Redactor().String(notChecked[i].Reason)
	}
	return leaks, notChecked, nil
}
