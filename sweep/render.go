package sweep

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/verdict"
)

// Headline says in one sentence what the sweep found.
func (r *Result) Headline() string {
	h := r.headline()
	if rs := r.RateSweep; rs != nil {
		rates := make([]string, len(rs.Rates))
		for i, x := range rs.Rates {
			rates[i] = strconv.FormatFloat(x, 'f', -1, 64)
		}
		h = fmt.Sprintf("rate sweep: synchronous %.3g requests/s, throughput (%d clients) %.3g requests/s, open-loop rates between: %s/s; %s",
			rs.SynchronousRate, rs.ThroughputClients, rs.ThroughputRate, cmp.Or(strings.Join(rates, ", "), "none"), h)
	}
	return h
}

func (r *Result) headline() string {
	var b strings.Builder
	switch {
	case len(r.Steps) == 0:
		return "no step ran"
	case len(r.SLOs) == 0:
		return r.headlineWithoutSLO()
	case r.Knee < 0:
		fmt.Fprintf(&b, "no knee: the lowest step, %s, already misses an SLO", r.Steps[0].Step)
	case r.BrokenAt < 0:
		fmt.Fprintf(&b, "every step met every SLO: the knee is above %s (the highest step tried)", r.Steps[r.Knee].Step)
	default:
		fmt.Fprintf(&b, "knee: %s, the highest load meeting every SLO", r.Steps[r.Knee].Step)
	}
	if r.BrokenAt >= 0 {
		fmt.Fprintf(&b, "; at %s %s broke first", r.Steps[r.BrokenAt].Step, r.Broken[0])
		if len(r.Broken) > 1 {
			fmt.Fprintf(&b, " (also missed there: %s)", strings.Join(r.Broken[1:], ", "))
		}
	}
	if len(r.PassedAgain) > 0 {
		var names []string
		for _, i := range r.PassedAgain {
			names = append(names, r.Steps[i].Step.String())
		}
		fmt.Fprintf(&b, " (warning: %s met every SLO again above that: noisy, repeat the sweep)", strings.Join(names, ", "))
	}
	if len(r.OnOverhead) > 0 {
		fmt.Fprintf(&b, "; %s judged on the overhead (the target's own part, the script's delays taken out; an SLO on ttfc.measured or ttft.measured judges the latency as measured)",
			strings.Join(r.OnOverhead, ", "))
	}
	return b.String()
}

// headlineWithoutSLO says where request throughput peaked and what failed first.
func (r *Result) headlineWithoutSLO() string {
	var b strings.Builder
	b.WriteString("no SLO given, so no knee (--slo adds one)")
	peak := -1
	for i, st := range r.Steps {
		if !math.IsNaN(st.RequestsPerSecond) && (peak < 0 || st.RequestsPerSecond > r.Steps[peak].RequestsPerSecond) {
			peak = i
		}
	}
	if peak >= 0 {
		st := r.Steps[peak]
		fmt.Fprintf(&b, "; peak request throughput %s requests/s at %s", floatOrNA(st.RequestsPerSecond), st.Step)
		if !math.IsNaN(st.TokensPerSecond) {
			fmt.Fprintf(&b, " (%s output tokens/s)", floatOrNA(st.TokensPerSecond))
		}
	}
	if r.BrokenAt >= 0 {
		fmt.Fprintf(&b, "; %s failed first", r.Steps[r.BrokenAt].Step)
		if len(r.Broken) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(r.Broken, ", "))
		}
	}
	return b.String()
}

