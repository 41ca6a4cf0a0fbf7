package report

import (
	"fmt"
	"strconv"

	"github.com/streambench/streambench/measure"
)

// RepeatsTable is a repeated workload's spread: each figure in every run, its median, range
// and the range as a share of the median.
func RepeatsTable(r measure.Repeats) Table {
	t := Table{Title: fmt.Sprintf("The same workload %d times: each figure's median and spread (max − min, of the median)", len(r.Runs)),
		Header: append(append([]string{"figure"}, r.Runs...), "median", "min – max", "spread")}
	for i := range t.Header {
		t.Right = append(t.Right, i > 0)
	}
	for _, f := range r.Figures {
		row := []string{label(f)}
		for _, v := range f.Values {
			row = append(row, figure(v))
		}
		t.Rows = append(t.Rows, append(row, figure(f.Median), figure(f.Min)+" – "+figure(f.Max), pct1(f.Spread)))
	}
	return t
}

// CompareRepeats sets two repeated workloads' figures side by side: each median and range, the
// change of the medians, and whether the ranges overlap (then the change is within the runs' noise).
func CompareRepeats(a, b measure.Repeats) Table {
	t := Table{Title: fmt.Sprintf("A: %s, B: %s (median, min – max)", count(len(a.Runs), "run"), count(len(b.Runs), "run")),
		Header: []string{"figure", "A", "B", "change", "ranges"}, Right: []bool{false, true, true, true, false}}
	for _, fa := range a.Figures {
		for _, fb := range b.Figures {
			if fa.Figure != fb.Figure {
				continue
			}
			change, overlap := "-", "overlap: within noise"
			if fa.Median != 0 {
				change = fmt.Sprintf("%+.1f%%", (fb.Median-fa.Median)/fa.Median*100)
			}
			if fb.Min > fa.Max || fb.Max < fa.Min {
				overlap = "apart"
			}
			spread := func(f measure.Spread) string {
				return figure(f.Median) + " (" + figure(f.Min) + " – " + figure(f.Max) + ")"
			}
			t.Rows = append(t.Rows, []string{label(fa), spread(fa), spread(fb), change, overlap})
		}
	}
	return t
}

// count is "1 run", "3 runs".
func count(n int, noun string) string {
	return strconv.Itoa(n) + " " + noun + BoolText(n == 1, "", "s")
}

// label is a figure's name with its unit.
func label(f measure.Spread) string {
	return BoolText(f.Unit == "", f.Figure, f.Figure+" ("+f.Unit+")")
}

// figure is a value with three significant digits at least, no exponent.
func figure(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func pct1(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }
