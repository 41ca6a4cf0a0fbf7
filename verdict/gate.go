// Package verdict is streambench's one judge: it parses thresholds and regressions and
// decides a run's PASS or FAIL, for every command that says one (Judge).
//
// The defaults always apply: no violation, leak, error outcome or dropped start, every value
// recorded, a session started, the run not interrupted, every post-run check passed. A
// threshold relaxes a default only by naming its measure (violations{rule=R} relaxes R,
// outcome.NAME that outcome, failed both errors and violations), or --allow RULE does.
package verdict

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// Config says what to check beyond the run's own settings, which always apply.
type Config struct {
	Thresholds  []Threshold  // the command line's
	Regressions []Regression // against Baseline, which they need
	Baseline    *measure.Run
	// Allow adds known findings to the run's own: left out of the violations count, each
	// reported as an "allowed" check.
	Allow []protocol.Rule
	// Rules are the rules streambench knows, which the run's allow list must name (nil:
	// unchecked; the dialects are the command line's to know).
	Rules *protocol.RuleSet
}

// ParseFlags makes the judge's config from --threshold, --max-regression and --allow; the
// first bad one is the error, naming its flag.
func ParseFlags(rules *protocol.RuleSet, thresholds, regressions, allow []string) (Config, error) {
	cfg := Config{Rules: rules}
	for _, expr := range thresholds {
		t, err := ParseThresholdIn(rules, expr)
		if err != nil {
			return cfg, fmt.Errorf("--threshold: %w", err)
		}
		cfg.Thresholds = append(cfg.Thresholds, t)
	}
	for _, expr := range regressions {
		g, err := ParseRegression(expr)
		if err != nil {
			return cfg, fmt.Errorf("--max-regression: %w", err)
		}
		cfg.Regressions = append(cfg.Regressions, g)
	}
	for _, name := range allow {
		rule, err := rules.Parse(name)
		if err != nil {
			return cfg, fmt.Errorf("--allow: %w", err)
		}
		cfg.Allow = append(cfg.Allow, rule)
	}
	return cfg, nil
}

// ParseThresholdIn is ParseThreshold, refusing a rule scope rules (nil: any) does not have.
func ParseThresholdIn(rules *protocol.RuleSet, expr string) (Threshold, error) {
	t, err := ParseThreshold(expr)
	if err != nil {
		return t, err
	}
	return t, checkRule(rules, t)
}

// checkRule refuses a threshold scoped to an unknown rule, which would measure no violation
// and pass whatever the run broke.
func checkRule(rules *protocol.RuleSet, t Threshold) error {
	rule, ok := t.Selector.Scope["rule"]
	if !ok || rules == nil || t.Selector.def.Name != measure.Violations {
		return nil
	}
	if _, err := rules.Parse(rule); err != nil {
		return &ThresholdError{Expr: t.Expr, Reason: err.Error()}
	}
	return nil
}

// Result is every check, in order, and whether all passed.
type Result struct {
	RunID    string
	Checks   []Check
	Pass     bool
	Warnings []string // qualify the checks without failing them
}

// Allowed returns the allowed checks with violations, as "RULE×COUNT".
func (g *Result) Allowed() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Allowed && c.Measured > 0 {
			out = append(out, c.Value)
		}
	}
	return out
}

// Failed returns the names of the failing checks.
func (g *Result) Failed() []string {
	var out []string
	for _, c := range g.Checks {
		if !c.Pass {
			out = append(out, c.Name)
		}
	}
	return out
}

// Reasons are the failing checks as sentences, for the console and summary.json.
func (g *Result) Reasons() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Pass {
			continue
		}
		r := c.Name
		if c.Source != sourceRun {
			r = fmt.Sprintf("%s: %s (limit %s)", c.Name, c.Value, c.Limit)
		}
		if c.Detail != "" {
			r += ": " + c.Detail
		}
		out = append(out, r)
	}
	return out
}

// Verdict is the result as summary.json records it, keeping warnings.
func (g *Result) Verdict(warnings []string) measure.Verdict {
	return measure.Verdict{Pass: g.Pass, Reasons: g.Reasons(), Allowed: g.Allowed(), Warnings: warnings}
}

// Check sources: where a check came from.
const (
	sourceDefault   = "default"   // the defaults every run is judged by
	sourceRun       = "run"       // the run's integrity: it ran as planned and measured all
	sourceThreshold = "threshold" // the command line
	sourceMix       = "mix"       // the mix file
	sourceLoad      = "load"      // the run's own allow list (its mix's and load --allow)
)

