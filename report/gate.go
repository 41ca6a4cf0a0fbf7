package report

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/streambench/streambench/measure"
)

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
