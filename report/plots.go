package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/streambench/streambench/measure"
)

// Plot names (without extension); each is written as .png and .svg.
const (
	PlotOverview         = "latency"
	PlotTimeToFirstChunk = "ttfc"
	PlotChunkGap         = "chunk_gap"
	PlotCancel           = "cancel"
	PlotTimeline         = "timeline"
	PlotLatencyOverTime  = "latency_over_time"
	PlotViolations       = "violations"
)

// FigureWidth is every figure's width: 960 pixels at 96 dpi.
const FigureWidth = 10 * vg.Inch

// Figure draws itself on a canvas of Width × Height, written as Name.png and Name.svg.
type Figure struct {
	Name          string
	Width, Height vg.Length
	Draw          func(c draw.Canvas)
}

// encode renders f as "png" or "svg" (fonts named, not embedded, to keep files small).
func (f Figure) encode(format string) ([]byte, error) {
	var c vg.CanvasWriterTo
	if format == "svg" {
		c = vgsvg.NewWith(vgsvg.UseWH(f.Width, f.Height), vgsvg.EmbedFonts(false))
	} else {
		c = vgimg.PngCanvas{Canvas: vgimg.New(f.Width, f.Height)}
	}
	f.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot %s: %s: %w", f.Name, format, err)
	}
	return buf.Bytes(), nil
}

// plotTexts are each plot's title, and its caption in report.html saying how to read it.
var plotTexts = map[string]struct{ title, caption string }{
	PlotOverview: {"Time to first chunk and token, and the target's own part",
		"Every stream's time to first answer chunk (ttfc) and first token (ttft), and the same less what the script scheduled before that frame (overhead): the part the runtime, the network and the mock's serving added. x in nines: 90% means 9 in 10 streams were at or below."},
	PlotTimeToFirstChunk: {"Time to first answer chunk by dialect: percentile spectrum",
		"One panel per dialect; in each, the scenarios of worst p99 and the rest merged as other (a scenario has the same colour in every plot). x is the share of streams in nines (90% means 9 in 10 were at or below), y the time from the request to the first answer chunk. Flat and low is good; a line that shoots up at 99% is a tail."},
	PlotChunkGap: {"Gap between answer chunks by dialect: percentile spectrum",
		"Time between consecutive answer chunks of a stream, as a percentile spectrum: the right end is the worst stall a reader saw."},
	PlotCancel: {"Cancel and stop latency: percentile spectrum",
		"From the client closing a stream (or sending stop) to the provider seeing it go away (cancel), the runtime settling open tools (tool_cancel) or the stopped terminal (stop)."},
	PlotTimeline: {"Timeline",
		"Per second of the run: open streams and sessions started and completed; frames received; errors and protocol violations."},
	PlotLatencyOverTime: {"Time to first chunk over the run: p50, p95, p99 per window",
		"Time to first answer chunk per window of the run (the window's width on the x axis label), as p50, p95 and p99 of the sessions whose first chunk came in that window; with a second panel for the same less what the script scheduled (overhead), when the script said. A line that climbs is a target that slowed down as the run went on; the whole run's percentiles cannot show when. With load --engine-metrics, the panels below are the engine's own gauges on the same time axis (requests running and waiting, KV cache use), which say whether it queued."},
	PlotViolations: {"Protocol violations by rule",
		"Streams that broke each protocol rule (rule IDs as in docs/PROTOCOLS.md); the samples below show their frames."},
}

// WriteFigures writes every figure as Name.png and Name.svg in dir and returns their PNGs.
func WriteFigures(dir string, figs []Figure) ([][]byte, error) {
	var pngs [][]byte
	for _, f := range figs {
		png, err := f.encode("png")
		if err != nil {
			return nil, err
		}
		svg, err := f.encode("svg")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name+".png"), png, 0o644); err != nil {
			return nil, fmt.Errorf("write plot: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name+".svg"), svg, 0o644); err != nil {
			return nil, fmt.Errorf("write plot: %w", err)
		}
		pngs = append(pngs, png)
	}
	return pngs, nil
}

