package verdict

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// Check is one evaluated threshold or regression.
type Check struct {
	Name   string // the expression as written
	Source string // "threshold", "mix", "regression", "default", "run", "allow" (gate --allow), "load"
	Value  string // what was measured, formatted
	Limit  string // the limit, formatted
	Pass   bool
	// Allowed marks a known finding's check: it passes, and says "allowed", never "pass".
	Allowed  bool
	Detail   string  // why it failed (or what it compared against)
	Measured float64 // the raw value: µs, a fraction or a count (NaN without data)
}

// measured is a selector's value in a run, and what to say of it.
type measured struct {
	value float64
	note  string
}

var errNoData = errors.New("no samples")

func scopeMatches(scope map[string]string, k measure.Key) bool {
	if v, ok := scope["scenario"]; ok && v != k.Scenario {
		return false
	}
	if v, ok := scope["dialect"]; ok && v != k.Dialect {
		return false
	}
	return true
}

// sessionCount is what an errors, failed or outcome check counts, less what is judged apart.
func (s Selector) sessionCount(c *measure.Counters, allowed []protocol.Rule, rel *relaxed) int64 {
	switch s.def.Name {
	case measure.Failed:
		return c.FailedExcept(allowed)
	case measure.ByOutcome:
		return c.Outcome(measure.Outcome(s.Stat))
	}
	return c.ErrorsExcept(rel.outcomes)
}

// one is a count's value.
func one(v int64, note string) measured { return measured{value: float64(v), note: note} }

func (s Selector) measure(r *measure.Run, percent bool, rel *relaxed) (measured, error) {
	sum := &r.Summary
	switch s.def.Name {
	case measure.DroppedStarts:
		return one(sum.Counters.DroppedStarts, ""), nil
	case measure.Errors, measure.Failed, measure.ByOutcome:
		n := s.sessionCount(&sum.Counters, sum.Config.Allow, rel)
		if !percent {
			return one(n, ""), nil
		}
		if sum.Counters.SessionsStarted == 0 {
			return measured{}, fmt.Errorf("%s: %w: no session started", s, errNoData)
		}
		return measured{value: float64(n) / float64(sum.Counters.SessionsStarted)}, nil
	case measure.Violations:
		return s.violations(r, rel), nil
	case measure.Leaks:
		return leaks(sum), nil
	case measure.TokensPerSecond, measure.GoodputSessions:
		return s.tokens(sum, percent)
	}
	if s.def.Kind == measure.KindDialectMeasure {
		if err := s.checkMeasure(sum); err != nil { // measures.go
			return measured{}, err
		}
	}
	return s.histogram(r)
}

// violations counts the violations of the rule it is scoped to, else of every rule neither
// allowed nor judged by a threshold of its own.
func (s Selector) violations(r *measure.Run, rel *relaxed) measured {
	sum := &r.Summary
	if rule, ok := s.Scope["rule"]; ok {
		return one(sum.Violations[protocol.Rule(rule)], "")
	}
	n := sum.ViolationsExcept(append(slices.Clone(sum.Config.Allow), rel.rules...))
	var notes []string // allowed rules are checks of their own, not named here
	if len(rel.rules) > 0 {
		notes = append(notes, fmt.Sprintf("not counting %v (judged by their own thresholds)", rel.rules))
	}
	if by := violationBreakdown(sum, rel.rules); by != "" && n > 0 {
		notes = append(notes, by)
		if first := firstViolations(r, rel.rules); first != "" {
			notes = append(notes, "first: "+first)
		}
	}
	return one(n, strings.Join(notes, "; "))
}