// Judge checks run against the defaults, the run's mix thresholds and cfg. Bad input is an
// error, not a failed check: stored thresholds or allow list that do not parse, regressions
// without a baseline, an incomplete run or baseline (ErrIncomplete).
func Judge(run *measure.Run, cfg Config) (*Result, error) {
	if err := cmp.Or(checkComplete("current", run), checkComplete("baseline", cfg.Baseline)); err != nil {
		return nil, err
	}
	if len(cfg.Regressions) > 0 && cfg.Baseline == nil {
		return nil, errors.New("regression checks need a baseline run")
	}
	fromMix := run.Summary.Config.Allow
	for i, rule := range fromMix {
		if cfg.Rules == nil {
			break
		}
		if _, err := cfg.Rules.Parse(string(rule)); err != nil {
			return nil, fmt.Errorf("%s config.allow[%d] (the run's: its mix file or load --allow): %w", measure.SummaryFile, i, err)
		}
	}
	if extra := slices.DeleteFunc(slices.Clone(cfg.Allow), func(r protocol.Rule) bool { return slices.Contains(fromMix, r) }); len(extra) > 0 {
		// Judge a copy whose allow list has the command line's too.
		judged := *run
		judged.Summary.Config.Allow = append(slices.Clone(fromMix), extra...)
		run = &judged
	}
	type sourced struct {
		t      Threshold
		source string
	}
	var given []sourced
	for _, t := range cfg.Thresholds {
		given = append(given, sourced{t, sourceThreshold})
	}
	for i, expr := range run.Summary.Config.Thresholds {
		t, err := ParseThresholdIn(cfg.Rules, expr)
		if err != nil {
			return nil, fmt.Errorf("%s config.thresholds[%d] (from the mix file): %w", measure.SummaryFile, i, err)
		}
		given = append(given, sourced{t, sourceMix})
	}
	rel := relaxed{named: map[measure.Metric]bool{}}
	for _, g := range given {
		rel.note(g.t.Selector)
	}
	res := &Result{RunID: run.Summary.RunID, Checks: defaultChecks(run, &rel)}
	for _, g := range given {
		res.Checks = append(res.Checks, judgeOnOverhead(g.t, run, g.source, &rel))
	}
	for _, g := range cfg.Regressions {
		res.Checks = append(res.Checks, g.Evaluate(run, cfg.Baseline))
	}
	if len(cfg.Regressions) > 0 {
		if diffs := measure.WorkloadDiffs(&cfg.Baseline.Summary, &run.Summary); len(diffs) > 0 {
			res.Warnings = append(res.Warnings, "the baseline's workload differs from this run's, so the regressions compare only the scenario×dialect keys both recorded: "+strings.Join(diffs, "; "))
		}
	}
	res.Checks = append(res.Checks, integrityChecks(&run.Summary)...)
	for _, rule := range run.Summary.Config.Allow {
		source := "allow" // gate --allow
		if slices.Contains(fromMix, rule) {
			source = sourceLoad
		}
		n := run.Summary.Violations[rule]
		res.Checks = append(res.Checks, Check{Name: "allow " + string(rule), Source: source, Value: fmt.Sprintf("%s×%d", rule, n),
			Limit: "any (known finding)", Pass: true, Allowed: true, Measured: float64(n), Detail: "counted and shown, not failing the gate"})
	}
	res.Pass = !slices.ContainsFunc(res.Checks, func(c Check) bool { return !c.Pass })
	return res, nil
}

// judgeOnOverhead evaluates t on its overhead when the run recorded it (OnOverhead), keeping
// t's name, its detail saying what was judged and the latency as measured.
func judgeOnOverhead(t Threshold, run *measure.Run, source string, rel *relaxed) Check {
	on, ok := OnOverhead(t, run)
	if !ok {
		return t.evaluate(run, source, rel)
	}
	c := on.evaluate(run, source, rel)
	c.Name = t.Expr
	detail := "judged on " + on.Selector.String() + ", the target's own part (the script's delays taken out)"
	if m, err := t.Selector.measure(run, t.Percent, rel); err == nil {
		detail += "; as measured " + t.Selector.format(m.value, t.Percent)
	}
	detail += "; " + t.Selector.Name + measuredSuffix + " judges it as measured"
	c.Detail = strings.TrimPrefix(c.Detail+"; "+detail, "; ")
	return c
}

// OnOverhead is t on ttfc or ttft made the same threshold on ttfc.overhead or ttft.overhead,
// when run recorded that within t's scope: ttfc is mostly the script's thinking time, which no
// capacity changes, and the overhead is what load adds. Otherwise (ttfc.measured too) it
// gives t and false.
func OnOverhead(t Threshold, run *measure.Run) (Threshold, bool) {
	over := t.Selector.def.Overhead
	if over == "" || strings.HasSuffix(t.Selector.Name, measuredSuffix) || !recordedIn(run, over, t.Selector.Scope) {
		return t, false
	}
	expr := strings.TrimSpace(t.Expr)
	name := t.Selector.Name
	if !strings.HasPrefix(expr, name) {
		return t, false
	}
	o, err := ParseThreshold(string(over) + expr[len(name):])
	if err != nil {
		return t, false
	}
	return o, true
}