// runFigures builds every plot that has something to show; notes stand for the others.
func runFigures(r *measure.Run) (figs []Figure, notes []string) {
	hs := cmp.Or(r.Histograms, measure.NewHistograms())
	colors := colorsOf(hs)
	for _, m := range []spectrumModel{
		overviewModel(hs),
		spectrumModelOf(PlotTimeToFirstChunk, plotTexts[PlotTimeToFirstChunk].title, "no answer chunk in this run", hs, measure.FirstChunk),
		spectrumModelOf(PlotChunkGap, plotTexts[PlotChunkGap].title, "no gap between answer chunks in this run", hs, measure.ChunkGap),
		spectrumModelOf(PlotCancel, plotTexts[PlotCancel].title, "no cancels or stops in this run", hs, measure.CancelLatency, measure.ToolCancelSettle, measure.StopLatency),
	} {
		notes = append(notes, m.Notes...)
		if len(m.Panels) == 0 {
			if m.Empty != "" {
				notes = append(notes, m.Empty)
			}
			continue
		}
		figs = append(figs, drawSpectrum(m, colors))
	}
	if len(r.Timeline) > 0 {
		figs = append(figs, timelineFigure(plotTexts[PlotTimeline].title, r.Timeline))
	} else {
		notes = append(notes, "no timeline recorded in this run")
	}
	if f, ok := latencyOverTimeFigure(plotTexts[PlotLatencyOverTime].title, &r.Summary); ok {
		figs = append(figs, f)
	} else {
		notes = append(notes, "no latency over time in this run (no first chunk, a run merged from shards, or one recorded before it)")
	}
	if r.Summary.TotalViolations() > 0 {
		figs = append(figs, violationsFigure(plotTexts[PlotViolations].title, &r.Summary))
	} else {
		notes = append(notes, "no protocol violations in this run: every checked rule held")
	}
	return figs, notes
}

// ninesTicker labels the percentile axis at 1/(1−q) = 10^i as HdrHistogram's plotter does.
func ninesTicker(_, max float64) []plot.Tick {
	nines := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%"}
	return decadeTicks(1, max, func(i int, _ float64) string {
		if i < len(nines) {
			return nines[i]
		}
		return ""
	})
}

// decadeTicks puts a tick labelled label(i, v) at each power of ten v from first (the i-th)
// up to max, until a label is "", and minor ticks between.
func decadeTicks(first, max float64, label func(i int, v float64) string) []plot.Tick {
	var ticks []plot.Tick
	for i, v := 0, first; v <= max*1.0001; i, v = i+1, v*10 {
		l := label(i, v)
		if l == "" {
			break
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: l})
		for m := 2; m <= 9; m++ {
			if mv := v * float64(m); mv <= max {
				ticks = append(ticks, plot.Tick{Value: mv})
			}
		}
	}
	return ticks
}

// spectrumPoints samples a histogram's percentile spectrum: x = 1/(1−q), y in ms, ten points
// a decade as far as the sample count supports, then the maximum.
func spectrumPoints(h *hdrhistogram.Histogram) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	var pts plotter.XYs
	for i := 0; ; i++ {
		x := math.Pow(10, float64(i)/10)
		if x > float64(n) {
			break
		}
		q := 1 - 1/x
		pts = append(pts, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(q*100)) / 1000})
	}
	pts = append(pts, plotter.XY{X: math.Max(float64(n), 1), Y: float64(h.Max()) / 1000})
	return pts
}

// NewPlot is a plot in a report's style: its title, a grid, the legend top left.
func NewPlot(title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(14)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(24) // clear of the points at the left edge (0%, time 0)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	return p
}

// NoData marks an empty plot so a reader knows the absence is real, not a rendering failure.
func NoData(p *plot.Plot, what string) {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.5, Y: 0.5}}, Labels: []string{what}})
	if err == nil {
		l.TextStyle[0].Font.Size = vg.Points(14)
		l.TextStyle[0].XAlign = draw.XCenter
		p.Add(l)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.X.Tick.Marker = plot.ConstantTicks(nil)
	p.Y.Tick.Marker = plot.ConstantTicks(nil)
}

