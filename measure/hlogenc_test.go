package measure

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TestIntervalEncoderMatchesTheLibrary: each line the encoder writes has the library writer's
// columns (tag, start, length, max) and a payload that decodes to the same histogram, for
// packed and dense keys, one value, spread values and counts too big for 8 LEB128 bytes.
func TestIntervalEncoderMatchesTheLibrary(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		name string
		fill func(*keyHistogram)
	}{
		// a single value: packed
		{"one value", func(kh *keyHistogram) { _ = kh.recordN(1234, 1) }},
		// a few hundred values over the range: packed
		{"packed spread", func(kh *keyHistogram) {
			for range 300 {
				_ = kh.recordN(1+rng.Int64N(int64(time.Hour/time.Microsecond)), 1)
			}
		}},
		// more than denseAfter values: dense
		{"dense", func(kh *keyHistogram) {
			for range 5000 {
				_ = kh.recordN(100+rng.Int64N(500_000), 1)
			}
		}},
		// a count over 2^56 needs the ninth, 8-bit byte of the ZigZag encoding
		{"huge count", func(kh *keyHistogram) {
			kh.densify(true)
			_ = kh.dense.RecordValues(777, 1<<57)
			_ = kh.dense.RecordValues(3, 5)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			k := Key{Metric: FirstChunk, Scenario: "s", Dialect: "d"}
			kh := newKeyHistogram(k)
			tc.fill(kh)
			const start, end, base = 1_700_000_000_000, 1_700_000_002_500, 1_700_000_000_000
			var ours bytes.Buffer
			if err := newIntervalEncoder().writeInterval(&ours, k.tag(), start, end, base, kh); err != nil {
				t.Fatal(err)
			}
			want := kh.toDense()
			want.SetTag(k.tag())
			want.SetStartTimeMs(start)
			want.SetEndTimeMs(end)
			var lib bytes.Buffer
			lw := hdrhistogram.NewHistogramLogWriter(&lib)
			lw.SetBaseTime(base)
			if err := lw.OutputIntervalHistogram(want); err != nil {
				t.Fatal(err)
			}
			o, l := strings.Split(ours.String(), ","), strings.Split(lib.String(), ",")
			if len(o) != 5 || len(l) != 5 || strings.Join(o[:4], ",") != strings.Join(l[:4], ",") {
				t.Fatalf("line %q, library's %q: want the same columns", ours.String(), lib.String())
			}
			got, err := hdrhistogram.Decode([]byte(strings.TrimSpace(o[4])))
			if err != nil {
				t.Fatal(err)
			}
			gd, wd := got.Distribution(), want.Distribution()
			if got.TotalCount() != want.TotalCount() || len(gd) != len(wd) {
				t.Fatalf("decoded %d values in %d buckets, want %d in %d", got.TotalCount(), len(gd), want.TotalCount(), len(wd))
			}
			for i := range gd {
				if gd[i] != wd[i] {
					t.Fatalf("bucket %d: %+v, want %+v", i, gd[i], wd[i])
				}
			}
		})
	}
}

// TestMaxOf: the max from the counts' last index is Max()'s, over the whole range.
func TestMaxOf(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	h := NewHistogram()
	for i := range 3000 {
		v := int64(i) // every value of the first buckets, then random ones up to an hour
		if i >= 2100 {
			v = 1 + rng.Int64N(highestMicros)
		}
		h.Reset()
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		counts := h.Export().Counts
		limit := len(counts)
		for limit > 1 && counts[limit-1] == 0 {
			limit--
		}
		if got, want := maxOf(h, counts, limit), h.Max(); got != want {
			t.Fatalf("value %d: maxOf %d, Max %d", v, got, want)
		}
	}
}

// BenchmarkWriteLog is histograms.hlog's cost per key for a set like a run's: mostly packed
// keys of a few hundred values, some dense.
func BenchmarkWriteLog(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	h := NewHistograms()
	metrics := AllMetrics()
	for i := range 400 {
		k := Key{Metric: metrics[i%len(metrics)], Scenario: "s" + string(rune('a'+i/len(metrics))), Dialect: "d"}
		n := 300
		if i%10 == 0 {
			n = 5000
		}
		for range n {
			_ = h.Record(k, time.Duration(100+rng.Int64N(500_000))*time.Microsecond)
		}
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := h.WriteLog(&buf, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(h.Len()), "µs/key")
}
