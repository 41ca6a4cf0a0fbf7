package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/streambench/streambench/measure"
)

// PlotCompare names compare --plot's figure.
const PlotCompare = "compare"

// CompareFigure draws runs a and b side by side: the percentile spectra of ttft, ttfc, the
// chunk gap and e2e over every key, A's and B's in each panel.
func CompareFigure(a, b *measure.Run) (Figure, error) {
	m := spectrumModel{Name: PlotCompare, Title: fmt.Sprintf("A %s against B %s: percentile spectra over every key", a.Summary.RunID, b.Summary.RunID)}
	for _, metric := range []measure.Metric{measure.TimeToFirstToken, measure.FirstChunk, measure.ChunkGap, measure.StreamDuration} {
		pn := plotPanel{Title: string(metric)}
		for i, r := range []*measure.Run{a, b} {
			if r.Histograms == nil {
				continue
			}
			h, _ := r.Histograms.Merged(func(k measure.Key) bool { return k.Metric == metric })
			if h.TotalCount() > 0 {
				pn.Lines = append(pn.Lines, plotLine{Label: "AB"[i : i+1], Scenario: "AB"[i : i+1], Samples: h.TotalCount(), hist: h})
			}
		}
		if len(pn.Lines) > 0 {
			m.Panels = append(m.Panels, pn)
		}
	}
	if len(m.Panels) == 0 {
		return Figure{}, errors.New("neither run recorded ttft, ttfc, chunk_gap or e2e: nothing to plot")
	}
	return drawSpectrum(m, scenarioColors{"A": 0, "B": 1}), nil
}

// CompareRepeatsFigure draws two sets of repeated runs side by side: each headline figure's
// runs as a share of A's median (1 is A's median), A's left of B's.
func CompareRepeatsFigure(a, b measure.Repeats) Figure {
	p := NewPlot(fmt.Sprintf("A (%s) against B (%s): each run's figure over A's median", count(len(a.Runs), "run"), count(len(b.Runs), "run")))
	p.Y.Label.Text = "share of A's median"
	var ticks []plot.Tick
	for i, side := range []measure.Repeats{a, b} {
		var xy plotter.XYs
		for j, fa := range a.Figures {
			if i == 0 {
				ticks = append(ticks, plot.Tick{Value: float64(j), Label: fa.Figure})
			}
			for _, f := range side.Figures {
				if f.Figure != fa.Figure || fa.Median == 0 {
					continue
				}
				for _, v := range f.Values {
					xy = append(xy, plotter.XY{X: float64(j) - 0.15 + 0.3*float64(i), Y: v / fa.Median})
				}
			}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			continue
		}
		s.GlyphStyle.Color = palette[i]
		s.GlyphStyle.Radius = vg.Points(3.5)
		s.GlyphStyle.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}}[i]
		p.Add(s)
		p.Legend.Add("AB"[i:i+1], s)
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(a.Figures))-0.5
	p.Y.Min = 0
	return stacked(PlotCompare, 4*vg.Inch, p)
}

// WriteFile writes f to path as PNG or SVG, by path's extension.
func (f Figure) WriteFile(path string) error {
	format := map[string]string{".png": "png", ".svg": "svg"}[strings.ToLower(filepath.Ext(path))]
	if format == "" {
		return fmt.Errorf("%s: want a .png or .svg file", path)
	}
	b, err := f.encode(format)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
