package verdict

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
)

// latencyStats are the statistics a threshold on a histogram can name.
var latencyStats = []string{"min", "p50", "p90", "p95", "p99", "p99.9", "p999", "max", "mean"}

// measuredSuffix names a latency as measured (ttfc.measured), never judged on its overhead.
const measuredSuffix = ".measured"

// judging says how the judge treats a name beyond what it measures, for gate --help.
var judging = map[measure.Metric]string{
	measure.Errors:     "less those a threshold names as outcome.NAME",
	measure.ByOutcome:  "outcome.NAME checks one; naming an error outcome takes it out of errors",
	measure.Failed:     "not those failed only by allowed rules; naming it relaxes the errors and violations defaults",
	measure.Violations: "without those of allowed rules (--allow, the mix's allow:) unless scoped to one; a {rule=R} threshold takes R out of the default",
}

// MetricsHelp documents every name a threshold can check, for gate --help and sweep --help.
func MetricsHelp() string {
	var b strings.Builder
	b.WriteString("Checks: NAME[{KEY=VALUE,...}][.STAT] OP LIMIT   (OP: < <= == >= >)\n" +
		"  STAT of a latency or a rate: " + strings.Join(latencyStats, ", ") + "\n" +
		"  LIMIT by KIND: latency a duration (250us, 300ms, 1.5s); rate and throughput tokens/s, a number (20);\n" +
		"  sessions a percentage of the sessions started (goodput: of those judged), e.g. 0.1%, or a count without %;\n" +
		"  count a count\n" +
		"  token metrics (ttft, ttfo, itl, tpot, stream_tokens_per_s, tokens_per_s, goodput) are AIPerf's and\n" +
		"  GuideLLM's: tokens counted from the ground truth (the script), or from usage without it\n\n")
	row := func(name, scopes, kind, example, doc string) {
		fmt.Fprintf(&b, "  %-20s %-17s %-10s %-34s %s\n", name, scopes, kind, example, doc)
	}
	row("NAME", "SCOPES", "KIND", "EXAMPLE", "WHAT")
	for _, d := range measure.Registry() {
		if !d.Judged() {
			continue
		}
		name, doc := string(d.Name), d.Doc
		if d.Alias != "" {
			name += "|" + string(d.Alias)
		}
		if d.Overhead != "" {
			doc += fmt.Sprintf("; judged on %s when the run recorded it (its scripts say when each frame was due); %s%s judges it as measured", d.Overhead, d.Name, measuredSuffix)
		}
		if note := judging[d.Name]; note != "" {
			doc += "; " + note
		}
		if def := string(d.Name) + "==0"; slices.Contains(DefaultChecks(), def) {
			doc += "; default " + def
		}
		scopes, kind := strings.Join(d.Scopes, ","), d.Kind.String()
		row(name, scopes, kind, d.Example, doc)
		if d.Overhead != "" {
			measured := string(d.Name) + measuredSuffix
			row(measured, scopes, kind, strings.Replace(d.Example, string(d.Name), measured, 1),
				fmt.Sprintf("%s as measured, the script's delays included: a threshold on %s is judged on %s when the run recorded it", d.Name, d.Name, d.Overhead))
		}
	}
	b.WriteString("\n  dialect measures (the run's summary.json \"measures\", e.g. compose's child_ttfd and children_per_run):\n" +
		"  NAME[{scenario=,dialect=}].STAT (or NAME_STAT) with a duration LIMIT for a latency measure, a number for a\n" +
		"  count, e.g. child_ttfd.p99<500ms, children_per_run.max<=3; a measure the run did not record fails\n")
	b.WriteString("\nRegressions: NAME[{...}].STAT=N% (or =DURATION): current may exceed the baseline by at most that much,\n" +
		"  compared per scenario × dialect: fails when the median key is over, or any key with 10 samples\n" +
		"  above the statistic (p99: 1,000 samples) is over.\n")
	return b.String()
}

// gateDef is the metric a check's name stands for, and the name the check keeps: an alias
// resolved, NAME.measured kept whole.
func gateDef(name string) (measure.Def, string, bool) {
	base, measured := strings.CutSuffix(name, measuredSuffix)
	d, ok := measure.Lookup(base)
	if !ok || !d.Judged() || (measured && d.Overhead == "") {
		return measure.Def{}, "", false
	}
	if measured {
		return d, base + measuredSuffix, true
	}
	return d, string(d.Name), true
}

