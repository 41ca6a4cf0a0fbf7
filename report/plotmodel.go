package report

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streambench/streambench/measure"
)

// A run's latency plots are small multiples: a panel per dialect (per metric when a plot has
// several), each with the scenarios of worst p99 as lines and the rest merged as "other", so
// no panel holds more lines than a reader can follow. Tests check the model, not pixels.

const (
	maxPanelLines = 6 // "other" included
	// minLineSamples is the fewest samples a line needs: the spectrum of a handful of values
	// is a spike, not a distribution.
	minLineSamples = 20
)

// plotLine is one line of a panel: a key's histogram, or several merged ("other").
type plotLine struct {
	Label    string
	Scenario string         // picks the colour, the same in every plot; "" for "other"
	Metric   measure.Metric // picks the colour instead, in a plot of metrics
	Samples  int64
	hist     *hdrhistogram.Histogram
}

// plotPanel is one panel of a small-multiples figure; never empty.
type plotPanel struct {
	Title string
	Lines []plotLine
	Left  string // the keys with too few samples left out
}

// spectrumModel is a percentile-spectrum figure before it is drawn (no panel: Empty says why).
type spectrumModel struct {
	Name, Title string
	Panels      []plotPanel
	Empty       string
	Notes       []string // the panels left out, and why
	// LogY puts ms and seconds on one axis (the overview's overheads beside their raw
	// figures); Compact draws one smaller panel.
	LogY, Compact bool
}

// spectrumModelOf builds the figure of metrics over hs: a panel per dialect for one metric,
// per metric for several; empty is what the report says when none was recorded.
func spectrumModelOf(name, title, empty string, hs *measure.Histograms, metrics ...measure.Metric) spectrumModel {
	m := spectrumModel{Name: name, Title: title}
	type group struct {
		metric  measure.Metric
		dialect string
	}
	byGroup := map[group][]measure.Key{}
	var values int64
	for _, k := range hs.Keys() {
		if !slices.Contains(metrics, k.Metric) || hs.Count(k) == 0 {
			continue
		}
		g := group{metric: k.Metric}
		if len(metrics) == 1 {
			g = group{dialect: k.Dialect}
		}
		byGroup[g] = append(byGroup[g], k)
		values += hs.Count(k)
	}
	groups := slices.SortedFunc(maps.Keys(byGroup), func(a, b group) int {
		return cmp.Or(cmp.Compare(slices.Index(metrics, a.metric), slices.Index(metrics, b.metric)), cmp.Compare(a.dialect, b.dialect))
	})
	for _, g := range groups {
		panelTitle := g.dialect
		if len(metrics) > 1 {
			panelTitle = string(g.metric)
		}
		if p, ok := panelOf(panelTitle, byGroup[g], hs, len(metrics) > 1); ok {
			m.Panels = append(m.Panels, p)
		} else {
			m.Notes = append(m.Notes, fmt.Sprintf("%s: no panel for %s: %s", name, panelTitle, p.Left))
		}
	}
	if len(m.Panels) == 0 {
		m.Empty = empty
		if values > 0 {
			// Values were measured, too few for a line: say so, never "none".
			m.Empty = fmt.Sprintf("%d values measured (%s), too few for a line: a line needs %d", values, measure.JoinNames(metrics), minLineSamples)
		}
	}
	return m
}

