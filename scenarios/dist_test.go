package scenarios

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// quantiles samples d n times and returns the sorted samples' p50 and p99. Sorting is fine in a
// test of the sampler itself; measurement code uses HdrHistogram.
func quantiles(d Dist, n int) (p50, p99 time.Duration, samples []time.Duration) {
	r := rand.New(rand.NewPCG(1, 2))
	samples = make([]time.Duration, n)
	for i := range samples {
		samples[i] = d.Sample(r)
	}
	slices.Sort(samples)
	return samples[n/2], samples[n*99/100], samples
}

// within reports whether got is within frac of want.
func within(got, want time.Duration, frac float64) bool {
	diff := float64(got - want)
	return diff <= frac*float64(want) && -diff <= frac*float64(want)
}

func TestDistSampleStatistics(t *testing.T) {
	t.Parallel()
	const n = 10000
	t.Run("lognormal median and p99", func(t *testing.T) {
		t.Parallel()
		d := Dist{Kind: DistLognormal, Median: 300 * time.Millisecond, P99: 1200 * time.Millisecond}
		p50, p99, _ := quantiles(d, n)
		if !within(p50, d.Median, 0.05) {
			t.Errorf("median %v, want %v ±5%%", p50, d.Median)
		}
		if !within(p99, d.P99, 0.10) {
			t.Errorf("p99 %v, want %v ±10%%", p99, d.P99)
		}
	})
	t.Run("lognormal clamped to max", func(t *testing.T) {
		t.Parallel()
		d := Dist{Kind: DistLognormal, Median: 300 * time.Millisecond, P99: 1200 * time.Millisecond, Max: 500 * time.Millisecond}
		_, _, s := quantiles(d, n)
		if s[len(s)-1] != d.Max {
			t.Errorf("max sample %v, want clamped to %v", s[len(s)-1], d.Max)
		}
	})
	t.Run("lognormal with p99 equal to median is constant", func(t *testing.T) {
		t.Parallel()
		d := Dist{Kind: DistLognormal, Median: 40 * time.Millisecond, P99: 40 * time.Millisecond}
		_, _, s := quantiles(d, 100)
		if s[0] != s[len(s)-1] || !within(s[0], d.Median, 0.001) {
			t.Errorf("samples span %v..%v, want all %v", s[0], s[len(s)-1], d.Median)
		}
	})
	t.Run("uniform bounds and centre", func(t *testing.T) {
		t.Parallel()
		d := Dist{Kind: DistUniform, Min: 20 * time.Millisecond, Max: 40 * time.Millisecond}
		p50, _, s := quantiles(d, n)
		if s[0] < d.Min || s[len(s)-1] > d.Max {
			t.Errorf("samples span %v..%v, want within %v..%v", s[0], s[len(s)-1], d.Min, d.Max)
		}
		if !within(p50, 30*time.Millisecond, 0.03) {
			t.Errorf("median %v, want 30ms", p50)
		}
	})
	t.Run("normal mean and clamp", func(t *testing.T) {
		t.Parallel()
		d := Dist{Kind: DistNormal, Mean: 10 * time.Millisecond, Stddev: 10 * time.Millisecond, Max: 25 * time.Millisecond}
		p50, _, s := quantiles(d, n)
		if s[0] < 0 || s[len(s)-1] > d.Max {
			t.Errorf("samples span %v..%v, want within 0..%v", s[0], s[len(s)-1], d.Max)
		}
		if !within(p50, d.Mean, 0.05) {
			t.Errorf("median %v, want %v", p50, d.Mean)
		}
		if s[0] != 0 {
			t.Errorf("min sample %v; with mean = stddev some samples must clamp to 0", s[0])
		}
	})
	t.Run("constant and zero", func(t *testing.T) {
		t.Parallel()
		r := rand.New(rand.NewPCG(3, 4))
		if got := Constant(7 * time.Millisecond).Sample(r); got != 7*time.Millisecond {
			t.Errorf("constant sampled %v", got)
		}
		if got := (Dist{}).Sample(r); got != 0 {
			t.Errorf("zero Dist sampled %v", got)
		}
	})
}

func TestDistExpectation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    Dist
		want time.Duration
	}{
		{Constant(5 * time.Millisecond), 5 * time.Millisecond},                                                           // the value itself
		{Dist{Kind: DistUniform, Min: 10 * time.Millisecond, Max: 30 * time.Millisecond}, 20 * time.Millisecond},         // the midpoint
		{Dist{Kind: DistNormal, Mean: 8 * time.Millisecond, Stddev: time.Millisecond}, 8 * time.Millisecond},             // the mean
		{Dist{Kind: DistLognormal, Median: 100 * time.Millisecond, P99: 100 * time.Millisecond}, 100 * time.Millisecond}, // no spread
	}
	for _, tt := range tests {
		if got := tt.d.Expectation(); got != tt.want {
			t.Errorf("%v.Expectation() = %v, want %v", tt.d, got, tt.want)
		}
	}
	ln := Dist{Kind: DistLognormal, Median: 300 * time.Millisecond, P99: 1200 * time.Millisecond}
	_, _, s := quantiles(ln, 10000)
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	if mean := sum / time.Duration(len(s)); !within(ln.Expectation(), mean, 0.05) {
		t.Errorf("lognormal expectation %v, sample mean %v", ln.Expectation(), mean)
	}
}

func BenchmarkDistSample(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	d := Dist{Kind: DistLognormal, Median: 300 * time.Millisecond, P99: 1200 * time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		_ = d.Sample(r)
	}
}