// recordedIn tells whether run holds values of m within scope.
func recordedIn(run *measure.Run, m measure.Metric, scope map[string]string) bool {
	if h := run.Histograms; h != nil && h.Len() > 0 {
		return slices.ContainsFunc(h.Keys(), func(k measure.Key) bool { return k.Metric == m && scopeMatches(scope, k) && h.Count(k) > 0 })
	}
	return slices.ContainsFunc(run.Summary.Metrics, Selector{Scope: scope, def: m.Def()}.matches)
}

// Stamp judges run with its own settings alone and records the verdict in its summary.
func Stamp(run *measure.Run) error {
	res, err := Judge(run, Config{})
	if err != nil {
		return err
	}
	run.Summary.Verdict = res.Verdict(run.Summary.Verdict.Warnings)
	return nil
}

// relaxed is what the given thresholds name, and so take out of the defaults.
type relaxed struct {
	named    map[measure.Metric]bool
	rules    []protocol.Rule   // violations{rule=R}
	outcomes []measure.Outcome // outcome.NAME, out of errors
}

func (r *relaxed) note(s Selector) {
	switch name := s.def.Name; {
	case name == measure.Violations && s.Scope["rule"] != "":
		r.rules = append(r.rules, protocol.Rule(s.Scope["rule"]))
	case name == measure.Failed:
		r.named[measure.Errors], r.named[measure.Violations] = true, true
	case name == measure.ByOutcome:
		r.outcomes = append(r.outcomes, measure.Outcome(s.Stat))
	default:
		r.named[name] = true
	}
}

// defaultChecks are DefaultChecks, each left out when a given threshold names its measure.
func defaultChecks(run *measure.Run, rel *relaxed) []Check {
	var out []Check
	for _, expr := range DefaultChecks() {
		t, err := ParseThreshold(expr)
		if err != nil {
			panic(err) // the expressions above are constants
		}
		if !rel.named[t.Selector.def.Name] {
			out = append(out, t.evaluate(run, sourceDefault, rel))
		}
	}
	return out
}

// integrityChecks fail a run that did not run as planned or measure all it saw.
func integrityChecks(s *measure.Summary) []Check {
	var out []Check
	check := func(name string, pass bool, detail string) {
		c := Check{Name: name, Source: sourceRun, Value: map[bool]string{true: "yes", false: "no"}[pass], Limit: "yes", Pass: pass,
			Measured: math.NaN()}
		if !pass {
			c.Detail = detail
		}
		out = append(out, c)
	}
	c := s.Counters
	check("a session started", c.SessionsStarted > 0, "no session started")
	check("every session ended", c.SessionsStarted == 0 || c.Ended() == c.SessionsStarted,
		fmt.Sprintf("%d sessions started, %d outcomes counted", c.SessionsStarted, c.Ended()))
	check("every latency recorded", c.RecordErrors == 0, fmt.Sprintf("%d latencies outside the histogram range", c.RecordErrors))
	stopped := s.Judging.Stopped
	if s.Interrupted {
		stopped = "interrupted before the planned end"
	}
	check("ran to its planned end", stopped == "", stopped)
	check("post-run checks passed", len(s.Judging.PostRun) == 0, strings.Join(s.Judging.PostRun, "; "))
	return out
}

// outcomeBreakdown lists the error outcomes counted, as NAME×COUNT, with HTTP statuses.
func outcomeBreakdown(c measure.Counters, except []measure.Outcome) string {
	var parts []string
	for _, o := range measure.Outcomes() {
		n := c.Outcomes[o]
		if n == 0 || !o.IsError() || slices.Contains(except, o) {
			continue
		}
		p := fmt.Sprintf("%s×%d", o, n)
		if o == measure.OutcomeHTTPError && len(c.HTTPErrors) > 0 {
			p += " (" + c.HTTPStatuses() + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// DefaultChecks are the checks every run is judged by unless a threshold names their measure.
func DefaultChecks() []string {
	return []string{"violations==0", "errors==0", "leaks==0", "dropped_starts==0"}
}

// ErrIncomplete is Judge's error for a snapshot of a run, which no check can judge.
var ErrIncomplete = errors.New("the run is incomplete")

func checkComplete(role string, r *measure.Run) error {
	if r == nil || !r.Summary.Incomplete {
		return nil
	}
	return fmt.Errorf("%s run %s: %w (its %s says \"incomplete\": true): a snapshot taken %s into the run, at %s UTC, when the run was killed or still running; the gate judges finished runs only",
		role, r.Summary.RunID, ErrIncomplete, measure.SummaryFile,
		r.Summary.Ended.Sub(r.Summary.Started).Round(time.Second), r.Summary.Ended.UTC().Format(time.TimeOnly))
}
