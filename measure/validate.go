package measure

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/streambench/streambench/protocol"
)

// Validate checks that a summary agrees with itself (judging one that does not could turn a
// FAIL into a PASS); the error names the field.
func (s *Summary) Validate() error {
	if err := s.Counters.validate(); err != nil {
		return err
	}
	if err := negativeIn("violations.%s", s.Violations); err != nil {
		return err
	}
	// A snapshot's or an interrupted run's counters were read while sessions ended.
	if !s.Incomplete && !s.Interrupted {
		if err := s.validateCounters(); err != nil {
			return err
		}
	}
	for i, l := range s.Leaks {
		name := fmt.Sprintf("leaks[%d] (%s %s)", i, l.Source, l.Name)
		if delta := l.After - l.Before; math.Abs(l.Delta-delta) > 1e-9*max(1, math.Abs(l.Before), math.Abs(l.After)) {
			return fmt.Errorf("%s: delta %g, but after − before is %g", name, l.Delta, delta)
		}
		if l.OK != (l.Delta <= l.Tolerance) {
			return fmt.Errorf("%s: ok is %t with a delta of %g and a tolerance of %g", name, l.OK, l.Delta, l.Tolerance)
		}
	}
	for _, list := range []struct {
		name    string
		metrics []MetricSummary
	}{{"metrics", s.Metrics}, {"overall", s.Overall}} {
		for i, m := range list.metrics {
			if err := m.validate(); err != nil {
				return fmt.Errorf("%s[%d] (%s): %w", list.name, i, m.Key, err)
			}
		}
	}
	for i, series := range s.OverTime {
		for j, w := range series.Windows {
			if w.Count < 0 || w.StartMs < 0 || w.P50 < 0 || w.P95 < 0 || w.P99 < 0 {
				return fmt.Errorf("latency_over_time[%d] (%s) window %d: a negative figure", i, series.Metric, j)
			}
		}
	}
	return s.Tokens.validate()
}

func (c *Counters) validate() error {
	if name, n := firstNegative(*c); name != "" {
		return fmt.Errorf("counters.%s is %d: a count cannot be negative", name, n)
	}
	if c.WarmupRequests > c.CompletedRequests() {
		return fmt.Errorf("counters.warmup_requests is %d, more than the %d completed requests", c.WarmupRequests, c.CompletedRequests())
	}
	for _, o := range slices.Sorted(maps.Keys(c.Outcomes)) {
		if !o.Valid() {
			return fmt.Errorf("counters.outcomes.%s: not an outcome (want one of %s)", o, OutcomeNames())
		}
	}
	return cmp.Or(
		negativeIn("counters.outcomes.%s", c.Outcomes),
		negativeIn("counters.sessions_failed_by_rules[%q]", c.FailedByRules),
		negativeIn("counters.http_errors[%d]", c.HTTPErrors),
		negativeIn("counters.estimated_by[%q]", c.EstimatedBy),
	)
}

func (t *TokenSummary) validate() error {
	if t == nil {
		return nil
	}
	g := t.Goodput
	switch {
	case t.OutputTokens < 0, t.EstimatedTokens < 0, t.EstimatedSessions < 0:
		return fmt.Errorf("tokens: a negative token count")
	case !(t.OutputTokensPerSecond >= 0) || !(t.RequestsPerSecond >= 0):
		return fmt.Errorf("tokens: a negative rate (output_tokens_per_s %g, requests_per_s %g)", t.OutputTokensPerSecond, t.RequestsPerSecond)
	case g.Sessions < 0 || g.Judged < 0 || g.Sessions > g.Judged:
		return fmt.Errorf("tokens.goodput: %d sessions of %d judged", g.Sessions, g.Judged)
	case !(g.Share >= 0 && g.Share <= 1) || !(g.PerSecond >= 0):
		return fmt.Errorf("tokens.goodput: share %g, per_s %g", g.Share, g.PerSecond)
	}
	return nil
}

// negativeIn names the first negative count of m, by format with its key.
func negativeIn[K cmp.Ordered](format string, m map[K]int64) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if n := m[k]; n < 0 {
			return fmt.Errorf(format+" is %d: a count cannot be negative", k, n)
		}
	}
	return nil
}

// validateCounters checks that the counters of a finished run agree with one another.
func (s *Summary) validateCounters() error {
	c := &s.Counters
	if c.SessionsOK+c.SessionsFailed > c.SessionsStarted {
		return fmt.Errorf("counters: sessions_ok %d + sessions_failed %d is more than sessions_started %d", c.SessionsOK, c.SessionsFailed, c.SessionsStarted)
	}
	errs := c.Errors()
	if c.SessionsFailed < errs {
		return fmt.Errorf("counters.sessions_failed is %d, fewer than the %d sessions with an error outcome (counters.outcomes)", c.SessionsFailed, errs)
	}
	if v := s.TotalViolations(); c.SessionsFailed-errs > v {
		return fmt.Errorf("counters.sessions_failed is %d: %d sessions with an error outcome, and %d violations (violations) cannot fail the other %d",
			c.SessionsFailed, errs, v, c.SessionsFailed-errs)
	}
	byRule := map[protocol.Rule]int64{}
	var failedByRules int64
	for rules, n := range c.FailedByRules {
		failedByRules += n
		for _, r := range strings.Split(rules, ",") {
			byRule[protocol.Rule(r)] += n
		}
	}
	if failedByRules > c.SessionsFailed {
		return fmt.Errorf("counters.sessions_failed_by_rules counts %d sessions, more than sessions_failed (%d)", failedByRules, c.SessionsFailed)
	}
	for _, rule := range slices.Sorted(maps.Keys(byRule)) {
		if n, v := byRule[rule], s.Violations[rule]; n > v {
			return fmt.Errorf("counters.sessions_failed_by_rules: %d sessions failed by %s, but violations.%s is %d", n, rule, rule, v)
		}
	}
	return nil
}

func (m MetricSummary) validate() error {
	if name, n := firstNegative(m); name != "" {
		return fmt.Errorf("%s is %d: a count or latency cannot be negative", name, n)
	}
	if !(m.Mean >= 0) {
		return fmt.Errorf("mean_us is %g: a latency cannot be negative", m.Mean)
	}
	return nil
}

// firstNegative is the JSON name and value of the first int64 field of v that is negative.
func firstNegative(v any) (string, int64) {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Int64 && f.Int() < 0 {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			return name, f.Int()
		}
	}
	return "", 0
}
