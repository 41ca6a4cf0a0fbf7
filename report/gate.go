package report

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// gateName is one name a threshold can check. This table is the single place gate metric
// names are defined and documented; MetricsHelp renders it for `streambench gate --help`.
type gateName struct {
	Name    string
	Alias   string         // another accepted spelling
	Metric  measure.Metric // latency metrics only
	Kind    valueKind
	Scopes  []string // accepted {key=value} scope keys
	Example string
	Doc     string
}

type valueKind int

const (
	kindLatency    valueKind = iota // a statistic of a histogram; limit is a duration
	kindErrors                      // unscripted errors; limit is a percentage of sessions or a count
	kindFailed                      // failed sessions (errors or violations); percentage or count
	kindViolations                  // protocol violations; limit is a count
	kindLeaks                       // leak-check gauges over tolerance; limit is a count
)

var gateNames = []gateName{
	latencyName("connect", measure.Connect, "connect.p99<50ms", "connection established"),
	latencyName("headers", measure.Headers, "headers.p99<200ms", "request sent → response headers"),
	latencyName("first_event", measure.FirstEvent, "first_event.p99<300ms", "request → first SSE event of any kind"),
	latencyName("ttfc", measure.FirstChunk, "ttfc.p99<300ms", "request → first answer chunk (thinking does not count)"),
	latencyName("first_thinking", measure.FirstThinking, "first_thinking.p99<300ms", "request → first thinking frame"),
	latencyName("gap", measure.ChunkGap, "gap.p99<=50ms", "between consecutive answer chunks").withAlias("chunk_gap"),
	latencyName("duration", measure.StreamDuration, "duration.p99<10s", "request → end of stream"),
	latencyName("cancel", measure.CancelLatency, "cancel.p99<100ms", "client abort → the provider saw the client go away"),
	latencyName("tool_cancel", measure.ToolCancelSettle, "tool_cancel.p99<500ms", "client abort → the runtime settled open tools as cancelled"),
	latencyName("stop", measure.StopLatency, "stop.p99<500ms", "compose stop request → stopped terminal"),
	latencyName("start_lag", measure.StartLag, "start_lag.p99<10ms", "open loop: actual start − intended start"),
	{Name: "errors", Kind: kindErrors, Example: "errors<0.1%", Doc: "unscripted errors (HTTP, transport, decode): % of sessions started, or a count without %"},
	{Name: "failed", Kind: kindFailed, Example: "failed<1%", Doc: "sessions that failed unscripted, by an error or a protocol violation (the user's view; what breaks first at capacity)"},
	{Name: "violations", Kind: kindViolations, Scopes: []string{"rule"}, Example: "violations{rule=R-converge}==0", Doc: "protocol violations (streams × rules broken)"},
	{Name: "leaks", Kind: kindLeaks, Example: "leaks==0", Doc: "leak-check gauges over their tolerance"},
}

func (g gateName) withAlias(alias string) gateName {
	g.Alias = alias
	return g
}

// latencyName is a gateNames row for a latency metric, scoped by scenario and dialect.
func latencyName(name string, m measure.Metric, example, doc string) gateName {
	return gateName{Name: name, Metric: m, Kind: kindLatency, Scopes: []string{"scenario", "dialect"}, Example: example, Doc: doc}
}

// latencyStats are the statistics a latency threshold can name.
var latencyStats = []string{"min", "p50", "p90", "p99", "p99.9", "p999", "max", "mean"}

// MetricsHelp documents every name a threshold can check, its scopes and an example; it is
// what `streambench gate --help` and `sweep --help` print.
func MetricsHelp() string {
	var b strings.Builder
	b.WriteString("Checks: NAME[{KEY=VALUE,...}][.STAT] OP LIMIT   (OP: < <= == >= >)\n")
	b.WriteString("  latency STAT: " + strings.Join(latencyStats, ", ") + "; LIMIT a duration (250us, 300ms, 1.5s)\n\n")
	fmt.Fprintf(&b, "  %-16s %-19s %-34s %s\n", "NAME", "SCOPES", "EXAMPLE", "WHAT")
	for _, n := range gateNames {
		name := n.Name
		if n.Alias != "" {
			name += "|" + n.Alias
		}
		fmt.Fprintf(&b, "  %-16s %-19s %-34s %s\n", name, strings.Join(n.Scopes, ","), n.Example, n.Doc)
	}
	b.WriteString("\nRegressions: NAME[{...}].STAT=N% (or =DURATION): current may exceed the baseline by at most that much,\n" +
		"  compared per scenario × dialect: fails when the median key is over, or any key with 10 samples\n" +
		"  above the statistic (p99: 1,000 samples) is over.\n")
	return b.String()
}

