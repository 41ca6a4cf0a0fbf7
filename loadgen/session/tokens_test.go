package session

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/modeltokens"
	"github.com/streambench/streambench/protocol"
)

// TestUsagelessTextScaled: a usage-less session keeps at most protocol.MaxOutputText bytes of
// its text (clientturn's TestOutputTextIsBounded), and its count is the kept part's scaled to
// every byte the stream carried.
func TestUsagelessTextScaled(t *testing.T) {
	t.Parallel()
	sentence := "The Los Angeles Dodgers won the World Series in 2020. "
	whole := strings.Repeat(sentence, 60000) // 3.24 MB
	tc := tokenClock{usageOnly: true, frames: 60, kept: true, text: []byte(whole[:protocol.MaxOutputText]), textTotal: int64(len(whole))}
	tc.settle("cl100k_base")
	want, err := modeltokens.Count("cl100k_base", whole)
	if err != nil {
		t.Fatal(err)
	}
	// Scaled by bytes from a cut that may split a word: within a tenth of a percent.
	if diff := math.Abs(float64(tc.estimated-int64(want))) / float64(want); diff > 0.001 || tc.method == "" {
		t.Errorf("estimated %d tokens (%s), the whole text has %d (%.3f%% apart)", tc.estimated, tc.method, want, diff*100)
	}
	// Without the scaling, the count would be the kept megabyte's: about a third.
	if tc.estimated < int64(want)/2 {
		t.Errorf("estimated %d tokens: the kept part's count, not scaled to the whole %d", tc.estimated, want)
	}
}

// TestTokenClockWithoutGroundTruth: without ground truth the usage report's count is spread
// over the text frames: ttft and ttfo from the frames, tpot from the count, itl as tokens−1
// values of tpot.
func TestTokenClockWithoutGroundTruth(t *testing.T) {
	t.Parallel()
	rec := NewRecorder(1)
	m := rec.session(0, "s", "d", true)
	m.tokens.usageOnly = true
	t0 := time.Unix(0, 0)
	frames := []struct {
		at  time.Duration
		obs protocol.Observation
	}{
		{100 * time.Millisecond, protocol.Observation{Kind: protocol.FrameThinking, TextBytes: 9, Tokens: 2}},
		{150 * time.Millisecond, protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: 9, Tokens: 2}},
		{300 * time.Millisecond, protocol.Observation{Kind: protocol.FrameAnswer, TextBytes: 9, Tokens: 2}},
		{310 * time.Millisecond, protocol.Observation{Kind: protocol.FrameOther, UsageTokens: 11}},
	}
	for _, f := range frames {
		obs := f.obs
		m.tokens.observe(t0.Add(f.at), f.at, &obs, m)
	}
	m.duration = 400 * time.Millisecond
	m.flush()
	h := rec.Merge()
	get := func(metric measure.Metric) measure.MetricSummary {
		k := measure.Key{Metric: metric, Scenario: "s", Dialect: "d"}
		return measure.SummarizeOne(k, h.Get(k))
	}
	if v := get(measure.TimeToFirstToken); v.Count != 1 || v.Max/1000 != 100 {
		t.Errorf("ttft %+v, want 100 ms", v)
	}
	if v := get(measure.TimeToFirstOutput); v.Count != 1 || v.Max/1000 != 150 {
		t.Errorf("ttfo %+v, want 150 ms", v)
	}
	// 11 tokens (the usage report, not the checker's 6) between 100 and 300 ms: 20 ms each.
	if v := get(measure.TimePerOutputToken); v.Count != 1 || v.Max/1000 != 20 {
		t.Errorf("tpot %+v, want 20 ms", v)
	}
	if v := get(measure.InterTokenLatency); v.Count != 10 || v.Max/1000 != 20 {
		t.Errorf("itl %+v, want 10 values of 20 ms", v)
	}
	if n := rec.outputTokens.Load(); n != 11 {
		t.Errorf("output tokens %d, want 11 from usage", n)
	}
}

// A stream faster than the rate histogram's top (a gateway that buffers a whole answer, a
// scaled-down test) records at measure.MaxRate instead of an out-of-range error that would fail
// the run; a stream that took under a microsecond has no rate.
func TestTokenRateSaturates(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		tokens   int64
		duration time.Duration
		want     int64
	}{
		// 100 tokens in a second: 100 tokens/s, stored ×RateScale.
		{"ordinary", 100, time.Second, 100 * measure.RateScale},
		// 130,000 tokens in 30 ms is 4.3 M tokens/s, above the 3.6 M top.
		{"burst", 130_000, 30 * time.Millisecond, measure.MaxRate},
		// No measurable time: no rate.
		{"instant", 10, 0, 0},
	} {
		clock := tokenClock{tokens: tc.tokens}
		if got := clock.rate(tc.duration); got != tc.want {
			t.Errorf("%s: rate %d, want %d", tc.name, got, tc.want)
		}
	}
	rec := NewRecorder(1)
	m := rec.session(0, "s", "d", true)
	m.tokens.tokens, m.duration = 130_000, 30*time.Millisecond
	m.tokens.firstAt, m.tokens.lastAt = time.Unix(0, 0), time.Unix(0, int64(30*time.Millisecond))
	m.flush()
	if n := rec.RecordErrs.Load(); n != 0 {
		t.Errorf("a burst stream counted %d record errors, want 0", n)
	}
}