// knownNames lists every name a threshold can check, for errors.
func knownNames() string { return measure.JoinNames(measure.Metrics(measure.Def.Judged)) }

// Selector names what a check measures: a metric, an optional scope and a statistic.
type Selector struct {
	Name  string            // the metric's name (aliases resolved), or NAME.measured
	Scope map[string]string // e.g. scenario=plain-answer
	Stat  string            // latency statistic ("p99"); empty for counts
	def   measure.Def
	unit  string // a dialect measure's kind as its limit was written; the run must agree
}

// String writes the selector back in threshold syntax, scope keys sorted.
func (s Selector) String() string {
	out := s.Name
	if len(s.Scope) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(s.Scope)) {
			kv = append(kv, k+"="+s.Scope[k])
		}
		out += "{" + strings.Join(kv, ",") + "}"
	}
	if s.Stat != "" {
		out += "." + s.Stat
	}
	return out
}

// ThresholdError is a threshold, regression or goodput SLO that does not parse.
type ThresholdError struct {
	Expr   string
	Reason string
	SLO    bool // a goodput SLO's
}

func (e *ThresholdError) Error() string {
	return fmt.Sprintf("%s %q: %s", map[bool]string{true: "goodput SLO", false: "threshold"}[e.SLO], e.Expr, e.Reason)
}

// parser reads one expression of the language.
type parser struct {
	expr string
	slo  bool // a goodput SLO: a per-session metric, no scope, no statistic
}

func (p parser) fail(format string, args ...any) error {
	return &ThresholdError{Expr: p.expr, Reason: fmt.Sprintf(format, args...), SLO: p.slo}
}

// splitName cuts text after its metric's name, which may be dotted (ttft.overhead).
func splitName(text string) (name, rest string) {
	end := strings.IndexAny(text, "{.")
	if end < 0 {
		return text, ""
	}
	name, rest = text[:end], text[end:]
	if seg, ok := strings.CutPrefix(rest, "."); ok {
		end := strings.IndexAny(seg, "{.")
		if end < 0 {
			end = len(seg)
		}
		if _, _, known := gateDef(name + "." + seg[:end]); known {
			return name + "." + seg[:end], seg[end:]
		}
	}
	return name, rest
}

// selector parses NAME[{k=v,...}][.STAT].
func (p parser) selector(text string) (Selector, error) {
	name, rest := splitName(strings.TrimSpace(text))
	if name == "hung" {
		return Selector{}, p.fail("hung is no longer a measure: a stream with no terminal ends as outcome.truncated (the body ended), outcome.stalled (no byte for --idle-timeout), outcome.over_time (still delivering at --stream-timeout) or outcome.cut (still delivering when the run ended), each counted by errors")
	}
	d, canon, ok := gateDef(name)
	switch {
	case p.slo && (!ok || !d.PerSession || canon != string(d.Name)):
		return Selector{}, p.fail("unknown per-session metric %q: want one of %s", name, measure.SessionSLOMetricNames())
	case !ok:
		if d, name, rest, ok = measureName(name, rest); !ok { // measures.go
			return Selector{}, p.fail("unknown name %q: want one of %s, or a dialect measure (snake_case of two words or more, e.g. child_ttfd)", name, knownNames())
		}
		canon = name
	}
	sel := Selector{Name: canon, def: d}
	var err error
	if sel.Scope, rest, err = p.scope(d, rest); err != nil {
		return Selector{}, err
	}
	if strings.HasPrefix(rest, ".") {
		sel.Stat, rest = rest[1:], ""
	}
	if rest != "" {
		return Selector{}, p.fail("unexpected %q after %s", rest, name)
	}
	return sel, p.checkStat(&sel)
}

