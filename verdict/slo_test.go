package verdict_test

import (
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/verdict"
)

func TestParseSessionSLO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr    string
		metric  measure.Metric
		op      string
		limit   float64
		wantErr string
	}{
		// A latency limit is a duration, kept in microseconds.
		{expr: "ttft<500ms", metric: measure.TimeToFirstToken, op: "<", limit: 500_000},
		// Spaces around the operator are fine; tpot per session.
		{expr: "tpot <= 50ms", metric: measure.TimePerOutputToken, op: "<=", limit: 50_000},
		// A rate limit is tokens per second, kept ×RateScale like its histogram.
		{expr: "stream_tokens_per_s>=20.5", metric: measure.StreamTokensPerSecond, op: ">=", limit: 20_500},
		// itl has many values per session, so no per-session SLO.
		{expr: "itl<10ms", wantErr: `unknown per-session metric "itl"`},
		// No operator.
		{expr: "ttft500ms", wantErr: "want METRIC OP LIMIT"},
		// A latency limit that is not a duration.
		{expr: "ttfo<fast", wantErr: `limit "fast": want a duration`},
		// A rate limit that is not a number.
		{expr: "stream_tokens_per_s>10ms", wantErr: "want tokens per second"},
	} {
		s, err := verdict.ParseSessionSLO(tc.expr)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.expr) {
				t.Errorf("%q: error %v, want one naming the SLO and %q", tc.expr, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.expr, err)
		case s.Metric() != tc.metric || s.Op != tc.op || s.Limit != tc.limit:
			t.Errorf("%q: %+v, want %s %s %v", tc.expr, s, tc.metric, tc.op, tc.limit)
		}
	}
}

func TestSessionSLOMet(t *testing.T) {
	t.Parallel()
	s, err := verdict.ParseSessionSLO("ttft<500ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		value float64
		ok    bool
		want  bool
	}{
		{499_999, true, true},  // under the limit
		{500_000, true, false}, // at the limit: < is strict
		{100, false, false},    // the session never produced a token
	} {
		if got := s.Met(tc.value, tc.ok); got != tc.want {
			t.Errorf("Met(%v, %v) = %v, want %v", tc.value, tc.ok, got, tc.want)
		}
	}
}

// TestSessionSLOMetricNames: the help text names every metric ParseSessionSLO accepts, and
// ParseSessionSLO accepts every metric the registry says a session has one value of.
func TestSessionSLOMetricNames(t *testing.T) {
	t.Parallel()
	names := measure.SessionSLOMetricNames()
	for _, d := range measure.Registry() {
		_, err := verdict.ParseSessionSLO(string(d.Name) + ">=0")
		if d.PerSession != (err == nil) {
			t.Errorf("ParseSessionSLO(%q) = %v, but the registry's PerSession is %v", d.Name+">=0", err, d.PerSession)
		}
		if d.PerSession && !strings.Contains(names, string(d.Name)) {
			t.Errorf("%q not in %q", d.Name, names)
		}
	}
}
