package measure

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SessionSLO is one per-session service level objective for goodput, such as "ttft<500ms",
// "tpot<=50ms" or "stream_tokens_per_s>=20": the load generator evaluates it on each session's
// own value when the session ends. It lives here, not in report, because the load generator
// evaluates it and must not import the report package.
type SessionSLO struct {
	Expr   string // as written
	Metric Metric
	Op     string // < <= == >= >
	// Limit is microseconds for a latency, tokens/s × RateScale for a rate.
	Limit float64
}

// SessionSLOMetrics are the metrics a session has one value of, which an SLO can name.
var sessionSLOMetrics = []Metric{Headers, FirstEvent, FirstChunk, FirstChunkOverhead, TimeToFirstToken, FirstTokenOverhead,
	TimeToFirstOutput, TimePerOutputToken, StreamTokensPerSecond, StreamDuration}

// SessionSLOMetrics returns the metrics ParseSessionSLO accepts (a fresh slice).
func SessionSLOMetrics() []Metric { return slices.Clone(sessionSLOMetrics) }

// SessionSLOMetricNames lists SessionSLOMetrics comma-separated, for help texts.
func SessionSLOMetricNames() string {
	names := make([]string, 0, len(sessionSLOMetrics))
	for _, m := range sessionSLOMetrics {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

var sloOperators = []string{"<=", ">=", "==", "<", ">"}

// ParseSessionSLO parses METRIC OP LIMIT: a duration limit for latencies (500ms, 1.5s), a plain
// number of tokens per second for stream_tokens_per_s.
func ParseSessionSLO(expr string) (SessionSLO, error) {
	bad := func(format string, args ...any) (SessionSLO, error) {
		return SessionSLO{}, fmt.Errorf("goodput SLO %q: %s", expr, fmt.Sprintf(format, args...))
	}
	at, op := -1, ""
	for i := 0; i < len(expr) && at < 0; i++ {
		for _, o := range sloOperators {
			if strings.HasPrefix(expr[i:], o) {
				at, op = i, o
				break
			}
		}
	}
	if at < 0 {
		return bad("want METRIC OP LIMIT, e.g. ttft<500ms (OP: < <= == >= >)")
	}
	name := Metric(strings.TrimSpace(expr[:at]))
	if !slices.Contains(sessionSLOMetrics, name) {
		names := make([]string, len(sessionSLOMetrics))
		for i, m := range sessionSLOMetrics {
			names[i] = string(m)
		}
		return bad("unknown per-session metric %q: want one of %s", name, strings.Join(names, ", "))
	}
	limit := strings.TrimSpace(expr[at+len(op):])
	s := SessionSLO{Expr: expr, Metric: name, Op: op}
	if name.IsRate() {
		v, err := strconv.ParseFloat(limit, 64)
		if err != nil || v < 0 {
			return bad("limit %q: want tokens per second, a number such as 20", limit)
		}
		s.Limit = v * RateScale
		return s, nil
	}
	d, err := time.ParseDuration(limit)
	if err != nil || d < 0 {
		return bad("limit %q: want a duration such as 500ms or 1.5s", limit)
	}
	s.Limit = float64(d) / float64(time.Microsecond)
	return s, nil
}

// Met tells whether a session's value meets the SLO; value is in the metric's histogram unit
// (microseconds, or tokens/s × RateScale) and ok says whether the session had one. A session
// without the value (no token at all for ttft, a single token for tpot) does not meet it.
func (s SessionSLO) Met(value float64, ok bool) bool {
	if !ok {
		return false
	}
	switch s.Op {
	case "<":
		return value < s.Limit
	case "<=":
		return value <= s.Limit
	case "==":
		return value == s.Limit
	case ">=":
		return value >= s.Limit
	}
	return value > s.Limit
}