// panelOf is one panel of keys: the worst by p99 as lines, the rest as "other".
func panelOf(title string, keys []measure.Key, hs *measure.Histograms, withDialect bool) (plotPanel, bool) {
	type keyed struct {
		key  measure.Key
		hist *hdrhistogram.Histogram
		p99  int64
	}
	var big, small []keyed
	for _, k := range keys {
		h := hs.Get(k)
		kd := keyed{k, h, h.ValueAtQuantile(99)}
		if h.TotalCount() >= minLineSamples {
			big = append(big, kd)
		} else {
			small = append(small, kd)
		}
	}
	slices.SortStableFunc(big, func(a, b keyed) int { return cmp.Or(cmp.Compare(b.p99, a.p99), a.key.Compare(b.key)) })
	own := big
	if len(big)+min(len(small), 1) > maxPanelLines {
		own = big[:maxPanelLines-1]
	}
	p := plotPanel{Title: title}
	for _, kd := range own {
		label := kd.key.Scenario
		if withDialect {
			label += " (" + kd.key.Dialect + ")"
		}
		p.Lines = append(p.Lines, plotLine{Label: label, Scenario: kd.key.Scenario, Samples: kd.hist.TotalCount(), hist: kd.hist})
	}
	rest := append(slices.Clone(big[len(own):]), small...)
	if len(rest) > 0 {
		other := measure.NewHistogram()
		for _, kd := range rest {
			other.Merge(kd.hist)
		}
		if n := other.TotalCount(); n >= minLineSamples {
			label := fmt.Sprintf("other (%d keys)", len(rest))
			if len(own) == 0 {
				label = fmt.Sprintf("all %d keys, each n<%d", len(rest), minLineSamples)
			}
			p.Lines = append(p.Lines, plotLine{Label: label, Samples: n, hist: other})
		} else {
			p.Left = fmt.Sprintf("%d keys with %d samples in all, under %d", len(rest), n, minLineSamples)
		}
	}
	return p, len(p.Lines) > 0
}

// palette is the colours lines take by scenario: Tableau's 10, then two more.
var palette = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {188, 189, 34, 255}, {23, 190, 207, 255}, {31, 31, 31, 255},
	{174, 199, 232, 255}, {255, 187, 120, 255},
}

var otherColor = color.RGBA{150, 150, 150, 255}

// scenarioColors gives each scenario of a run its colour and dashes, the same in every plot.
type scenarioColors map[string]int

func colorsOf(hs *measure.Histograms) scenarioColors {
	var names []string
	for _, k := range hs.Keys() {
		if k.Scenario != "" && !slices.Contains(names, k.Scenario) {
			names = append(names, k.Scenario)
		}
	}
	slices.Sort(names)
	c := scenarioColors{}
	for i, n := range names {
		c[n] = i
	}
	return c
}

// style sets a line's colour and dashes for its scenario, or its metric.
func (c scenarioColors) style(l *plotter.Line, ln plotLine) {
	l.Width = vg.Points(1.6)
	if ln.Metric != "" {
		l.Color = palette[max(slices.Index(headlineMetrics, ln.Metric), 0)%len(palette)]
		if isOverhead(ln.Metric) {
			l.Width = vg.Points(2.4)
		}
		return
	}
	scenario := ln.Scenario
	i, ok := c[scenario]
	if scenario == "" || !ok {
		l.Color, l.Dashes = otherColor, []vg.Length{vg.Points(4), vg.Points(3)}
		return
	}
	l.Color = palette[i%len(palette)]
	if i >= len(palette) {
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(2)}
	}
}

// Small-multiples layout: panels in a grid, each with its legend on its right.
const (
	gridColumns     = 2
	gridPanelWidth  = 7 * vg.Inch
	gridPanelHeight = 3.1 * vg.Inch
	gridLegendWidth = 2.1 * vg.Inch
)

func drawSpectrum(m spectrumModel, colors scenarioColors) Figure {
	cols := min(gridColumns, len(m.Panels))
	rows := (len(m.Panels) + cols - 1) / cols
	var plots []*plot.Plot
	for _, pn := range m.Panels {
		plots = append(plots, spectrumPanelPlot(pn, colors, m.LogY))
	}
	titleH := vg.Points(26)
	panelWidth, panelHeight := gridPanelWidth, gridPanelHeight
	if m.Compact {
		panelWidth, panelHeight = 6.4*vg.Inch, 3*vg.Inch
	}
	return Figure{Name: m.Name, Width: panelWidth * vg.Length(cols), Height: panelHeight*vg.Length(rows) + titleH, Draw: func(c draw.Canvas) {
		title := plot.New().Title.TextStyle
		title.Font.Size = vg.Points(14)
		title.XAlign, title.YAlign = draw.XLeft, draw.YTop
		c.FillText(title, vg.Point{X: c.Min.X + vg.Points(8), Y: c.Max.Y - vg.Points(6)}, m.Title)
		for i, p := range plots {
			row, col := i/cols, i%cols
			x0 := c.Min.X + panelWidth*vg.Length(col)
			y1 := c.Max.Y - titleH - panelHeight*vg.Length(row)
			cell := vg.Rectangle{Min: vg.Point{X: x0, Y: y1 - panelHeight}, Max: vg.Point{X: x0 + panelWidth, Y: y1}}
			drawWithSideLegend(c, p, cell)
		}
	}}
}