func lookupName(name string) (gateName, bool) {
	for _, n := range gateNames {
		if n.Name == name || (n.Alias != "" && n.Alias == name) {
			return n, true
		}
	}
	return gateName{}, false
}

func knownNames() string {
	var names []string
	for _, n := range gateNames {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// Selector names what a check measures: a gate name, an optional scope and a statistic.
type Selector struct {
	Name   string            // as in the table above, aliases resolved
	Scope  map[string]string // e.g. scenario=plain-answer
	Stat   string            // latency statistic ("p99"); empty for counts
	kind   valueKind
	metric measure.Metric
}

// String writes the selector back in threshold syntax, scope keys sorted.
func (s Selector) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if len(s.Scope) > 0 {
		b.WriteString("{")
		for i, k := range slices.Sorted(maps.Keys(s.Scope)) {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(k + "=" + s.Scope[k])
		}
		b.WriteString("}")
	}
	if s.Stat != "" {
		b.WriteString("." + s.Stat)
	}
	return b.String()
}

// ThresholdError is a threshold or regression that does not parse; Expr is the text as given.
type ThresholdError struct {
	Expr   string
	Reason string
}

func (e *ThresholdError) Error() string { return fmt.Sprintf("threshold %q: %s", e.Expr, e.Reason) }

// parseSelector parses NAME[{k=v,...}][.STAT] (the part before the operator).
func parseSelector(expr, text string) (Selector, error) {
	bad := func(format string, args ...any) (Selector, error) {
		return Selector{}, &ThresholdError{Expr: expr, Reason: fmt.Sprintf(format, args...)}
	}
	text = strings.TrimSpace(text)
	nameEnd := strings.IndexAny(text, "{.")
	if nameEnd < 0 {
		nameEnd = len(text)
	}
	name := text[:nameEnd]
	rest := text[nameEnd:]
	gn, ok := lookupName(name)
	if !ok {
		return bad("unknown name %q: want one of %s", name, knownNames())
	}
	sel := Selector{Name: gn.Name, kind: gn.Kind, metric: gn.Metric}
	if strings.HasPrefix(rest, "{") {
		end := strings.Index(rest, "}")
		if end < 0 {
			return bad("scope opened with '{' is not closed with '}'")
		}
		sel.Scope = map[string]string{}
		for _, kv := range strings.Split(rest[1:end], ",") {
			k, v, found := strings.Cut(strings.TrimSpace(kv), "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !found || k == "" || v == "" {
				return bad("scope entry %q: want key=value", kv)
			}
			if !slices.Contains(gn.Scopes, k) {
				if len(gn.Scopes) == 0 {
					return bad("%s takes no scope", gn.Name)
				}
				return bad("scope key %q: %s accepts %s", k, gn.Name, strings.Join(gn.Scopes, ", "))
			}
			if _, dup := sel.Scope[k]; dup {
				return bad("scope key %q given twice", k)
			}
			sel.Scope[k] = v
		}
		rest = rest[end+1:]
	}
	if strings.HasPrefix(rest, ".") {
		sel.Stat = rest[1:]
		rest = ""
	}
	if rest != "" {
		return bad("unexpected %q after %s", rest, name)
	}
	switch {
	case gn.Kind == kindLatency && sel.Stat == "":
		return bad("latency %s needs a statistic: .%s", gn.Name, strings.Join(latencyStats, ", ."))
	case gn.Kind == kindLatency && !slices.Contains(latencyStats, sel.Stat):
		return bad("unknown statistic %q: want one of %s", sel.Stat, strings.Join(latencyStats, ", "))
	case gn.Kind != kindLatency && sel.Stat != "":
		return bad("%s is a count and takes no statistic (got .%s)", gn.Name, sel.Stat)
	}
	if sel.Stat == "p999" {
		sel.Stat = "p99.9"
	}
	return sel, nil
}

// Threshold is one absolute check: a selector, a comparison and a limit.
type Threshold struct {
	Expr     string // as written
	Selector Selector
	Op       string
	// Limit is in the selector's unit: microseconds for latency, a fraction for an error rate
	// (Percent set), otherwise a count.
	Limit   float64
	Percent bool
}

var operators = []string{"<=", ">=", "==", "<", ">"}

// ParseThreshold parses a check such as "ttfc.p99<300ms", "errors<0.1%", "violations==0",
// "leaks==0" or "ttfc{scenario=plain-answer,dialect=sim-chat}.p99<300ms". See MetricsHelp.
func ParseThreshold(expr string) (Threshold, error) {
	bad := func(format string, args ...any) (Threshold, error) {
		return Threshold{}, &ThresholdError{Expr: expr, Reason: fmt.Sprintf(format, args...)}
	}
	opAt, op := -1, ""
	for i := 0; i < len(expr) && opAt < 0; i++ {
		for _, o := range operators {
			if strings.HasPrefix(expr[i:], o) {
				opAt, op = i, o
				break
			}
		}
	}
	if opAt < 0 {
		if strings.Contains(expr, "=") {
			return bad("no comparison: want one of < <= == >= > (a single '=' is for --max-regression)")
		}
		return bad("no comparison: want NAME.STAT<LIMIT, e.g. ttfc.p99<300ms")
	}
	sel, err := parseSelector(expr, expr[:opAt])
	if err != nil {
		return Threshold{}, err
	}
	t := Threshold{Expr: expr, Selector: sel, Op: op}
	limit := strings.TrimSpace(expr[opAt+len(op):])
	if limit == "" {
		return bad("missing limit after %s", op)
	}
	switch sel.kind {
	case kindLatency:
		d, err := time.ParseDuration(limit)
		if err != nil || d < 0 {
			return bad("limit %q: want a duration such as 300ms, 1.5s or 250us", limit)
		}
		t.Limit = float64(d) / float64(time.Microsecond)
	case kindErrors, kindFailed:
		if p, ok := strings.CutSuffix(limit, "%"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || v < 0 || v > 100 {
				return bad("limit %q: want a percentage between 0%% and 100%%, e.g. 0.1%%", limit)
			}
			t.Limit, t.Percent = v/100, true
			break
		}
		fallthrough
	default:
		v, err := strconv.ParseInt(limit, 10, 64)
		if err != nil || v < 0 {
			want := "a count such as 0"
			if sel.kind == kindErrors || sel.kind == kindFailed {
				want = "a percentage such as 0.1% or a count such as 0"
			}
			return bad("limit %q: want %s", limit, want)
		}
		t.Limit = float64(v)
	}
	return t, nil
}

// Regression limits how much worse than a baseline a latency statistic may get.
type Regression struct {
	Expr     string
	Selector Selector
	// MaxPercent is the allowed increase in percent of the baseline; MaxIncreaseMicros an
	// absolute allowance. Exactly one is set.
	MaxPercent        float64
	MaxIncreaseMicros float64
	Absolute          bool
}

// ParseRegression parses "ttfc.p99=10%" (at most 10% over the baseline) or "ttfc.p99=50ms"
// (at most 50 ms over it). Only latency statistics can regress.
func ParseRegression(expr string) (Regression, error) {
	bad := func(format string, args ...any) (Regression, error) {
		return Regression{}, &ThresholdError{Expr: expr, Reason: fmt.Sprintf(format, args...)}
	}
	// The allowance follows the first '=' after any {scope}, which has '=' of its own.
	from := strings.Index(expr, "}") + 1
	eq := strings.Index(expr[from:], "=")
	left, right, ok := expr, "", eq >= 0
	if ok {
		left, right = expr[:from+eq], expr[from+eq+1:]
	}
	if !ok || strings.ContainsAny(left, "<>") || strings.HasPrefix(right, "=") {
		return bad("want NAME.STAT=PERCENT%%, e.g. ttfc.p99=10%%")
	}
	sel, err := parseSelector(expr, left)
	if err != nil {
		return Regression{}, err
	}
	if sel.kind != kindLatency {
		return bad("only latency statistics can be compared to a baseline, not %s", sel.Name)
	}
	r := Regression{Expr: expr, Selector: sel}
	right = strings.TrimSpace(right)
	if p, isPct := strings.CutSuffix(right, "%"); isPct {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 {
			return bad("allowance %q: want a non-negative percentage such as 10%%", right)
		}
		r.MaxPercent = v
		return r, nil
	}
	d, err := time.ParseDuration(right)
	if err != nil || d < 0 {
		return bad("allowance %q: want a percentage such as 10%% or a duration such as 50ms", right)
	}
	r.MaxIncreaseMicros, r.Absolute = float64(d)/float64(time.Microsecond), true
	return r, nil
}

// Check is one evaluated threshold or regression.
type Check struct {
	Name   string // the expression as written
	Source string // where it came from: "threshold", "mix", "regression", "slo", "default"
	Value  string // what was measured, formatted
	Limit  string // the limit, formatted
	Pass   bool
	Detail string // why it failed (or what it compared against)
	// Measured is the raw value: microseconds, a fraction or a count (NaN without data).
	Measured float64
}

// measured is a selector's value in a run.
type measured struct {
	value   float64
	samples int64 // latency: how many samples; counts: 1
	note    string
}

var errNoData = errors.New("no samples")

// histogramFor merges every histogram the selector's scope matches.
func histogramFor(r *measure.Run, sel Selector) (*hdrhistogram.Histogram, int) {
	if r.Histograms == nil {
		return nil, 0
	}
	var merged *hdrhistogram.Histogram
	n := 0
	for _, k := range r.Histograms.Keys() {
		if k.Metric != sel.metric || !scopeMatches(sel.Scope, k) {
			continue
		}
		if merged == nil {
			merged = measure.NewHistogram()
		}
		merged.Merge(r.Histograms.Get(k))
		n++
	}
	return merged, n
}

func scopeMatches(scope map[string]string, k measure.Key) bool {
	if v, ok := scope["scenario"]; ok && v != k.Scenario {
		return false
	}
	if v, ok := scope["dialect"]; ok && v != k.Dialect {
		return false
	}
	return true
}

func statOf(m measure.MetricSummary, stat string) float64 {
	switch stat {
	case "min":
		return float64(m.Min)
	case "p50":
		return float64(m.P50)
	case "p90":
		return float64(m.P90)
	case "p99":
		return float64(m.P99)
	case "p99.9":
		return float64(m.P999)
	case "max":
		return float64(m.Max)
	default:
		return m.Mean
	}
}

// Measure returns the selector's value in r: microseconds for latency (all matching scenario ×
// dialect histograms merged), a fraction or count for errors, a count for violations and leaks.
// It wraps an error naming the selector when there are no samples.
func (s Selector) Measure(r *measure.Run, percent bool) (float64, error) {
	m, err := s.measure(r, percent)
	return m.value, err
}

// sessionCount is what an errors or failed check counts.
func (s Selector) sessionCount(c *measure.Counters) int64 {
	if s.kind == kindFailed {
		return c.SessionsFailed
	}
	return c.Errors()
}

func (s Selector) measure(r *measure.Run, percent bool) (measured, error) {
	sum := &r.Summary
	switch s.kind {
	case kindErrors, kindFailed:
		n := s.sessionCount(&sum.Counters)
		if percent {
			if sum.Counters.SessionsStarted == 0 {
				return measured{}, fmt.Errorf("%s: %w: no session started", s, errNoData)
			}
			return measured{value: float64(n) / float64(sum.Counters.SessionsStarted), samples: 1}, nil
		}
		return measured{value: float64(n), samples: 1}, nil
	case kindViolations:
		if rule, ok := s.Scope["rule"]; ok {
			return measured{value: float64(sum.Violations[protocol.Rule(rule)]), samples: 1}, nil
		}
		return measured{value: float64(sum.TotalViolations()), samples: 1}, nil
	case kindLeaks:
		return measured{value: float64(sum.FailedLeaks()), samples: 1}, nil
	}
	if h, n := histogramFor(r, s); h != nil && h.TotalCount() > 0 {
		stat := statOf(measure.SummarizeOne(measure.Key{}, h), s.Stat)
		note := ""
		if n > 1 {
			note = fmt.Sprintf("%d scenario×dialect histograms merged", n)
		}
		return measured{value: stat, samples: h.TotalCount(), note: note}, nil
	}
	// Without histograms (no hlog saved), fall back to the summary: the worst matching value.
	worst, count, n := -1.0, int64(0), 0
	for _, m := range sum.Metrics {
		if m.Metric == s.metric && scopeMatches(s.Scope, m.Key) && m.Count > 0 {
			worst = max(worst, statOf(m, s.Stat))
			count += m.Count
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
	return measured{value: worst, samples: count, note: note}, nil
}

// format shows a value in the selector's unit.
func (s Selector) format(v float64, percent bool) string {
	switch {
	case s.kind == kindLatency:
		return msf(v) + " ms"
	case percent:
		return pct(v)
	default:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
}

func compare(v float64, op string, limit float64) bool {
	switch op {
	case "<":
		return v < limit
	case "<=":
		return v <= limit
	case "==":
		return v == limit
	case ">=":
		return v >= limit
	default:
		return v > limit
	}
}

// Evaluate checks t against r. A latency threshold with no samples fails: a check that cannot
// see its metric must not pass silently (scope it to the scenarios that record it).
func (t Threshold) Evaluate(r *measure.Run, source string) Check {
	c := Check{Name: t.Expr, Source: source, Limit: t.Op + " " + t.Selector.format(t.Limit, t.Percent)}
	m, err := t.Selector.measure(r, t.Percent)
	if err != nil {
		c.Value, c.Detail, c.Measured = "n/a", err.Error(), nan()
		return c
	}
	c.Measured = m.value
	c.Value = t.Selector.format(m.value, t.Percent)
	c.Pass = compare(m.value, t.Op, t.Limit)
	c.Detail = m.note
	if (t.Selector.kind == kindErrors || t.Selector.kind == kindFailed) && t.Percent {
		c.Detail = fmt.Sprintf("%d of %d sessions", t.Selector.sessionCount(&r.Summary.Counters), r.Summary.Counters.SessionsStarted)
	}
	return c
}

// minTrustedAbove is how many samples must lie above a statistic before one scenario × dialect
// key's value is trusted on its own (p99 needs 1,000 samples, p50 20).
const minTrustedAbove = 10

// trustedCount is the sample count at which stat is trusted for a single key; 0 means never
// (max is always one sample).
func trustedCount(stat string) int64 {
	q := map[string]float64{"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999, "min": 0.5, "mean": 0.5}[stat]
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
	return fmt.Sprintf("%s/%s %s (%s → %s ms)", k.key.Scenario, k.key.Dialect, change, msf(k.base), msf(k.cur))
}

// Evaluate compares current with baseline key by key (scenario × dialect within the scope),
// because a mix's merged percentiles are dominated by its slowest scenario and hide a
// regression of the others. It fails when the median key is over the allowance (a systemic
// regression, robust to one noisy key), or when any key with enough samples to trust the
// statistic on its own (10 above it: 1,000 for p99) is over it. Keys missing from either run
// are ignored; no common key at all fails.
func (g Regression) Evaluate(current, baseline *measure.Run) Check {
	c := Check{Name: g.Expr, Source: "regression", Measured: nan()}
	allowance := "+" + strconv.FormatFloat(g.MaxPercent, 'f', -1, 64) + "%"
	if g.Absolute {
		allowance = "+" + msf(g.MaxIncreaseMicros) + " ms"
	}
	c.Limit = "median key ≤ baseline " + allowance
	base := map[measure.Key]measure.MetricSummary{}
	for _, m := range baseline.Summary.Metrics {
		if m.Metric == g.Selector.metric && scopeMatches(g.Selector.Scope, m.Key) && m.Count > 0 {
			base[m.Key] = m
		}
	}
	var changes []keyChange
	for _, m := range current.Summary.Metrics {
		b, ok := base[m.Key]
		if !ok || m.Metric != g.Selector.metric || m.Count == 0 {
			continue
		}
		k := keyChange{key: m.Key, base: statOf(b, g.Selector.Stat), cur: statOf(m, g.Selector.Stat), baseN: b.Count, currentN: m.Count}
		k.allowed = k.base * (1 + g.MaxPercent/100)
		if g.Absolute {
			k.allowed = k.base + g.MaxIncreaseMicros
		}
		// How far over the allowance: relative for a percentage, in µs for an absolute one, so
		// that sorting by it orders keys by their change as the check measures it.
		k.excess = k.cur/math.Max(k.allowed, 1) - 1
		if g.Absolute {
			k.excess = k.cur - k.allowed
		}
		need := trustedCount(g.Selector.Stat)
		k.trusted = need > 0 && k.baseN >= need && k.currentN >= need
		changes = append(changes, k)
	}
	if len(changes) == 0 {
		c.Value, c.Detail = "n/a", fmt.Sprintf("no scenario×dialect key of %s has samples in both runs", g.Selector)
		return c
	}
	slices.SortFunc(changes, func(a, b keyChange) int { return cmp.Compare(b.excess, a.excess) })
	median := changes[len(changes)/2]
	if len(changes)%2 == 0 {
		// The upper median: with two keys, one regressed key is half the traffic and fails.
		median = changes[len(changes)/2-1]
	}
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
	detail := fmt.Sprintf("%d keys; worst %s", len(changes), changes[0].label())
	if len(failedTrusted) > 0 {
		detail += "; over the allowance with enough samples: " + strings.Join(failedTrusted, ", ")
	}
	c.Detail = detail
	return c
}

func nan() float64 { return math.NaN() }

// DefaultThresholds are the correctness checks the gate applies when neither the command line
// nor the run's mix names any: they do not depend on latency, which is noisy on shared machines.
func DefaultThresholds() []string { return []string{"violations==0", "leaks==0", "errors<0.1%"} }

// GateConfig says what to check.
type GateConfig struct {
	// Thresholds from the command line. The run's own Config.Thresholds (the mix file's) are
	// always added; when both are empty, DefaultThresholds apply.
	Thresholds []Threshold
	// Regressions compare against Baseline, which must be set when there are any.
	Regressions []Regression
	Baseline    *measure.Run
}

// GateResult is every check, in order, and whether all passed.
type GateResult struct {
	RunID  string
	Checks []Check
	Pass   bool
}

// Failed returns the names of the failing checks.
func (g *GateResult) Failed() []string {
	var out []string
	for _, c := range g.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// Gate evaluates cfg against run. It returns an error (bad input, not a failed check) when the
// run's stored thresholds do not parse or regressions are asked without a baseline.
func Gate(run *measure.Run, cfg GateConfig) (*GateResult, error) {
	res := &GateResult{RunID: run.Summary.RunID, Pass: true}
	add := func(c Check) {
		res.Checks = append(res.Checks, c)
		res.Pass = res.Pass && c.Pass
	}
	for _, t := range cfg.Thresholds {
		add(t.Evaluate(run, "threshold"))
	}
	for i, expr := range run.Summary.Config.Thresholds {
		t, err := ParseThreshold(expr)
		if err != nil {
			return nil, fmt.Errorf("%s config.thresholds[%d] (from the mix file): %w", measure.SummaryFile, i, err)
		}
		add(t.Evaluate(run, "mix"))
	}
	if len(cfg.Thresholds) == 0 && len(run.Summary.Config.Thresholds) == 0 {
		for _, expr := range DefaultThresholds() {
			t, err := ParseThreshold(expr)
			if err != nil {
				return nil, err
			}
			add(t.Evaluate(run, "default"))
		}
	}
	if len(cfg.Regressions) > 0 && cfg.Baseline == nil {
		return nil, errors.New("regression checks need a baseline run")
	}
	for _, g := range cfg.Regressions {
		add(g.Evaluate(run, cfg.Baseline))
	}
	return res, nil
}

// WriteTable prints every check with its value, limit and verdict, then the overall verdict.
func (g *GateResult) WriteTable(w io.Writer) error {
	t := table{Header: []string{"CHECK", "SOURCE", "VALUE", "LIMIT", "VERDICT", "DETAIL"}}
	for _, c := range g.Checks {
		t.Rows = append(t.Rows, []string{c.Name, c.Source, c.Value, c.Limit, boolText(c.Pass, "pass", "FAIL"), c.Detail})
	}
	if err := t.writeText(w); err != nil {
		return err
	}
	failed := g.Failed()
	if len(failed) == 0 {
		_, err := fmt.Fprintf(w, "\ngate: PASS (%d checks)\n", len(g.Checks))
		return err
	}
	_, err := fmt.Fprintf(w, "\ngate: FAIL (%d of %d checks failed: %s)\n", len(failed), len(g.Checks), strings.Join(failed, ", "))
	return err
}

// WriteMarkdown writes the checks as a GitHub table (for CI job summaries).
func (g *GateResult) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "**Gate: %s**\n\n", boolText(g.Pass, "PASS", "FAIL"))
	t := table{Header: []string{"check", "source", "value", "limit", "verdict", "detail"}}
	for _, c := range g.Checks {
		t.Rows = append(t.Rows, []string{c.Name, c.Source, c.Value, c.Limit, boolText(c.Pass, "pass", "FAIL"), c.Detail})
	}
	t.writeMarkdown(w, "")
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the checks as JUnit XML, one testcase per check, for CI test reports.
func (g *GateResult) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "streambench gate " + g.RunID, Tests: len(g.Checks)}
	for _, c := range g.Checks {
		tc := junitCase{Name: c.Name, Classname: "streambench.gate." + c.Source,
			SystemOut: fmt.Sprintf("value %s, limit %s %s", c.Value, c.Limit, c.Detail)}
		if !c.Pass {
			suite.Failures++
			msg := fmt.Sprintf("%s: value %s, limit %s", c.Name, c.Value, c.Limit)
			tc.Failure = &junitFailure{Message: msg, Type: "threshold", Text: strings.TrimSpace(msg + "\n" + c.Detail)}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{suite}}); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
