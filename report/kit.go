package report

import (
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Table is one table, rendered as text, Markdown or HTML the way a run report's tables are.
type Table table

// WriteText writes t aligned in columns for a terminal.
func (t Table) WriteText(w io.Writer) error { return table(t).writeText(w) }

// WriteMarkdown writes t as a GitHub-flavoured table under a heading of the given level ("##");
// an empty table becomes a "None." line.
func (t Table) WriteMarkdown(w io.Writer, level string) { table(t).writeMarkdown(w, level) }

// IsRight reports whether column i is numeric (right-aligned), for an HTML template.
func (t Table) IsRight(i int) bool { return table(t).IsRight(i) }

// Figure draws itself on a canvas of Width × Height, written as Name.png and Name.svg.
type Figure struct {
	Name          string
	Width, Height vg.Length
	Draw          func(c draw.Canvas)
}

// FigureWidth is the width of every figure of a report.
const FigureWidth = figureWidth

// WriteFigures writes every figure as Name.png and Name.svg in dir and returns their PNGs.
func WriteFigures(dir string, figs []Figure, titles map[string]string) ([][]byte, error) {
	fs := make([]figure, len(figs))
	for i, f := range figs {
		fs[i] = figure{name: f.Name, width: f.Width, height: f.Height, draw: f.Draw}
	}
	plots, err := writeFigures(dir, fs, titles)
	if err != nil {
		return nil, err
	}
	pngs := make([][]byte, len(plots))
	for i, p := range plots {
		pngs[i] = p.PNG
	}
	return pngs, nil
}

// NewPlot is a plot in a report's style: its title, a grid, the legend top left.
func NewPlot(title string) *plot.Plot { return newPlot(title) }

// NoData marks an empty plot so a reader knows the absence is real, not a rendering failure.
func NoData(p *plot.Plot, what string) { noData(p, what) }

// LineStyle gives series i a distinct colour, and a dash pattern once colours repeat.
func LineStyle(l *plotter.Line, i int) { lineStyle(l, i) }

// PlainTicks are gonum's default ticks labelled in the shortest exact form ("7500", "0.25").
func PlainTicks(min, max float64) []plot.Tick { return plainTicks(min, max) }

// CountTicks label a count axis with whole numbers at a 1-2-5 step, with minor ticks between.
func CountTicks(min, max float64) []plot.Tick { return countTicks(min, max) }

// Ms formats microseconds as milliseconds with microsecond resolution ("1.250").
func Ms(us float64) string { return msf(us) }

// Pct formats a fraction as a percentage with three decimals ("0.100%").
func Pct(f float64) string { return pct(f) }

// Count formats a count.
func Count(v int64) string { return num(v) }

// MarkdownCell escapes s for a Markdown table cell or a line of Markdown text.
func MarkdownCell(s string) string { return mdCell(s) }
