package selfbench

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Figure is one measured number with its unit and, when the issues set one, its target.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// Target states the goal in words ("≤ 1 ms"); Met says whether Value reached it. Both are
	// empty for figures that are context rather than goals.
	Target string `json:"target,omitempty"`
	Met    *bool  `json:"met,omitempty"`
}

// Report is what one measurement found: its figures, how it measured them, and whether the
// run behind them was clean (no errors, violations or leaks). Missed targets are reported, not
// failures: on a shared 2-core machine they measure the machine as much as the code.
type Report struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Method  string   `json:"method"`
	Figures []Figure `json:"figures"`
	// Failures are correctness problems (errors, violations, leaks, streams that never
	// opened); any of them makes the bench command exit non-zero.
	Failures []string `json:"failures,omitempty"`
	// Notes explain figures that need it (what limited a run, what a figure includes).
	Notes []string `json:"notes,omitempty"`
}

// add appends a figure without a target.
func (r *Report) add(name string, value float64, unit string) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit})
}

// addTarget appends a figure with its target; met is whether the value reached it.
func (r *Report) addTarget(name string, value float64, unit, target string, met bool) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Target: target, Met: &met})
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// WriteText writes the report as a small table with units, its notes and its verdict.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "== %s\n   command: %s\n   method: %s\n", r.Name, r.Command, r.Method)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, f := range r.Figures {
		target := ""
		if f.Target != "" {
			verdict := "met"
			if f.Met != nil && !*f.Met {
				verdict = "MISSED"
			}
			target = fmt.Sprintf("target %s: %s", f.Target, verdict)
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", f.Name, formatFigure(f.Value), f.Unit, target)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "   result: clean")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "   FAILED: %s\n", f)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// formatFigure prints integers as integers and other values with three significant decimals.
func formatFigure(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	switch a := max(v, -v); {
	case a > 0 && a < 0.001:
		return fmt.Sprintf("%.1e", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