// leaks counts the gauges over their tolerance and the sources lost, naming each.
func leaks(sum *measure.Summary) measured {
	var over []string
	for _, l := range sum.Leaks {
		if !l.OK {
			over = append(over, fmt.Sprintf("%s %s grew by %g (from %g to %g, tolerance %g)", l.Source, l.Name, l.Delta, l.Before, l.After, l.Tolerance))
		}
	}
	for _, nc := range sum.LeaksNotChecked {
		if nc.Lost {
			over = append(over, fmt.Sprintf("%s: %s", nc.Source, nc.Reason))
		}
	}
	return one(int64(len(over)), strings.Join(over, "; "))
}

// tokens is the run's aggregate tokens/s, or its goodput (a share of the judged, or a count).
func (s Selector) tokens(sum *measure.Summary, percent bool) (measured, error) {
	if sum.Tokens == nil {
		return measured{}, fmt.Errorf("%s: %w: the run recorded no token figures", s, errNoData)
	}
	if s.def.Name == measure.TokensPerSecond {
		return measured{value: sum.Tokens.OutputTokensPerSecond}, nil
	}
	g := sum.Tokens.Goodput
	note := fmt.Sprintf("%d of %d judged sessions", g.Sessions, g.Judged)
	if len(g.SLOs) > 0 {
		note += " under " + strings.Join(g.SLOs, ", ")
	}
	switch {
	case !percent:
		return one(g.Sessions, note), nil
	case g.Judged == 0:
		return measured{}, fmt.Errorf("%s: %w: no session judged", s, errNoData)
	}
	return measured{value: g.Share, note: note}, nil
}

// histogram is the statistic of the histograms in scope, merged; else the worst summary's.
func (s Selector) histogram(r *measure.Run) (measured, error) {
	h, n := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == s.def.Name && scopeMatches(s.Scope, k) })
	if h.TotalCount() > 0 {
		stat := measure.SummarizeOne(measure.Key{}, h).Stat(s.Stat)
		note := ""
		if n > 1 {
			note = fmt.Sprintf("%d scenario×dialect histograms merged", n)
		}
		return measured{value: stat, note: note}, nil
	}
	worst, n := -1.0, 0
	for _, m := range r.Summary.Metrics {
		if s.matches(m) {
			worst = max(worst, m.Stat(s.Stat))
			n++
		}
	}
	if n == 0 {
		return measured{}, fmt.Errorf("%s: %w recorded", s, errNoData)
	}
	note := ""
	if n > 1 {
		note = fmt.Sprintf("worst of %d summaries (no histograms saved)", n)
	}
	return measured{value: worst, note: note}, nil
}

// matches tells whether m is a summary with values of the selector's metric in its scope.
func (s Selector) matches(m measure.MetricSummary) bool {
	return m.Metric == s.def.Name && scopeMatches(s.Scope, m.Key) && m.Count > 0
}