// drawWithSideLegend draws p in cell with its legend in a column on the cell's right.
func drawWithSideLegend(c draw.Canvas, p *plot.Plot, cell vg.Rectangle) {
	leg := p.Legend
	leg.Top, leg.Left = true, true
	leg.XOffs, leg.YOffs = 0, -vg.Points(22)
	q := *p
	q.Legend = plot.NewLegend()
	split := cell.Max.X - gridLegendWidth
	q.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: cell.Min.X + vg.Points(4), Y: cell.Min.Y + vg.Points(4)}, Max: vg.Point{X: split, Y: cell.Max.Y - vg.Points(4)}}})
	leg.Draw(draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: split + vg.Points(6), Y: cell.Min.Y}, Max: cell.Max}})
}

// spectrumPanelPlot is one panel: each line's percentile spectrum, x in nines, y in ms.
func spectrumPanelPlot(pn plotPanel, colors scenarioColors, logY bool) *plot.Plot {
	p := NewPlot(pn.Title)
	p.Title.TextStyle.Font.Size = vg.Points(12)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "ms"
	if pn.Left != "" {
		p.X.Label.Text += " (" + pn.Left + ")"
	}
	maxX, maxY := 10.0, 0.0
	for _, ln := range pn.Lines {
		pts := spectrumPoints(ln.hist)
		for i := range pts {
			if logY {
				pts[i].Y = max(pts[i].Y, logFloorMS) // a log axis has no 0
			}
			maxY = max(maxY, pts[i].Y)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			continue
		}
		colors.style(l, ln)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s n=%d", ln.Label, ln.Samples), l)
		maxX = max(maxX, pts[len(pts)-1].X)
	}
	p.X.Scale = plot.LogScale{}
	p.X.Min = 1
	p.X.Max = pow10Ceil(maxX)
	p.X.Tick.Marker = plot.TickerFunc(ninesTicker)
	p.Y.Tick.Marker = plot.TickerFunc(PlainTicks)
	p.Y.Min, p.Y.Max = 0, max(maxY*1.05, 1) // headroom: the worst value is not on the frame
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Min, p.Y.Max = logFloorMS, pow10Ceil(max(maxY, 1))
		p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick { // plain numbers: 0.1, 1, 10, …
			return decadeTicks(pow10Ceil(min), max, func(_ int, v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
		})
		p.Y.Label.Text = "ms (log scale)"
	}
	return p
}

// logFloorMS is the bottom of a log latency axis: values under it (an overhead of 0) sit on it.
const logFloorMS = 0.1

func pow10Ceil(x float64) float64 { return math.Pow(10, math.Ceil(math.Log10(x))) }

// overviewModel is the first plot: ttfc and ttft with their overheads, every key merged.
func overviewModel(hs *measure.Histograms) spectrumModel {
	m := spectrumModel{Name: PlotOverview, Title: "Time to first chunk and token, and the target's own part (overhead)", LogY: true, Compact: true}
	pn := plotPanel{Title: "every scenario and dialect"}
	for _, metric := range []measure.Metric{measure.FirstChunk, measure.FirstChunkOverhead, measure.TimeToFirstToken, measure.FirstTokenOverhead} {
		merged, _ := hs.Merged(func(k measure.Key) bool { return k.Metric == metric })
		if n := merged.TotalCount(); n > 0 {
			pn.Lines = append(pn.Lines, plotLine{Label: string(metric), Metric: metric, Samples: n, hist: merged})
		}
	}
	if len(pn.Lines) > 0 {
		m.Panels = []plotPanel{pn}
	} else {
		m.Empty = "no first chunk or token in this run"
	}
	return m
}
