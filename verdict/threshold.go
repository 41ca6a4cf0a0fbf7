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
	kindOutcome                     // sessions that ended with one outcome (the "statistic"); percentage or count
	kindDropped                     // open loop: scheduled starts never made; a count
	kindViolations                  // protocol violations; limit is a count
	kindLeaks                       // leak-check gauges over tolerance; limit is a count
	kindRate                        // a statistic of a rate histogram (×measure.RateScale); limit is tokens/s
	kindTokenRate                   // the run's aggregate output tokens/s; limit is tokens/s
	kindGoodput                     // sessions that succeeded and met every goodput SLO; percentage of the judged or a count
	kindMeasure                     // a statistic of a dialect measure (measures.go); limit a duration or a count
)

var gateNames = []gateName{
	latencyName("connect", measure.Connect, "connect.p99<50ms", "connection established"),
	latencyName("headers", measure.Headers, "headers.p99<200ms", "request sent → response headers"),
	latencyName("first_event", measure.FirstEvent, "first_event.p99<300ms", "request → first SSE event of any kind"),
	latencyName("ttfc", measure.FirstChunk, "ttfc.p99<300ms", "request → first answer chunk (thinking does not count); ttfo is the first answer token. Judged on ttfc.overhead when the run recorded it (the scripts say when each chunk was due); ttfc.measured judges it as measured"),
	latencyName("ttfc.measured", measure.FirstChunk, "ttfc.measured.p99<800ms", "ttfc as measured, the script's delays included: a threshold on ttfc is judged on ttfc.overhead when the run recorded it"),
	latencyName("ttfc.overhead", measure.FirstChunkOverhead, "ttfc.overhead.p99<50ms", "the target's own time to first chunk: ttfc less the scripted ttfc (the mock's scheduled delay), for sessions whose script says when it was due"),
	latencyName("first_thinking", measure.FirstThinking, "first_thinking.p99<300ms", "request → first thinking frame"),
	latencyName("gap", measure.ChunkGap, "gap.p99<=50ms", "between consecutive answer chunks").withAlias("chunk_gap"),
	latencyName("duration", measure.StreamDuration, "duration.p99<10s", "request → end of stream"),
	latencyName("cancel", measure.CancelLatency, "cancel.p99<100ms", "client abort → the provider saw the client go away"),
	latencyName("tool_cancel", measure.ToolCancelSettle, "tool_cancel.p99<500ms", "compose stop during a tool → the tool settled cancelled on the stream"),
	latencyName("stop", measure.StopLatency, "stop.p99<500ms", "compose stop request → stopped terminal"),
	latencyName("start_lag", measure.StartLag, "start_lag.p99<10ms", "open loop: actual start − intended start"),
	latencyName("ttft", measure.TimeToFirstToken, "ttft.p99<500ms", "time to first token: request → first thinking or answer token; judged on ttft.overhead when recorded, as ttfc"),
	latencyName("ttft.measured", measure.TimeToFirstToken, "ttft.measured.p99<800ms", "ttft as measured, the script's delays included: a threshold on ttft is judged on ttft.overhead when the run recorded it"),
	latencyName("ttft.overhead", measure.FirstTokenOverhead, "ttft.overhead.p99<50ms", "the target's own time to first token: ttft less the scripted ttft"),
	latencyName("ttfo", measure.TimeToFirstOutput, "ttfo.p99<800ms", "time to first output token: request → first answer token (reasoning excluded)"),
	latencyName("itl", measure.InterTokenLatency, "itl.p99<50ms", "inter-token latency, per token: a frame of k tokens after a gap g counts k gaps of g/k"),
	latencyName("tpot", measure.TimePerOutputToken, "tpot.p50<20ms", "time per output token, per session: (last token − first token) / (tokens − 1)"),
	{Name: "stream_tokens_per_s", Metric: measure.StreamTokensPerSecond, Kind: kindRate, Scopes: []string{"scenario", "dialect"}, Example: "stream_tokens_per_s.p50>=20", Doc: "output tokens/s of each stream (tokens / stream duration); LIMIT in tokens/s"},
	{Name: "tokens_per_s", Kind: kindTokenRate, Example: "tokens_per_s>=1000", Doc: "aggregate output tokens/s: every session's tokens over the measured wall time"},
	{Name: "goodput", Kind: kindGoodput, Example: "goodput>=99%", Doc: "sessions that succeeded and met every load --goodput-slo: % of the judged sessions (ended ok or failed), or a count without %"},
	{Name: "errors", Kind: kindErrors, Example: "errors<0.1%", Doc: "sessions with an error outcome (every outcome but completed, scripted_error, aborted; less those a threshold names as outcome.NAME): % of sessions started, or a count without %; default errors==0"},
	{Name: "outcome", Kind: kindOutcome, Example: "outcome.in_band_error<1%", Doc: "sessions that ended with one outcome (.NAME: " + outcomeNames() + "); naming an error outcome takes it out of errors"},
	{Name: "failed", Kind: kindFailed, Example: "failed<1%", Doc: "sessions failed by an error outcome or a protocol violation (the user's view; what breaks first at capacity), not those failed only by allowed rules; naming it relaxes the errors and violations defaults"},
	{Name: "violations", Kind: kindViolations, Scopes: []string{"rule"}, Example: "violations{rule=R-converge}<5", Doc: "protocol violations (streams × rules broken), without those of allowed rules (--allow, the mix's allow:) unless scoped to one; default violations==0; a {rule=R} threshold takes R out of the default"},
	{Name: "leaks", Kind: kindLeaks, Example: "leaks==0", Doc: "leak-check gauges over their tolerance; default leaks==0"},
	{Name: "dropped_starts", Kind: kindDropped, Example: "dropped_starts<10", Doc: "open loop: scheduled sessions never started at --max-inflight; default dropped_starts==0"},
}