// table is the sweep's per-step throughput, goodput, errors, SLO checks and verdict.
func (r *Result) table() report.Table {
	t := report.Table{Header: []string{"step", "run", "sessions", "requests/s", "output tokens/s", "goodput", "goodput/s", "errors", "failed"},
		Right: []bool{false, false, true, true, true, true, true, true, true}}
	for _, s := range r.SLOs {
		t.Header = append(t.Header, s+report.BoolText(slices.Contains(r.OnOverhead, s), " (on its overhead)", ""))
		t.Right = append(t.Right, true)
	}
	t.Header = append(t.Header, "verdict")
	for i, st := range r.Steps {
		tokens := floatOrNA(st.TokensPerSecond)
		if st.TokensEstimated {
			tokens += " (estimated)"
		}
		row := []string{st.Step.String(), st.RunID, report.Count(st.Sessions), floatOrNA(st.RequestsPerSecond), tokens,
			pctOrNA(st.GoodputShare), floatOrNA(st.GoodputPerSecond), measure.Pct(st.ErrorRate), measure.Pct(st.FailedRate)}
		for _, c := range st.Checks {
			row = append(row, c.Value+report.BoolText(c.Pass, "", " ✗"))
		}
		verdict := report.BoolText(st.Pass, "meets SLOs", "misses SLO")
		if len(r.SLOs) == 0 {
			verdict = report.BoolText(st.Pass, "pass", "fail")
		}
		if i == r.Knee {
			verdict += " (knee)"
		}
		t.Rows = append(t.Rows, append(row, verdict))
	}
	return t
}

// latencyTable is a row of percentiles per step and metric it recorded.
func (r *Result) latencyTable() report.Table {
	t := report.Table{Title: "Latency per step (ms)", Header: []string{"step", "metric", "p50", "p90", "p95", "p99"},
		Right: []bool{false, false, true, true, true, true}}
	for _, st := range r.Steps {
		for _, m := range LatencyMetrics {
			p, ok := st.Latency[m]
			if !ok {
				continue
			}
			label := report.BoolText(m == measure.StreamDuration, "e2e (duration)", string(m))
			t.Rows = append(t.Rows, []string{st.Step.String(), label, measure.Ms(p.P50), measure.Ms(p.P90), measure.Ms(p.P95), measure.Ms(p.P99)})
		}
	}
	return t
}

func floatOrNA(v float64) string {
	return report.BoolText(math.IsNaN(v), "n/a", strconv.FormatFloat(v, 'f', 1, 64))
}

func pctOrNA(v float64) string { return report.BoolText(math.IsNaN(v), "n/a", measure.Pct(v)) }

// WriteText prints the sweep table, the latency table and the headline for a terminal.
func (r *Result) WriteText(w io.Writer) error {
	if err := r.table().WriteText(w); err != nil {
		return err
	}
	if lt := r.latencyTable(); len(lt.Rows) > 0 {
		fmt.Fprintln(w)
		if err := lt.WriteText(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Headline())
	return err
}

// Sweep output file names.
const (
	MarkdownFile = "sweep.md"
	HTMLFile     = "sweep.html"
	JSONFile     = "sweep.json"
	Plot         = "sweep"
	PlotLatency  = "sweep-latency" // TTFT and ITL against request throughput, as vllm and GuideLLM
)

// WriteMarkdown writes the sweep report as GitHub-flavoured Markdown.
func (r *Result) WriteMarkdown(w io.Writer) {
	fmt.Fprint(w, "# streambench capacity sweep\n\n")
	fmt.Fprintf(w, "**%s.**\n\n", report.MarkdownCell(capitalize(r.Headline())))
	fmt.Fprintf(w, "SLOs: %s\n\n", report.MarkdownCell(cmp.Or(strings.Join(r.SLOs, ", "), "none")))
	r.table().WriteMarkdown(w, "")
	r.latencyTable().WriteMarkdown(w, "##")
	fmt.Fprintf(w, "Plots: [%s.png](%s.png) ([SVG](%s.svg)), latency and failures against load; [%s.png](%s.png) ([SVG](%s.svg)), "+
		"TTFT and ITL percentiles against request throughput. Each step's full report is in its run directory.\n",
		Plot, Plot, Plot, PlotLatency, PlotLatency, PlotLatency)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Write saves sweep.json, sweep.md, sweep.html and the sweep plot (PNG, SVG) in dir.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write sweep: %w", err)
	}
	plots, err := report.WriteFigures(dir, []report.Figure{r.figure(), r.latencyFigure()})
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(r.jsonSafe(), "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", JSONFile, err)
	}
	var md, html bytes.Buffer
	r.WriteMarkdown(&md)
	if err := sweepTemplate.Execute(&html, map[string]any{
		"Headline":    capitalize(r.Headline()),
		"SLOs":        cmp.Or(strings.Join(r.SLOs, ", "), "none"),
		"Table":       r.table(),
		"Latency":     r.latencyTable(),
		"Plot":        template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(plots[0])),
		"LatencyPlot": template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(plots[1])),
	}); err != nil {
		return fmt.Errorf("render %s: %w", HTMLFile, err)
	}
	for _, f := range [][2]string{{JSONFile, string(data) + "\n"}, {MarkdownFile, md.String()}, {HTMLFile, html.String()}} {
		if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0o644); err != nil {
			return fmt.Errorf("write sweep: %w", err)
		}
	}
	return nil
}

