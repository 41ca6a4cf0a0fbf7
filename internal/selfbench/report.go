package selfbench

import (
	"fmt"
	"io"
	"strings"
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
	// Yardstick is what the figure is measured against; every figure has one, "none" when
	// nothing was measured beside it.
	Yardstick Yardstick `json:"yardstick"`
}

// NoYardstick is the Yardstick name of a figure that was measured against nothing.
const NoYardstick = "none"

// Yardstick is what a figure is read against, measured in the same run: the bare SSE floor, a
// naive reference server, the run without the disturbance, the probe client beside the
// generator. For a ratio it is the denominator, named for what it is.
type Yardstick struct {
	Name  string   `json:"name"`            // says what the yardstick is ("naive server: server CPU per token"), or NoYardstick.
	Value *float64 `json:"value,omitempty"` // with Unit, the yardstick's own figure; nil when Name is NoYardstick.
	Unit  string   `json:"unit,omitempty"`
}

// String is the yardstick as a table cell: "none", or its name and value with unit.
func (y Yardstick) String() string {
	if y.Value == nil {
		return y.Name
	}
	return strings.TrimSpace(fmt.Sprintf("%s: %s %s", y.Name, formatFigure(*y.Value), y.Unit))
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
	Notes    []string `json:"notes,omitempty"` // explain figures that need it (what limited a run, what a figure includes).
}

// add appends a figure without a target.
func (r *Report) add(name string, value float64, unit string) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Yardstick: Yardstick{Name: NoYardstick}})
}

// addTarget appends a figure with its target; met is whether the value reached it.
func (r *Report) addTarget(name string, value float64, unit, target string, met bool) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Target: target, Met: &met, Yardstick: Yardstick{Name: NoYardstick}})
}

// against sets the last added figure's yardstick: the figure named name, measured in the same
// run, whose value is value in unit.
func (r *Report) against(name string, value float64, unit string) {
	r.Figures[len(r.Figures)-1].Yardstick = Yardstick{Name: name, Value: &value, Unit: unit}
}

// pairYardsticks reads each figure named prefix+X against the figure named yardPrefix+X of the
// same report, where there is one: the mock's figures against the naive server's, the
// generator's against the probe client's.
func (r *Report) pairYardsticks(prefix, yardPrefix string) {
	for i, f := range r.Figures {
		rest, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			continue
		}
		for _, y := range r.Figures {
			if y.Name == yardPrefix+rest {
				v := y.Value
				r.Figures[i].Yardstick = Yardstick{Name: y.Name, Value: &v, Unit: y.Unit}
			}
		}
	}
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
