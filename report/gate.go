package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// DefaultThresholds are the correctness checks the gate applies when neither the command line
// nor the run's mix names any: they do not depend on latency, which is noisy on shared machines.
func DefaultThresholds() []string { return []string{"violations==0", "leaks==0", "errors<0.1%"} }

// HungThreshold is applied by every gate unless a threshold names hung itself: a session that
// never ended is a failure whatever else the gate checks.
const HungThreshold = "hung==0"

// GateConfig says what to check.
type GateConfig struct {
	// Thresholds from the command line. The run's own Config.Thresholds (the mix file's) are
	// always added; when both are empty, DefaultThresholds apply.
	Thresholds []Threshold
	// Regressions compare against Baseline, which must be set when there are any.
	Regressions []Regression
	Baseline    *measure.Run
	// Allow lists rules whose violations are known findings, in addition to the run's own
	// (Config.Allow, from the mix): they are left out of the violations count, and every
	// allowed rule is reported as a check of its own with the verdict "allowed".
	Allow []protocol.Rule
}

// GateResult is every check, in order, and whether all passed.
type GateResult struct {
	RunID  string
	Checks []Check
	Pass   bool
}

// Allowed returns the allowed checks with violations, as "RULE×COUNT".
func (g *GateResult) Allowed() []string {
	var out []string
	for _, c := range g.Checks {
		if c.Allowed && c.Measured > 0 {
			out = append(out, c.Value)
		}
	}
	return out
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
// run's stored thresholds do not parse, regressions are asked without a baseline, or the run
// or the baseline is incomplete (ErrIncomplete).
func Gate(run *measure.Run, cfg GateConfig) (*GateResult, error) {
	if err := checkComplete("current", run); err != nil {
		return nil, err
	}
	if cfg.Baseline != nil {
		if err := checkComplete("baseline", cfg.Baseline); err != nil {
			return nil, err
		}
	}
	res := &GateResult{RunID: run.Summary.RunID, Pass: true}
	add := func(c Check) {
		res.Checks = append(res.Checks, c)
		res.Pass = res.Pass && c.Pass
	}
	fromMix := run.Summary.Config.Allow
	for i, rule := range fromMix {
		if _, err := protocol.ParseRule(string(rule)); err != nil {
			return nil, fmt.Errorf("%s config.allow[%d] (from the mix file): %w", measure.SummaryFile, i, err)
		}
	}
	if extra := slices.DeleteFunc(slices.Clone(cfg.Allow), func(r protocol.Rule) bool { return slices.Contains(fromMix, r) }); len(extra) > 0 {
		// Judge a copy whose allow list has the command line's too: the checks read it there.
		judged := *run
		judged.Summary.Config.Allow = append(slices.Clone(fromMix), extra...)
		run = &judged
	}
	namesHung := false
	for _, t := range cfg.Thresholds {
		namesHung = namesHung || t.Selector.Name == "hung"
		add(t.Evaluate(run, "threshold"))
	}
	for i, expr := range run.Summary.Config.Thresholds {
		t, err := ParseThreshold(expr)
		if err != nil {
			return nil, fmt.Errorf("%s config.thresholds[%d] (from the mix file): %w", measure.SummaryFile, i, err)
		}
		namesHung = namesHung || t.Selector.Name == "hung"
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
	if !namesHung {
		t, err := ParseThreshold(HungThreshold)
		if err != nil {
			return nil, err
		}
		add(t.Evaluate(run, "default"))
	}
	if len(cfg.Regressions) > 0 && cfg.Baseline == nil {
		return nil, errors.New("regression checks need a baseline run")
	}
	for _, g := range cfg.Regressions {
		add(g.Evaluate(run, cfg.Baseline))
	}
	for _, rule := range run.Summary.Config.Allow {
		source := "allow"
		if slices.Contains(fromMix, rule) {
			source = "mix"
		}
		n := run.Summary.Violations[rule]
		add(Check{Name: "allow " + string(rule), Source: source, Value: fmt.Sprintf("%s×%d", rule, n), Limit: "any (known finding)",
			Pass: true, Allowed: true, Measured: float64(n), Detail: "counted and shown, not failing the gate"})
	}
	return res, nil
}

// WriteTable prints every check with its value, limit and verdict, then the overall verdict.
func (g *GateResult) WriteTable(w io.Writer) error {
	t := table{Header: []string{"CHECK", "SOURCE", "VALUE", "LIMIT", "VERDICT", "DETAIL"}}
	for _, c := range g.Checks {
		t.Rows = append(t.Rows, []string{c.Name, c.Source, c.Value, c.Limit, c.Verdict(), c.Detail})
	}
	if err := t.writeText(w); err != nil {
		return err
	}
	allowed := ""
	if a := g.Allowed(); len(a) > 0 {
		allowed = "; allowed: " + strings.Join(a, ", ")
	}
	failed := g.Failed()
	if len(failed) == 0 {
		_, err := fmt.Fprintf(w, "\ngate: PASS (%d checks%s)\n", len(g.Checks), allowed)
		return err
	}
	_, err := fmt.Fprintf(w, "\ngate: FAIL (%d of %d checks failed: %s%s)\n", len(failed), len(g.Checks), strings.Join(failed, ", "), allowed)
	return err
}

// WriteMarkdown writes the checks as a GitHub table (for CI job summaries).
func (g *GateResult) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "**Gate: %s**\n\n", boolText(g.Pass, "PASS", "FAIL"))
	if a := g.Allowed(); len(a) > 0 {
		fmt.Fprintf(w, "Allowed (known findings): %s\n\n", mdCell(strings.Join(a, ", ")))
	}
	t := table{Header: []string{"check", "source", "value", "limit", "verdict", "detail"}}
	for _, c := range g.Checks {
		t.Rows = append(t.Rows, []string{c.Name, c.Source, c.Value, c.Limit, c.Verdict(), c.Detail})
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
		if c.Allowed {
			tc.SystemOut = "allowed: " + tc.SystemOut
		}
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
