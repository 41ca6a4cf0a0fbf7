package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/streambench/streambench/verdict"
)

// WriteGateTable prints every check with its value, limit and verdict, then the overall verdict.
func WriteGateTable(w io.Writer, g *verdict.Result) error {
	if err := checksTable(g, strings.ToUpper).WriteText(w); err != nil {
		return err
	}
	for _, warning := range g.Warnings {
		if _, err := fmt.Fprintf(w, "\nwarning: %s\n", warning); err != nil {
			return err
		}
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

// WriteGateMarkdown writes the checks as a GitHub table (for CI job summaries).
func WriteGateMarkdown(w io.Writer, g *verdict.Result) {
	fmt.Fprintf(w, "**Gate: %s**\n\n", BoolText(g.Pass, "PASS", "FAIL"))
	if a := g.Allowed(); len(a) > 0 {
		fmt.Fprintf(w, "Allowed (known findings): %s\n\n", MarkdownCell(strings.Join(a, ", ")))
	}
	for _, warning := range g.Warnings {
		fmt.Fprintf(w, "Warning: %s\n\n", MarkdownCell(warning))
	}
	checksTable(g, strings.ToLower).WriteMarkdown(w, "")
}

// checksTable is a row per check, its header in the case caseOf gives.
func checksTable(g *verdict.Result, caseOf func(string) string) Table {
	t := Table{Header: strings.Fields(caseOf("check source value limit verdict detail"))}
	for _, c := range g.Checks {
		t.Rows = append(t.Rows, []string{c.Name, c.Source, c.Value, c.Limit, c.Verdict(), c.Detail})
	}
	return t
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

// WriteGateJUnit writes the checks as JUnit XML, one testcase per check, for CI test reports.
func WriteGateJUnit(w io.Writer, g *verdict.Result) error {
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
