package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/streambench/streambench/measure"
)

// manyKeys records ttfc for 15 scenarios on each of three dialects, with counts from 3 to 300
// (some under minLineSamples), and cancel latency for a single key of one sample.
func manyKeys(t *testing.T) *measure.Histograms {
	t.Helper()
	hs := measure.NewHistograms()
	for d, dialect := range []string{"compose", "sim-canvas", "sim-chat-optedin"} {
		for s := range 15 {
			k := measure.Key{Metric: measure.FirstChunk, Scenario: fmt.Sprintf("scenario-%02d", s), Dialect: dialect}
			n := 3 + (s*37+d*11)%300
			for i := range n {
				if err := hs.Record(k, time.Duration(50+s*10+i%40)*time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// A dialect whose every key has too few samples for a line, even merged.
	for s := range 3 {
		if err := hs.Record(measure.Key{Metric: measure.FirstChunk, Scenario: fmt.Sprintf("scenario-%02d", s), Dialect: "sim-chat-legacy"}, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	return hs
}

// TestSpectrumModelPanels: every panel holds at most maxPanelLines lines and at least one;
// no line of its own has fewer than minLineSamples samples; the lines of a panel are its
// scenarios of worst p99, then "other" with every other key, so no sample is lost; a dialect
// with too few samples gets no panel but a note saying so.
func TestSpectrumModelPanels(t *testing.T) {
	t.Parallel()
	hs := manyKeys(t)
	m := spectrumModelOf(PlotTimeToFirstChunk, "ttfc", "no answer chunk in this run", hs, measure.FirstChunk)
	if len(m.Panels) != 3 || m.Empty != "" {
		t.Fatalf("%d panels (empty %q), want one per dialect with enough samples: 3", len(m.Panels), m.Empty)
	}
	for _, pn := range m.Panels {
		if n := len(pn.Lines); n == 0 || n > maxPanelLines {
			t.Errorf("panel %s has %d lines, want 1..%d", pn.Title, n, maxPanelLines)
		}
		var drawn int64
		var lastP99 int64 = 1 << 62
		for _, ln := range pn.Lines {
			drawn += ln.Samples
			if ln.Samples < minLineSamples {
				t.Errorf("panel %s: line %s of %d samples (under %d) is drawn", pn.Title, ln.Label, ln.Samples, minLineSamples)
			}
			if ln.Scenario == "" {
				continue // other
			}
			if p99 := ln.hist.ValueAtQuantile(99); p99 > lastP99 {
				t.Errorf("panel %s: %s (p99 %d) after a better key: want worst p99 first", pn.Title, ln.Label, p99)
			} else {
				lastP99 = p99
			}
		}
		all, _ := hs.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk && k.Dialect == pn.Title })
		if pn.Left == "" && drawn != all.TotalCount() {
			t.Errorf("panel %s draws %d samples, its dialect has %d", pn.Title, drawn, all.TotalCount())
		}
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "sim-chat-legacy") {
		t.Errorf("notes %q: want one saying sim-chat-legacy has no panel", m.Notes)
	}
}

// TestSpectrumModelNothingToShow: a plot of metrics the run never recorded has no panel, and
// says what is absent instead of drawing an empty one.
func TestSpectrumModelNothingToShow(t *testing.T) {
	t.Parallel()
	m := spectrumModelOf(PlotCancel, "cancel", "no cancels or stops in this run", manyKeys(t), measure.CancelLatency, measure.StopLatency)
	if len(m.Panels) != 0 || m.Empty != "no cancels or stops in this run" {
		t.Errorf("panels %d, empty %q: want none, and the sentence", len(m.Panels), m.Empty)
	}
	figs, notes := runFigures(&measure.Run{Histograms: manyKeys(t)})
	for _, f := range figs {
		if f.Name == PlotCancel || f.Name == PlotViolations || f.Name == PlotTimeline {
			t.Errorf("figure %s drawn with nothing to show", f.Name)
		}
	}
	for _, want := range []string{"no cancels or stops in this run", "no protocol violations in this run: every checked rule held", "no timeline recorded in this run"} {
		if !strings.Contains(strings.Join(notes, "\n"), want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// TestScenarioColorsAreConsistent: a scenario has one colour in every panel and plot of a run,
// and "other" is always grey.
func TestScenarioColorsAreConsistent(t *testing.T) {
	t.Parallel()
	hs := manyKeys(t)
	colors := colorsOf(hs)
	seen := map[string]string{}
	for _, m := range []spectrumModel{
		spectrumModelOf(PlotTimeToFirstChunk, "ttfc", "", hs, measure.FirstChunk),
		spectrumModelOf(PlotTimeToFirstChunk, "ttfc by metric", "", hs, measure.FirstChunk, measure.CancelLatency),
	} {
		for _, pn := range m.Panels {
			for _, ln := range pn.Lines {
				l := &plotter.Line{}
				colors.style(l, ln)
				got := fmt.Sprint(l.Color, l.Dashes)
				if ln.Scenario == "" {
					if l.Color != otherColor {
						t.Errorf("other line %s is %v, want grey", ln.Label, l.Color)
					}
					continue
				}
				if prev, ok := seen[ln.Scenario]; ok && prev != got {
					t.Errorf("scenario %s drawn %s and %s", ln.Scenario, prev, got)
				}
				seen[ln.Scenario] = got
			}
		}
	}
	if len(seen) < 5 {
		t.Errorf("only %d scenarios drawn: the test compares too little", len(seen))
	}
}

// TestSpectrumModelTooFewToShow: 12 cancels measured over keys too small for a line are said to
// be too few, never "no cancels" (a report once said so beside 12 measured cancels).
func TestSpectrumModelTooFewToShow(t *testing.T) {
	t.Parallel()
	hs := measure.NewHistograms()
	for i := range 12 {
		k := measure.Key{Metric: measure.CancelLatency, Scenario: fmt.Sprintf("abort-%d", i%3), Dialect: "sim-chat"}
		if err := hs.Record(k, time.Duration(10+i)*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	m := spectrumModelOf(PlotCancel, "cancel", "no cancels or stops in this run", hs, measure.CancelLatency, measure.StopLatency)
	if len(m.Panels) != 0 || !strings.HasPrefix(m.Empty, "12 values measured (cancel, stop), too few for a line") {
		t.Errorf("panels %d, empty %q: want none, saying 12 were measured", len(m.Panels), m.Empty)
	}
}