// jsonSafe replaces NaN (which JSON cannot carry) with -1 in a copy of r.
func (r *Result) jsonSafe() *Result {
	c := *r
	c.Steps = slices.Clone(r.Steps)
	fix := func(v *float64) {
		if math.IsNaN(*v) {
			*v = -1
		}
	}
	for i := range c.Steps {
		s := &c.Steps[i]
		for _, v := range []*float64{&s.TTFCP50, &s.TTFCP99, &s.TTFTP99, &s.TPOTP50, &s.TokensPerSecond, &s.RequestsPerSecond,
			&s.TTFTP50, &s.TTFTP95, &s.ITLP50, &s.ITLP95, &s.GoodputShare, &s.GoodputPerSecond} {
			fix(v)
		}
		s.Checks = slices.Clone(s.Checks)
		for j := range s.Checks {
			fix(&s.Checks[j].Measured)
		}
	}
	return &c
}

var sweepTemplate = template.Must(template.New("sweep").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>streambench capacity sweep</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; border: 1px solid #eee; }
.headline { font-size: 1.15em; font-weight: bold; }
</style>
</head>
<body>
<h1>streambench capacity sweep</h1>
<p class="headline">{{.Headline}}.</p>
<p>SLOs: {{.SLOs}}</p>
<figure><img src="{{.Plot}}" alt="Time to first chunk and error rate against load"></figure>
{{template "table" .Table}}
<h2>{{.Latency.Title}}</h2>
<figure><img src="{{.LatencyPlot}}" alt="TTFT and ITL percentiles against request throughput"></figure>
{{with .Latency}}{{if .Rows}}{{template "table" .}}{{else}}<p>No latency was recorded.</p>{{end}}{{end}}
</body>
</html>
{{define "table"}}<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $.IsRight $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>{{end}}`))

// figure plots ttfc and the failures against load, with the SLOs' limits and the knee.
func (r *Result) figure() report.Figure {
	openLoop := len(r.Steps) > 0 && r.Steps[0].Step.Rate > 0
	loadLabel := report.BoolText(openLoop, "sessions per second (open loop)", "virtual users (closed loop)")
	if r.RateSweep != nil {
		loadLabel = "sessions per second (synchronous and throughput: measured)"
	}
	xy := func(get func(StepResult) float64) plotter.XYs {
		var pts plotter.XYs
		for _, s := range r.Steps {
			x := s.load()
			if v := get(s); !math.IsNaN(v) && !math.IsNaN(x) {
				pts = append(pts, plotter.XY{X: x, Y: v})
			}
		}
		return pts
	}
	latency := newPlot("Capacity sweep: latency against load", loadLabel, "latency (ms)")
	errs := newPlot("Capacity sweep: failures against load", loadLabel, "% of sessions started")
	series := 0
	addLine := func(p *plot.Plot, label string, pts plotter.XYs) {
		if addLinePoints(p, label, pts, series) {
			series++
		}
	}
	addLine(latency, "ttfc p50 (all scenarios)", xy(func(s StepResult) float64 { return s.TTFCP50 / 1000 }))
	addLine(latency, "ttfc p99 (all scenarios)", xy(func(s StepResult) float64 { return s.TTFCP99 / 1000 }))
	addLine(errs, "errors (HTTP, transport, decode)", xy(func(s StepResult) float64 { return s.ErrorRate * 100 }))
	addLine(errs, "failed sessions (errors or violations)", xy(func(s StepResult) float64 { return s.FailedRate * 100 }))
	if len(r.Steps) == 0 {
		report.NoData(latency, "no step ran")
		report.NoData(errs, "no step ran")
	}
	minX, maxX := 0.0, 1.0
	if len(r.Steps) > 0 {
		minX, maxX = r.Steps[0].load(), r.Steps[len(r.Steps)-1].load()
	}
	hline := func(p *plot.Plot, label string, y float64) {
		l, err := plotter.NewLine(plotter.XYs{{X: minX, Y: y}, {X: maxX, Y: y}})
		if err != nil {
			return
		}
		l.Color = color.Black
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("SLO "+label, l)
	}
	// Each SLO's limit, and a latency SLO's value when not drawn above.
	for j, expr := range r.SLOs {
		t, err := verdict.ParseThreshold(expr)
		if err != nil {
			continue
		}
		switch {
		case t.Selector.IsLatency():
			sel, onOverhead := t.Selector.String(), slices.Contains(r.OnOverhead, expr)
			if onOverhead || (sel != "ttfc.p50" && sel != "ttfc.p99") {
				label := sel
				if onOverhead {
					label = strings.Replace(sel, t.Selector.Name, t.Selector.Name+".overhead", 1) + " (judged)"
				}
				addLine(latency, label, xy(func(s StepResult) float64 {
					if j < len(s.Checks) {
						return s.Checks[j].Measured / 1000
					}
					return math.NaN()
				}))
			}
			hline(latency, expr+report.BoolText(onOverhead, " (on its overhead)", ""), t.Limit/1000)
		case t.Selector.CountsSessions():
			if t.Percent {
				hline(errs, expr, t.Limit*100)
			}
		}
	}
	for _, p := range []*plot.Plot{latency, errs} {
		if r.Knee >= 0 {
			p.Add(kneeMarker{x: r.Steps[r.Knee].load(), label: "knee: " + r.Steps[r.Knee].Step.String()})
		}
		p.Y.Min = 0
		p.Y.Max = math.Max(p.Y.Max*1.25, 0.1) // headroom for the legend above the lines
		p.X.Tick.Marker = plot.TickerFunc(report.CountTicks)
		p.Y.Tick.Marker = plot.TickerFunc(report.PlainTicks)
	}
	return twoRows(Plot, latency, errs)
}

// twoRows is a figure of top above bottom, their axes aligned.
func twoRows(name string, top, bottom *plot.Plot) report.Figure {
	rows := [][]*plot.Plot{{top}, {bottom}}
	return report.Figure{Name: name, Width: report.FigureWidth, Height: 9 * vg.Inch, Draw: func(c draw.Canvas) {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(6), PadBottom: vg.Points(6),
			PadLeft: vg.Points(6), PadRight: vg.Points(12), PadY: vg.Points(16)}
		canvases := plot.Align(rows, tiles, c)
		for i := range rows {
			rows[i][0].Draw(canvases[i][0])
		}
	}}
}

var (
	_ plot.Plotter    = kneeMarker{}
	_ plot.DataRanger = kneeMarker{}
)

// kneeMarker draws a vertical line across the data area at x, labelled.
type kneeMarker struct {
	x     float64
	label string
}

// Plot implements plot.Plotter.
func (k kneeMarker) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x := trX(k.x)
	c.StrokeLine2(draw.LineStyle{Color: color.RGBA{G: 110, B: 40, A: 255}, Width: vg.Points(2),
		Dashes: []vg.Length{vg.Points(2), vg.Points(2)}}, x, c.Min.Y, x, c.Max.Y)
	sty := draw.TextStyle{Color: color.RGBA{G: 110, B: 40, A: 255}, Font: p.Legend.TextStyle.Font,
		Handler: p.Legend.TextStyle.Handler, XAlign: draw.XLeft, YAlign: draw.YTop}
	// Mid-height: the legend owns the top-left corner and the curves hug the bottom below the knee.
	c.FillText(sty, vg.Point{X: x + vg.Points(4), Y: (c.Min.Y + c.Max.Y) / 2}, k.label)
}

// DataRange implements plot.DataRanger so the knee is always inside the axis.
func (k kneeMarker) DataRange() (xmin, xmax, ymin, ymax float64) {
	return k.x, k.x, math.Inf(1), math.Inf(-1)
}

// latencyFigure plots TTFT and ITL percentiles against request throughput, a point per step
// joined in step order (a saturated server's line turns left), the p50s labelled.
func (r *Result) latencyFigure() report.Figure {
	var panels []*plot.Plot
	for _, m := range []measure.Metric{measure.TimeToFirstToken, measure.InterTokenLatency} {
		p := newPlot(fmt.Sprintf("%s percentiles against request throughput", strings.ToUpper(string(m))),
			"request throughput (completed requests per second)", string(m)+" (ms)")
		drawn := false
		for i, stat := range []string{"p50", "p90", "p95", "p99"} {
			var pts plotter.XYs
			var labels []string
			for _, st := range r.Steps {
				q, ok := st.Latency[m]
				if !ok || math.IsNaN(st.RequestsPerSecond) {
					continue
				}
				pts = append(pts, plotter.XY{X: st.RequestsPerSecond, Y: q.values()[i] / 1000})
				labels = append(labels, st.Step.String())
			}
			if !addLinePoints(p, string(m)+" "+stat, pts, i) {
				continue
			}
			if i == 0 {
				if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: labels}); err == nil {
					for j := range lb.TextStyle {
						lb.TextStyle[j].Font.Size = vg.Points(8)
						lb.TextStyle[j].YAlign = draw.YTop
					}
					lb.Offset = vg.Point{X: vg.Points(4), Y: -vg.Points(4)}
					p.Add(lb)
				}
			}
			drawn = true
		}
		if !drawn {
			report.NoData(p, "no step recorded "+string(m)+" and request throughput")
		} else {
			p.X.Min, p.Y.Min = 0, 0
			p.Y.Max = math.Max(p.Y.Max*1.25, 0.1) // headroom for the legend above the lines
			p.X.Max = math.Max(p.X.Max*1.1, 0.1)  // room for the step labels
			p.X.Tick.Marker = plot.TickerFunc(report.PlainTicks)
			p.Y.Tick.Marker = plot.TickerFunc(report.PlainTicks)
		}
		panels = append(panels, p)
	}
	return twoRows(PlotLatency, panels[0], panels[1])
}

// newPlot is a plot in the kit's style with its axes' labels.
func newPlot(title, x, y string) *plot.Plot {
	p := report.NewPlot(title)
	p.X.Label.Text, p.Y.Label.Text = x, y
	return p
}

// addLinePoints draws pts as a line with circles in style i; false when there is nothing.
func addLinePoints(p *plot.Plot, label string, pts plotter.XYs, i int) bool {
	if len(pts) == 0 {
		return false
	}
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return false
	}
	report.LineStyle(l, i)
	s.Color, s.Shape, s.Radius = l.Color, draw.CircleGlyph{}, vg.Points(3)
	p.Add(l, s)
	p.Legend.Add(label, l, s)
	return true
}