// hasStats tells whether the kind is a histogram, whose checks name a statistic.
func (k valueKind) hasStats() bool { return k == kindLatency || k == kindRate || k == kindMeasure }

// perSession tells whether the kind counts sessions, so a limit may be a percentage of them.
func (k valueKind) perSession() bool { return k == kindErrors || k == kindFailed || k == kindOutcome }

// outcomeNames lists every outcome, for --help and errors.
func outcomeNames() string {
	var names []string
	for _, o := range measure.Outcomes() {
		names = append(names, string(o))
	}
	return strings.Join(names, ", ")
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
var latencyStats = []string{"min", "p50", "p90", "p95", "p99", "p99.9", "p999", "max", "mean"}

// MetricsHelp documents every name a threshold can check, its scopes and an example; it is
// what `streambench gate --help` and `sweep --help` print.
func MetricsHelp() string {
	var b strings.Builder
	b.WriteString("Checks: NAME[{KEY=VALUE,...}][.STAT] OP LIMIT   (OP: < <= == >= >)\n")
	b.WriteString("  latency STAT: " + strings.Join(latencyStats, ", ") + "; LIMIT a duration (250us, 300ms, 1.5s)\n")
	b.WriteString("  token metrics (ttft, ttfo, itl, tpot, stream_tokens_per_s, tokens_per_s, goodput) are AIPerf's and\n" +
		"  GuideLLM's: tokens counted from the ground truth (the script), or from usage without it\n\n")
	fmt.Fprintf(&b, "  %-20s %-17s %-34s %s\n", "NAME", "SCOPES", "EXAMPLE", "WHAT")
	for _, n := range gateNames {
		name := n.Name
		if n.Alias != "" {
			name += "|" + n.Alias
		}
		fmt.Fprintf(&b, "  %-20s %-17s %-34s %s\n", name, strings.Join(n.Scopes, ","), n.Example, n.Doc)
	}
	b.WriteString("\n  dialect measures (the run's summary.json \"measures\", e.g. compose's child_ttfd and children_per_run):\n" +
		"  NAME[{scenario=,dialect=}].STAT (or NAME_STAT) with a duration LIMIT for a latency measure, a number for a\n" +
		"  count, e.g. child_ttfd.p99<500ms, children_per_run.max<=3; a measure the run did not record fails\n")
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
	// unit is a dialect measure's kind as its limit was written (measure.MeasureKindLatency
	// for a duration, measure.MeasureKindCount for a number); the run must agree.
	unit string
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
	if seg, ok := strings.CutPrefix(rest, "."); ok {
		// A dotted name (ttft.overhead) is one name when the table has it.
		end := strings.IndexAny(seg, "{.")
		if end < 0 {
			end = len(seg)
		}
		if _, known := lookupName(name + "." + seg[:end]); known {
			name, rest = name+"."+seg[:end], seg[end:]
		}
	}
	if name == "hung" {
		return bad("hung is no longer a measure: a stream with no terminal ends as outcome.truncated (the body ended), outcome.stalled (no byte for --idle-timeout), outcome.over_time (still delivering at --stream-timeout) or outcome.cut (still delivering when the run ended), each counted by errors")
	}
	gn, ok := lookupName(name)
	if !ok {
		if gn, name, rest, ok = measureName(name, rest); !ok { // measures.go
			return bad("unknown name %q: want one of %s, or a dialect measure (snake_case of two words or more, e.g. child_ttfd)", name, knownNames())
		}
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
	if gn.Kind == kindOutcome {
		if !measure.Outcome(sel.Stat).Valid() {
			return bad("outcome needs one of .%s", strings.ReplaceAll(outcomeNames(), ", ", ", ."))
		}
		return sel, nil
	}
	switch {
	case gn.Kind.hasStats() && sel.Stat == "":
		return bad("%s needs a statistic: .%s", gn.Name, strings.Join(latencyStats, ", ."))
	case gn.Kind.hasStats() && !slices.Contains(latencyStats, sel.Stat):
		return bad("unknown statistic %q: want one of %s", sel.Stat, strings.Join(latencyStats, ", "))
	case !gn.Kind.hasStats() && sel.Stat != "":
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

// ParseThresholds parses each expression with ParseThreshold; the first bad one is the error.
func ParseThresholds(exprs []string) ([]Threshold, error) {
	var out []Threshold
	for _, e := range exprs {
		t, err := ParseThreshold(e)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

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
	case kindMeasure:
		if t.Limit, t.Selector.unit, err = parseMeasureLimit(limit); err != nil {
			return bad("limit %q: %v", limit, err)
		}
	case kindLatency:
		d, err := time.ParseDuration(limit)
		if err != nil || d < 0 {
			return bad("limit %q: want a duration such as 300ms, 1.5s or 250us", limit)
		}
		t.Limit = float64(d) / float64(time.Microsecond)
	case kindRate, kindTokenRate:
		v, err := strconv.ParseFloat(limit, 64)
		if err != nil || !finite(v) || v < 0 {
			return bad("limit %q: want tokens per second, a number such as 20", limit)
		}
		t.Limit = v
		if sel.kind == kindRate {
			t.Limit = v * measure.RateScale
		}
	case kindErrors, kindFailed, kindOutcome, kindGoodput:
		if p, ok := strings.CutSuffix(limit, "%"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !finite(v) || v < 0 || v > 100 {
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
			if sel.kind.perSession() || sel.kind == kindGoodput {
				want = "a percentage such as 0.1% or a count such as 0"
			}
			return bad("limit %q: want %s", limit, want)
		}
		t.Limit = float64(v)
	}
	return t, nil
}

// finite tells whether v is a number a limit can be: strconv.ParseFloat reads "NaN" and
// "Inf", against which every comparison is false (or always true), so a check that names
// one would judge nothing.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

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
		if err != nil || !finite(v) || v < 0 {
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

// Value is the value of a selector such as "ttfc.p99" or "errors" in run, in its unit
// (microseconds for a latency); an error when the run has no data for it.
func Value(run *measure.Run, selector string) (float64, error) {
	sel, err := parseSelector(selector, selector)
	if err != nil {
		return 0, err
	}
	return sel.Measure(run, false)
}

// IsLatency tells whether the selector is a latency statistic (its limit in microseconds).
func (s Selector) IsLatency() bool { return s.kind == kindLatency }

// CountsSessions tells whether the selector counts sessions (errors, failed, outcome.NAME),
// so that a limit may be a share of them.
func (s Selector) CountsSessions() bool { return s.kind.perSession() }
