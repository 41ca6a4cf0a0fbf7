package selfbench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Figure is one measured number with its unit and, where it has one, its target.
type Figure struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target,omitempty"` // the goal in words ("≤ 1 ms"), empty for context
	Met    *bool   `json:"met,omitempty"`    // whether Value reached Target
	// Yardstick is what the figure is read against, NoYardstick when nothing was measured beside it.
	Yardstick Yardstick `json:"yardstick"`
}

// NoYardstick is the Yardstick name of a figure that was measured against nothing.
const NoYardstick = "none"

// Yardstick is what a figure is read against, measured in the same run (for a ratio, its
// denominator).
type Yardstick struct {
	Name  string   `json:"name"`            // what the yardstick is, or NoYardstick.
	Value *float64 `json:"value,omitempty"` // with Unit, its own figure; nil for NoYardstick.
	Unit  string   `json:"unit,omitempty"`
}

// String is the yardstick as a table cell.
func (y Yardstick) String() string {
	if y.Value == nil {
		return y.Name
	}
	return strings.TrimSpace(fmt.Sprintf("%s: %s %s", y.Name, formatFigure(*y.Value), y.Unit))
}

// Report is what one measurement found: its figures, how, and whether the run was clean.
// Missed targets are not failures: on a shared 2-core machine they measure the machine too.
type Report struct {
	Name     string   `json:"name"`
	Command  string   `json:"command"`
	Method   string   `json:"method"`
	Figures  []Figure `json:"figures"`
	Failures []string `json:"failures,omitempty"` // correctness problems: the bench command exits non-zero
	Notes    []string `json:"notes,omitempty"`
}

func (r *Report) add(name string, value float64, unit string) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Yardstick: Yardstick{Name: NoYardstick}})
}

func (r *Report) addTarget(name string, value float64, unit, target string, met bool) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Target: target, Met: &met, Yardstick: Yardstick{Name: NoYardstick}})
}

// against sets the last added figure's yardstick.
func (r *Report) against(name string, value float64, unit string) {
	r.Figures[len(r.Figures)-1].Yardstick = Yardstick{Name: name, Value: &value, Unit: unit}
}

// pairYardsticks reads each figure named prefix+X against the one named yardPrefix+X.
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

// WriteText writes the report as a table with units, its notes and its verdict.
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
