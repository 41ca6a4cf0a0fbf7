package measure

import (
	"strings"
	"testing"
)

func TestParseSessionSLO(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr    string
		metric  Metric
		op      string
		limit   float64
		wantErr string
	}{
		// A latency limit is a duration, kept in microseconds.
		{expr: "ttft<500ms", metric: TimeToFirstToken, op: "<", limit: 500_000},
		// Spaces around the operator are fine; tpot per session.
		{expr: "tpot <= 50ms", metric: TimePerOutputToken, op: "<=", limit: 50_000},
		// A rate limit is tokens per second, kept ×RateScale like its histogram.
		{expr: "stream_tokens_per_s>=20.5", metric: StreamTokensPerSecond, op: ">=", limit: 20_500},
		// itl has many values per session, so no per-session SLO.
		{expr: "itl<10ms", wantErr: `unknown per-session metric "itl"`},
		// No operator.
		{expr: "ttft500ms", wantErr: "want METRIC OP LIMIT"},
		// A latency limit that is not a duration.
		{expr: "ttfo<fast", wantErr: `limit "fast": want a duration`},
		// A rate limit that is not a number.
		{expr: "stream_tokens_per_s>10ms", wantErr: "want tokens per second"},
	} {
		s, err := ParseSessionSLO(tc.expr)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.expr) {
				t.Errorf("%q: error %v, want one naming the SLO and %q", tc.expr, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.expr, err)
		case s.Metric != tc.metric || s.Op != tc.op || s.Limit != tc.limit:
			t.Errorf("%q: %+v, want %s %s %v", tc.expr, s, tc.metric, tc.op, tc.limit)
		}
	}
}

func TestSessionSLOMet(t *testing.T) {
	t.Parallel()
	s, err := ParseSessionSLO("ttft<500ms")
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

// TestSessionSLOMetricNames: the help text names every metric ParseSessionSLO accepts.
func TestSessionSLOMetricNames(t *testing.T) {
	t.Parallel()
	names := SessionSLOMetricNames()
	for _, m := range SessionSLOMetrics() {
		if !strings.Contains(names, string(m)) {
			t.Errorf("%q not in %q", m, names)
		}
	}
}