// LineStyle gives series i a distinct colour, and a dash pattern once colours repeat.
func LineStyle(l *plotter.Line, i int) {
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	l.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
}

// timelineFigure stacks three plots on one time axis: streams, frames, errors and violations.
func timelineFigure(title string, points []measure.TimelinePoint) Figure {
	series := func(get func(measure.TimelinePoint) int64) plotter.XYs {
		xy := make(plotter.XYs, len(points))
		for i, pt := range points {
			xy[i] = plotter.XY{X: float64(pt.Second), Y: float64(get(pt))}
		}
		return xy
	}
	type line struct {
		label string
		get   func(measure.TimelinePoint) int64
	}
	panel := func(title, yLabel string, lines ...line) *plot.Plot {
		p := NewPlot(title)
		p.Title.TextStyle.Font.Size = vg.Points(12)
		p.X.Label.Text = "time since start (s)"
		p.Y.Label.Text = yLabel
		for i, ln := range lines {
			l, err := plotter.NewLine(series(ln.get))
			if err != nil {
				continue
			}
			LineStyle(l, i)
			p.Add(l)
			p.Legend.Add(ln.label, l)
		}
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max, 1) // an all-zero series (no errors) still gets a 0..1 axis
		p.X.Min = 0
		p.X.Tick.Marker = plot.TickerFunc(CountTicks)
		p.Y.Tick.Marker = plot.TickerFunc(CountTicks)
		return p
	}
	return stacked(PlotTimeline, 2.4*vg.Inch,
		panel(title+": streams", "streams",
			line{"active streams", func(p measure.TimelinePoint) int64 { return p.Active }},
			line{"sessions started/s", func(p measure.TimelinePoint) int64 { return p.Started }},
			line{"sessions completed/s", func(p measure.TimelinePoint) int64 { return p.Completed }}),
		panel(title+": frames", "frames per second",
			line{"frames/s", func(p measure.TimelinePoint) int64 { return p.Frames }}),
		panel(title+": errors", "count per second",
			line{"errors/s", func(p measure.TimelinePoint) int64 { return p.Errors }},
			line{"violations/s", func(p measure.TimelinePoint) int64 { return p.Violations }}))
}

// stacked is a figure of rows, one above the other, each with its legend on its right.
func stacked(name string, rowHeight vg.Length, rows ...*plot.Plot) Figure {
	return Figure{Name: name, Width: FigureWidth, Height: rowHeight * vg.Length(len(rows)), Draw: func(c draw.Canvas) {
		for i, p := range rows {
			top := c.Max.Y - rowHeight*vg.Length(i)
			drawWithSideLegend(c, p, vg.Rectangle{Min: vg.Point{X: c.Min.X, Y: top - rowHeight}, Max: vg.Point{X: c.Max.X, Y: top}})
		}
	}}
}

// PlainTicks are gonum's default ticks labelled in the shortest exact form ("7500", "0.25").
func PlainTicks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			v := math.Round(ticks[i].Value*1e6) / 1e6
			ticks[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ticks
}

// CountTicks label a count axis with whole numbers at a 1-2-5 step, with minor ticks between.
func CountTicks(min, max float64) []plot.Tick {
	span := max - min
	if span <= 0 {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'f', -1, 64)}}
	}
	base := math.Pow(10, math.Floor(math.Log10(span/8)))
	step := base
	for _, mult := range []float64{1, 2, 5, 10} {
		if step = mult * base; span/step <= 8 {
			break
		}
	}
	if step < 1 && span >= 1 {
		step = 1
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max+step/1e9; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		for m := 1; m < 5; m++ {
			if mv := v + float64(m)*step/5; mv <= max {
				ticks = append(ticks, plot.Tick{Value: mv})
			}
		}
	}
	return ticks
}

