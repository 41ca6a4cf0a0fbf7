package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/streambench/streambench/measure"
)

// engineTable is each engine gauge's range over the run, and how its reads went.
func engineTable(e *measure.EngineMetrics) Table {
	t := Table{Title: fmt.Sprintf("Engine gauges (%s: %d reads, %d failed)", e.URL, e.Scrapes, e.Failed),
		Header: []string{"gauge", "what", "min", "mean", "max", "last", "points"}, Right: []bool{false, false, true, true, true, true, true}}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	for _, s := range e.Series {
		lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
		for _, p := range s.Points {
			lo, hi, sum = min(lo, p.Value), max(hi, p.Value), sum+p.Value
		}
		if n := len(s.Points); n > 0 {
			t.Rows = append(t.Rows, []string{s.Name, s.Doc, g(lo), g(sum / float64(n)), g(hi), g(s.Points[n-1].Value), Count(int64(n))})
		}
	}
	if len(t.Rows) == 0 {
		t.Rows = append(t.Rows, []string{"(none)", "no known gauge read: " + e.LastError, "-", "-", "-", "-", "0"})
	}
	return t
}

// enginePanels are the engine's counts and its 0-1 shares over the run, a panel each.
func enginePanels(e *measure.EngineMetrics) []*plot.Plot {
	if e == nil {
		return nil
	}
	var out []*plot.Plot
	for _, fraction := range []bool{false, true} {
		p := NewPlot("engine gauges: " + map[bool]string{false: "queue and batch", true: "cache (0-1)"}[fraction])
		p.Title.TextStyle.Font.Size = vg.Points(12)
		p.X.Label.Text = "time since start (s)"
		i := 0
		for _, s := range e.Series {
			if s.Fraction() != fraction || len(s.Points) == 0 {
				continue
			}
			if n := len(s.Points); i == 0 && n > 1 { // the spacing read, not the interval asked for
				every := time.Duration(s.Points[n-1].Ms-s.Points[0].Ms) * time.Millisecond / time.Duration(n-1)
				p.X.Label.Text += fmt.Sprintf(", a read every %s on average", every.Round(10*time.Millisecond))
			}
			xy := make(plotter.XYs, len(s.Points))
			for j, pt := range s.Points {
				xy[j] = plotter.XY{X: float64(pt.Ms) / 1000, Y: pt.Value}
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				continue
			}
			LineStyle(l, i)
			p.Add(l)
			p.Legend.Add(s.Doc, l)
			i++
		}
		if i == 0 {
			continue
		}
		p.X.Min, p.Y.Min = 0, 0
		if fraction {
			p.Y.Max = 1
		}
		p.X.Tick.Marker = plot.TickerFunc(CountTicks)
		out = append(out, p)
	}
	return out
}