// scope parses a leading {k=v,...} of rest, with keys d accepts.
func (p parser) scope(d measure.Def, rest string) (map[string]string, string, error) {
	if !strings.HasPrefix(rest, "{") {
		return nil, rest, nil
	}
	end := strings.Index(rest, "}")
	switch {
	case p.slo:
		return nil, "", p.fail("a goodput SLO judges each session's own value, everywhere: it takes no scope")
	case end < 0:
		return nil, "", p.fail("scope opened with '{' is not closed with '}'")
	}
	scope := map[string]string{}
	for _, kv := range strings.Split(rest[1:end], ",") {
		k, v, found := strings.Cut(strings.TrimSpace(kv), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch _, dup := scope[k]; {
		case !found || k == "" || v == "":
			return nil, "", p.fail("scope entry %q: want key=value", kv)
		case len(d.Scopes) == 0:
			return nil, "", p.fail("%s takes no scope", d.Name)
		case !slices.Contains(d.Scopes, k):
			return nil, "", p.fail("scope key %q: %s accepts %s", k, d.Name, strings.Join(d.Scopes, ", "))
		case dup:
			return nil, "", p.fail("scope key %q given twice", k)
		}
		scope[k] = v
	}
	return scope, rest[end+1:], nil
}

// checkStat checks the selector's statistic against its kind, and spells p999 as p99.9.
func (p parser) checkStat(sel *Selector) error {
	hist := sel.def.Kind.Histogram()
	switch {
	case p.slo && sel.Stat != "":
		return p.fail("a goodput SLO judges each session's own %s: it takes no statistic (got .%s)", sel.Name, sel.Stat)
	case p.slo:
	case sel.def.Name == measure.ByOutcome:
		if !measure.Outcome(sel.Stat).Valid() {
			return p.fail("outcome needs one of .%s", strings.ReplaceAll(measure.OutcomeNames(), ", ", ", ."))
		}
	case hist && sel.Stat == "":
		return p.fail("%s needs a statistic: .%s", sel.Name, strings.Join(latencyStats, ", ."))
	case hist && !slices.Contains(latencyStats, sel.Stat):
		return p.fail("unknown statistic %q: want one of %s", sel.Stat, strings.Join(latencyStats, ", "))
	case !hist && sel.Stat != "":
		return p.fail("%s is a count and takes no statistic (got .%s)", sel.Name, sel.Stat)
	}
	if sel.Stat == "p999" {
		sel.Stat = "p99.9"
	}
	return nil
}

// Threshold is one absolute check: a selector, a comparison and a limit.
type Threshold struct {
	Expr     string // as written
	Selector Selector
	Op       string
	Limit    float64 // in the selector's unit; a fraction when Percent
	Percent  bool
}

var operators = []string{"<=", ">=", "==", "<", ">"}

// ParseThreshold parses a check such as "ttfc{scenario=plain-answer}.p99<300ms" (MetricsHelp).
func ParseThreshold(expr string) (Threshold, error) { return parser{expr: expr}.threshold() }

func (p parser) threshold() (Threshold, error) {
	at, op := -1, ""
	for i := 0; i < len(p.expr) && at < 0; i++ {
		for _, o := range operators {
			if strings.HasPrefix(p.expr[i:], o) {
				at, op = i, o
				break
			}
		}
	}
	switch {
	case at < 0 && p.slo:
		return Threshold{}, p.fail("want METRIC OP LIMIT, e.g. ttft<500ms (OP: < <= == >= >)")
	case at < 0 && strings.Contains(p.expr, "="):
		return Threshold{}, p.fail("no comparison: want one of < <= == >= > (a single '=' is for --max-regression)")
	case at < 0:
		return Threshold{}, p.fail("no comparison: want NAME.STAT<LIMIT, e.g. ttfc.p99<300ms")
	}
	sel, err := p.selector(p.expr[:at])
	if err != nil {
		return Threshold{}, err
	}
	t := Threshold{Expr: p.expr, Selector: sel, Op: op}
	if err := p.limit(&t, strings.TrimSpace(p.expr[at+len(op):])); err != nil {
		return Threshold{}, err
	}
	return t, nil
}

// limit reads LIMIT, in the unit of the selector's kind, into t.
func (p parser) limit(t *Threshold, limit string) error {
	if limit == "" {
		return p.fail("missing limit after %s", t.Op)
	}
	var err error
	switch kind := t.Selector.def.Kind; kind {
	case measure.KindDialectMeasure:
		if t.Limit, t.Selector.unit, err = parseMeasureLimit(limit); err != nil {
			return p.fail("limit %q: %v", limit, err)
		}
	case measure.KindLatency:
		var ok bool
		if t.Limit, ok = micros(limit); !ok {
			return p.fail("limit %q: want a duration such as 300ms, 1.5s or 250us", limit)
		}
	case measure.KindRate, measure.KindThroughput:
		v, ok := number(limit)
		if !ok {
			return p.fail("limit %q: want tokens per second, a number such as 20", limit)
		}
		t.Limit = v
		if kind == measure.KindRate {
			t.Limit = v * measure.RateScale
		}
	case measure.KindSessions:
		if pc, ok := strings.CutSuffix(limit, "%"); ok {
			v, ok := number(pc)
			if !ok || v > 100 {
				return p.fail("limit %q: want a percentage between 0%% and 100%%, e.g. 0.1%%", limit)
			}
			t.Limit, t.Percent = v/100, true
			return nil
		}
		return p.count(t, limit, "a percentage such as 0.1% or a count such as 0")
	default:
		return p.count(t, limit, "a count such as 0")
	}
	return nil
}

// count reads a count LIMIT into t; want says what the limit could have been.
func (p parser) count(t *Threshold, limit, want string) error {
	v, err := strconv.ParseInt(limit, 10, 64)
	if err != nil || v < 0 {
		return p.fail("limit %q: want %s", limit, want)
	}
	t.Limit = float64(v)
	return nil
}

// micros reads a non-negative duration in microseconds, the unit of a latency's limit.
func micros(s string) (float64, bool) {
	d, err := time.ParseDuration(s)
	return float64(d) / float64(time.Microsecond), err == nil && d >= 0
}

// number reads a non-negative, finite number: strconv.ParseFloat reads "NaN" and "Inf", against
// which a check would judge nothing.
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
}

// SessionSLO is a goodput objective on each session's own value, such as "ttft<500ms".
type SessionSLO struct{ Threshold }

// ParseSessionSLO parses METRIC OP LIMIT; errors name the SLO and what was expected.
func ParseSessionSLO(expr string) (SessionSLO, error) {
	t, err := parser{expr: expr, slo: true}.threshold()
	return SessionSLO{t}, err
}

// Metric is the metric whose per-session value the SLO judges.
func (s SessionSLO) Metric() measure.Metric { return s.Selector.def.Name }

// Met tells whether a session's value (in the histogram's unit; ok: it had one) meets the SLO.
func (s SessionSLO) Met(value float64, ok bool) bool { return ok && compare[s.Op](value, s.Limit) }

// Regression limits how much worse than a baseline a latency statistic may get.
type Regression struct {
	Expr              string
	Selector          Selector
	MaxPercent        float64 // the allowed increase, of the baseline
	MaxIncreaseMicros float64 // or an absolute one, when Absolute
	Absolute          bool
}

// ParseRegression parses "ttfc.p99=10%" or "ttfc.p99=50ms": at most that much over the baseline.
func ParseRegression(expr string) (Regression, error) {
	p := parser{expr: expr}
	// The allowance follows the first '=' after any {scope}, which has '=' of its own.
	from := strings.Index(expr, "}") + 1
	eq := strings.Index(expr[from:], "=")
	left, right, ok := expr, "", eq >= 0
	if ok {
		left, right = expr[:from+eq], expr[from+eq+1:]
	}
	if !ok || strings.ContainsAny(left, "<>") || strings.HasPrefix(right, "=") {
		return Regression{}, p.fail("want NAME.STAT=PERCENT%%, e.g. ttfc.p99=10%%")
	}
	sel, err := p.selector(left)
	if err != nil {
		return Regression{}, err
	}
	if !sel.IsLatency() {
		return Regression{}, p.fail("only latency statistics can be compared to a baseline, not %s", sel.Name)
	}
	r := Regression{Expr: expr, Selector: sel}
	right = strings.TrimSpace(right)
	if pc, isPct := strings.CutSuffix(right, "%"); isPct {
		if r.MaxPercent, ok = number(pc); !ok {
			return Regression{}, p.fail("allowance %q: want a non-negative percentage such as 10%%", right)
		}
		return r, nil
	}
	if r.MaxIncreaseMicros, ok = micros(right); !ok {
		return Regression{}, p.fail("allowance %q: want a percentage such as 10%% or a duration such as 50ms", right)
	}
	r.Absolute = true
	return r, nil
}

// Value is the value of a selector such as "ttfc.p99" in run, in its unit.
func Value(run *measure.Run, selector string) (float64, error) {
	sel, err := parser{expr: selector}.selector(selector)
	if err != nil {
		return 0, err
	}
	m, err := sel.measure(run, false, &relaxed{})
	return m.value, err
}

// IsLatency tells whether the selector is a latency statistic (its limit in microseconds).
func (s Selector) IsLatency() bool { return s.def.Kind == measure.KindLatency }

// CountsSessions tells whether the selector counts sessions (a limit may be a share of them).
func (s Selector) CountsSessions() bool {
	return s.def.Kind == measure.KindSessions && s.def.Name != measure.GoodputSessions
}