// violationsFigure is a horizontal bar per broken rule, most frequent at the top, sized to the
// number of rules so bars stay readable.
func violationsFigure(title string, s *measure.Summary) Figure {
	p := NewPlot(title)
	p.X.Label.Text = "streams with the violation (count)"
	p.Y.Label.Text = "rule"
	var rules []string
	var counts plotter.Values
	sorted := s.RulesByCount()
	// Bars are drawn bottom-up: reverse so the most frequent rule is on top.
	for i := len(sorted) - 1; i >= 0; i-- {
		if n := s.Violations[sorted[i]]; n > 0 {
			rules = append(rules, string(sorted[i]))
			counts = append(counts, float64(n))
		}
	}
	height := max(3*vg.Inch, 1.5*vg.Inch+vg.Length(len(rules))*0.5*vg.Inch)
	fig := Figure{Name: PlotViolations, Width: FigureWidth, Height: height, Draw: p.Draw}
	bars, err := plotter.NewBarChart(counts, vg.Points(18))
	if err != nil {
		NoData(p, "cannot draw: "+err.Error())
		return fig
	}
	bars.Horizontal = true
	bars.Color = color.RGBA{R: 200, G: 40, B: 40, A: 255}
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.Legend.Add("streams with the violation", bars)
	p.Legend.Top, p.Legend.Left = false, false
	p.NominalY(rules...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(rules))-0.4
	p.X.Min = 0
	p.X.Tick.Marker = plot.TickerFunc(CountTicks)
	labels := make([]string, len(counts))
	xys := make(plotter.XYs, len(counts))
	for i, c := range counts {
		labels[i] = " " + strconv.FormatFloat(c, 'f', 0, 64)
		xys[i] = plotter.XY{X: c, Y: float64(i)}
	}
	if l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels}); err == nil {
		for i := range l.TextStyle {
			l.TextStyle[i].YAlign = draw.YCenter
		}
		p.Add(l)
	}
	p.X.Max = slices.Max(counts) * 1.3
	return fig
}

// latencyOverTimeFigure stacks a panel of percentiles per window for ttfc and its overhead.
func latencyOverTimeFigure(title string, s *measure.Summary) (f Figure, ok bool) {
	var rows []*plot.Plot
	for _, m := range []measure.Metric{measure.FirstChunk, measure.FirstChunkOverhead} {
		ls, found := s.LatencyOverTime(m)
		if !found || len(ls.Windows) == 0 {
			continue
		}
		p := NewPlot(fmt.Sprintf("%s: %s", title, m))
		p.Title.TextStyle.Font.Size = vg.Points(12)
		p.X.Label.Text = fmt.Sprintf("time since start (s), windows of %s", time.Duration(ls.WindowMs)*time.Millisecond)
		p.Y.Label.Text = "ms"
		for i, q := range []struct {
			label string
			get   func(measure.LatencyWindow) int64
		}{
			{"p50", func(w measure.LatencyWindow) int64 { return w.P50 }},
			{"p95", func(w measure.LatencyWindow) int64 { return w.P95 }},
			{"p99", func(w measure.LatencyWindow) int64 { return w.P99 }},
		} {
			xy := make(plotter.XYs, len(ls.Windows))
			for j, w := range ls.Windows {
				xy[j] = plotter.XY{X: float64(w.StartMs+ls.WindowMs/2) / 1000, Y: float64(q.get(w)) / 1000}
			}
			l, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				continue
			}
			LineStyle(l, i)
			pts.Color = l.Color
			p.Add(l, pts)
			p.Legend.Add(q.label, l, pts)
		}
		p.X.Min, p.Y.Min = 0, 0
		p.X.Tick.Marker = plot.TickerFunc(CountTicks)
		rows = append(rows, p)
	}
	if len(rows) > 0 { // beside ttfc, or not at all (a merged run: the table has the gauges)
		rows = append(rows, enginePanels(s.Engine)...)
	}
	var end float64 // one time axis for every panel
	for _, p := range rows {
		end = max(end, p.X.Max)
	}
	for _, p := range rows {
		p.X.Max = end
	}
	return stacked(PlotLatencyOverTime, 3*vg.Inch, rows...), len(rows) > 0
}