// format shows a value in the selector's unit.
func (s Selector) format(v float64, percent bool) string {
	switch k := s.def.Kind; {
	case k == measure.KindLatency, k == measure.KindDialectMeasure && s.unit == measure.MeasureKindLatency:
		return measure.Ms(v) + " ms"
	case k == measure.KindRate:
		return strconv.FormatFloat(v/measure.RateScale, 'f', 1, 64) + " tokens/s"
	case k == measure.KindThroughput:
		return strconv.FormatFloat(v, 'f', 1, 64) + " tokens/s"
	case percent:
		return measure.Pct(v)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

// compare is each operator a threshold can use.
var compare = map[string]func(v, limit float64) bool{
	"<": func(v, l float64) bool { return v < l }, "<=": func(v, l float64) bool { return v <= l },
	"==": func(v, l float64) bool { return v == l }, ">=": func(v, l float64) bool { return v >= l },
	">": func(v, l float64) bool { return v > l },
}

// evaluate checks t against r, leaving out of errors and violations what rel judges by name; no
// samples fail, never pass silently.
func (t Threshold) evaluate(r *measure.Run, source string, rel *relaxed) Check {
	c := Check{Name: t.Expr, Source: source, Limit: t.Op + " " + t.Selector.format(t.Limit, t.Percent)}
	m, err := t.Selector.measure(r, t.Percent, rel)
	if err != nil {
		c.Value, c.Detail, c.Measured = "n/a", err.Error(), math.NaN()
		return c
	}
	c.Measured = m.value
	c.Value = t.Selector.format(m.value, t.Percent)
	c.Pass = compare[t.Op](m.value, t.Limit)
	c.Detail = m.note
	if t.Selector.CountsSessions() && t.Percent {
		c.Detail = fmt.Sprintf("%d of %d sessions", t.Selector.sessionCount(&r.Summary.Counters, r.Summary.Config.Allow, rel), r.Summary.Counters.SessionsStarted)
	}
	if t.Selector.def.Name == measure.Errors && m.value > 0 {
		detail := outcomeBreakdown(r.Summary.Counters, rel.outcomes)
		if first := r.Summary.Judging.FirstErrors; len(first) > 0 {
			detail += "; first: " + strings.Join(first, "; ")
		}
		c.Detail = strings.TrimPrefix(c.Detail+"; "+detail, "; ")
	}
	if t.Selector.def.Name == measure.Failed {
		if n := r.Summary.Counters.SessionsFailed - r.Summary.Counters.FailedExcept(r.Summary.Config.Allow); n > 0 {
			c.Detail = strings.TrimPrefix(c.Detail+fmt.Sprintf("; not counting %d failed only by allowed rules", n), "; ")
		}
	}
	return c
}

// minTrustedAbove is how many samples must lie above a statistic before one key's value is
// trusted on its own (p99 needs 1,000 samples).
const minTrustedAbove = 10

// trustedCount is the sample count at which stat is trusted for one key; 0: never (max).
func trustedCount(stat string) int64 {
	q := map[string]float64{"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99, "p99.9": 0.999, "min": 0.5, "mean": 0.5}[stat]
	if q == 0 {
		return 0
	}
	return int64(math.Ceil(minTrustedAbove / (1 - q)))
}

// keyChange is one scenario × dialect key compared between baseline and current.
type keyChange struct {
	key             measure.Key
	base, cur       float64 // µs
	allowed         float64 // µs
	trusted         bool
	excess          float64 // cur / allowed
	baseN, currentN int64
}

func (k keyChange) label() string {
	change := "n/a"
	if k.base > 0 {
		change = fmt.Sprintf("%+.1f%%", (k.cur-k.base)/k.base*100)
	}
	return fmt.Sprintf("%s/%s %s (%s → %s ms)", k.key.Scenario, k.key.Dialect, change, measure.Ms(k.base), measure.Ms(k.cur))
}

// Evaluate compares current with baseline key by key (scenario × dialect), as a mix's merged
// percentiles hide all but its slowest scenario. It fails when the median key is over the
// allowance, or any key with enough samples to be trusted alone; no common key fails.
func (g Regression) Evaluate(current, baseline *measure.Run) Check {
	c := Check{Name: g.Expr, Source: "regression", Measured: math.NaN()}
	allowance := "+" + strconv.FormatFloat(g.MaxPercent, 'f', -1, 64) + "%"
	if g.Absolute {
		allowance = "+" + measure.Ms(g.MaxIncreaseMicros) + " ms"
	}
	c.Limit = "median key ≤ baseline " + allowance
	base := map[measure.Key]measure.MetricSummary{}
	for _, m := range baseline.Summary.Metrics {
		if g.Selector.matches(m) {
			base[m.Key] = m
		}
	}
	var changes []keyChange
	onlyCurrent := 0
	for _, m := range current.Summary.Metrics {
		if !g.Selector.matches(m) {
			continue
		}
		b, ok := base[m.Key]
		if !ok {
			onlyCurrent++
			continue
		}
		k := keyChange{key: m.Key, base: b.Stat(g.Selector.Stat), cur: m.Stat(g.Selector.Stat), baseN: b.Count, currentN: m.Count}
		k.allowed = k.base * (1 + g.MaxPercent/100)
		if g.Absolute {
			k.allowed = k.base + g.MaxIncreaseMicros
		}
		// How far over: relative for a percentage, in µs for an absolute allowance.
		k.excess = k.cur/math.Max(k.allowed, 1) - 1
		if g.Absolute {
			k.excess = k.cur - k.allowed
		}
		need := trustedCount(g.Selector.Stat)
		k.trusted = need > 0 && k.baseN >= need && k.currentN >= need
		changes = append(changes, k)
	}
	leftOut := ""
	if onlyBase := len(base) - len(changes); onlyCurrent > 0 || onlyBase > 0 {
		leftOut = fmt.Sprintf("not compared: %d keys of this run not in the baseline, %d of the baseline not in this run", onlyCurrent, onlyBase)
	}
	if len(changes) == 0 {
		c.Value, c.Detail = "n/a", fmt.Sprintf("no scenario×dialect key of %s has samples in both runs", g.Selector)
		if leftOut != "" {
			c.Detail += " (" + leftOut + ")"
		}
		return c
	}
	slices.SortFunc(changes, func(a, b keyChange) int { return cmp.Compare(b.excess, a.excess) })
	// The upper median: with two keys, one regressed key is half the traffic and fails.
	median := changes[(len(changes)-1)/2]
	c.Measured = median.cur
	if g.Absolute {
		c.Value = fmt.Sprintf("median %+.3f ms", (median.cur-median.base)/1000)
	} else if median.base > 0 {
		c.Value = fmt.Sprintf("median %+.1f%%", (median.cur-median.base)/median.base*100)
	} else {
		c.Value = "median n/a"
	}
	c.Pass = median.excess <= 0
	var failedTrusted []string
	for _, k := range changes {
		if k.trusted && k.excess > 0 {
			failedTrusted = append(failedTrusted, k.label())
			c.Pass = false
		}
	}
	c.Detail = fmt.Sprintf("%d keys; worst %s", len(changes), changes[0].label())
	if len(failedTrusted) > 0 {
		c.Detail += "; over the allowance with enough samples: " + strings.Join(failedTrusted, ", ")
	}
	if leftOut != "" {
		c.Detail += "; " + leftOut
	}
	return c
}

// violationBreakdown lists the counted rules' violations as RULE×COUNT, most first.
func violationBreakdown(s *measure.Summary, except []protocol.Rule) string {
	var parts []string
	for _, rule := range s.RulesByCount() {
		if n := s.Violations[rule]; n > 0 && !slices.Contains(s.Config.Allow, rule) && !slices.Contains(except, rule) {
			parts = append(parts, fmt.Sprintf("%s×%d", rule, n))
		}
	}
	return strings.Join(parts, ", ")
}

// firstViolations is the first sample's detail of each counted rule, so that a failed check
// says what broke even where the run kept no files.
func firstViolations(r *measure.Run, except []protocol.Rule) string {
	var parts []string
	seen := map[protocol.Rule]bool{}
	for _, v := range r.Samples {
		if seen[v.Rule] || slices.Contains(r.Summary.Config.Allow, v.Rule) || slices.Contains(except, v.Rule) {
			continue
		}
		seen[v.Rule] = true
		if len(parts) == maxFirstRules {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s): %s", v.Rule, v.Scenario, v.Dialect, measure.Clip(v.Detail, maxFirstDetail)))
	}
	return strings.Join(parts, "; ")
}

// maxFirstRules and maxFirstDetail bound what firstViolations quotes.
const (
	maxFirstRules  = 3
	maxFirstDetail = 200
)

// Verdict is the check's verdict as printed: pass, FAIL or allowed.
func (c Check) Verdict() string {
	switch {
	case c.Allowed:
		return "allowed"
	case c.Pass:
		return "pass"
	}
	return "FAIL"
}
