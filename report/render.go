package report

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/measure"
)

// Output file names written by Render (plots are listed by the Plot* constants).
const (
	HTMLFile     = "report.html"
	MarkdownFile = "report.md"
)

// Render reads the run saved in dir and writes there its plots, report.html and report.md.
func Render(dir string) error {
	r, err := measure.ReadRun(dir)
	if err != nil {
		return err
	}
	return RenderRun(dir, r)
}

// RenderRun writes r's plots, report.html and report.md into dir.
func RenderRun(dir string, r *measure.Run) error {
	figs, notes := runFigures(r)
	pngs, err := WriteFigures(dir, figs)
	if err != nil {
		return err
	}
	if err := removeUndrawn(dir, figs); err != nil {
		return err
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), md.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", MarkdownFile, err)
	}
	var html bytes.Buffer
	if err := writeHTML(&html, r, figs, pngs, notes); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, HTMLFile), html.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	return nil
}

// removeUndrawn deletes the files of plots this rendering did not draw, so none is stale.
func removeUndrawn(dir string, drawn []Figure) error {
	for _, name := range []string{PlotOverview, PlotTimeToFirstChunk, PlotChunkGap, PlotCancel, PlotTimeline, PlotLatencyOverTime, PlotViolations} {
		if slices.ContainsFunc(drawn, func(f Figure) bool { return f.Name == name }) {
			continue
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := os.Remove(filepath.Join(dir, name+ext)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove stale plot: %w", err)
			}
		}
	}
	return nil
}

// WriteMarkdown writes the run's report as GitHub-flavoured Markdown.
func WriteMarkdown(w io.Writer, r *measure.Run) {
	s := &r.Summary
	fmt.Fprintf(w, "# streambench run %s\n\n", MarkdownCell(s.RunID))
	if b := IncompleteBanner(s); b != "" {
		fmt.Fprintf(w, "> **%s**\n\n", MarkdownCell(b))
	}
	_ = NewHeadline(r).write(w, markdownStyle) // Markdown writes no error of its own
	for _, t := range runTables(r, []Table{runTable(s)}, samplesTable(r.Samples)) {
		t.WriteMarkdown(w, "##")
	}
	fmt.Fprint(w, "## Plots\n\n")
	figs, notes := runFigures(r)
	for _, f := range figs {
		fmt.Fprintf(w, "- [%s](%s.png) ([SVG](%s.svg))\n", plotTexts[f.Name].title, f.Name, f.Name)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "- %s\n", MarkdownCell(n))
	}
}

// IncompleteBanner is the line a report of an incomplete run opens with ("" for a finished run).
func IncompleteBanner(s *measure.Summary) string {
	if !s.Incomplete {
		return ""
	}
	return fmt.Sprintf("INCOMPLETE: the run was killed before it finished (or is still running); figures cover up to %s UTC, %s into the run",
		s.Ended.UTC().Format(time.TimeOnly), s.Ended.Sub(s.Started).Round(time.Second))
}

type htmlPlot struct {
	Title   string
	Caption string
	Name    string
	Src     template.URL
}

type htmlData struct {
	Summary    *measure.Summary
	Incomplete string // IncompleteBanner's line
	Headline   Headline
	Run        Table
	FirstPlot  *htmlPlot // the overview, in the headline (nil: none)
	Plots      []htmlPlot
	PlotNotes  []string // what a plot with nothing to show would have shown
	Tables     []Table
	Samples    []measure.ViolationSample
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"frames": reportFrames,
	"clip":   func(s string) string { return measure.Clip(s, maxReportDetailBytes) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>streambench run {{.Summary.RunID}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1em auto; max-width: 1300px; color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.verdict { padding: .6em 1em; border-radius: 4px; font-weight: bold; }
.PASS { background: #e3f6e3; color: #135e13; } .FAIL { background: #fbe4e4; color: #8a1212; }
.INCOMPLETE { background: #fff1c2; color: #6b4b00; border: 2px solid #d9a400; }
table { border-collapse: collapse; margin: .5em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
img { max-width: 100%; border: 1px solid #eee; }
figure { margin: 1em 0; } figcaption { font-size: .9em; color: #555; }
details { margin: .4em 0; } summary { cursor: pointer; }
.headline ul.figures { list-style: none; padding-left: 0; } .headline ul.figures li { margin: .2em 0; }
.headline .top { display: flex; flex-wrap: wrap; gap: 0 2em; align-items: flex-start; } .headline .top > div { flex: 0 1 auto; }
figure.first { flex: 1 1 560px; max-width: 640px; margin: 0; } .warning { font-size: .85em; margin: .3em 0; color: #6b4b00; } h1 { margin: .2em 0 .4em; } h3 { font-size: 1.05em; margin: .8em 0 .3em; }
pre { background: #f7f7f7; padding: .6em; overflow-x: auto; font-size: .85em; white-space: pre-wrap; word-break: break-all; }
</style>
</head>
<body>
<h1>streambench run {{.Summary.RunID}}</h1>
{{with .Incomplete}}<p class="verdict INCOMPLETE">{{.}}</p>
{{end}}{{with .Headline}}<section class="headline">
<p class="verdict {{.Verdict}}">Verdict: {{.Verdict}}</p>
{{with .Reasons}}<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Allowed}}<p>Allowed (known findings, not failing the run): {{range $i, $a := .}}{{if $i}}, {{end}}{{$a}}{{end}}</p>{{end}}
{{range .Warnings}}<p class="warning">Warning (not failing the run): {{.}}</p>{{end}}
<ul class="figures">{{range .Lines}}<li><b>{{index . 0}}</b>: {{index . 1}}</li>{{end}}</ul>
<div class="top">{{template "table3" .Latency}}
{{with $.FirstPlot}}<figure class="first"><img src="{{.Src}}" alt="{{.Title}}"><figcaption><b>{{.Title}}</b> ({{.Name}}.png). {{.Caption}}</figcaption></figure>{{end}}</div>
{{if .Worst.Rows}}{{template "table3" .Worst}}{{end}}
</section>
{{end}}<h2>Plots</h2>
{{range .Plots}}<figure><img src="{{.Src}}" alt="{{.Title}}"><figcaption><b>{{.Title}}</b> ({{.Name}}.png, {{.Name}}.svg). {{.Caption}}</figcaption></figure>
{{end}}{{with .PlotNotes}}<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{template "table" .Run}}
{{range .Tables}}{{template "table" .}}{{end}}
<h2>Violation samples</h2>
<p>Rule IDs and what breaks each are in docs/PROTOCOLS.md, the project's protocol document.</p>
{{range .Samples}}<details><summary><b>{{.Rule}}</b> session {{.Session}} ({{.Scenario}}, {{.Dialect}}, seed {{.Seed}}): {{clip .Detail}}</summary>
<pre>{{frames .Frames}}</pre></details>
{{else}}<p>None.</p>
{{end}}
</body>
</html>
{{define "table"}}<h2>{{.Title}}</h2>
{{template "rows" .}}{{end}}
{{define "table3"}}<div><h3>{{.Title}}</h3>
{{template "rows" .}}</div>{{end}}
{{define "rows"}}{{if .Rows}}<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if $.IsRight $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</table>
{{else}}<p>None.</p>
{{end}}{{end}}`))

// The report shows less of a sample than the run keeps, each clipped with a marker, so a run
// written by another tool renders as quickly.
const (
	maxReportFrameBytes  = 4 << 10
	maxReportSampleBytes = 64 << 10
	maxReportDetailBytes = 1 << 10
)

// reportFrames is a sample's frames as the report shows them, one a line, clipped.
func reportFrames(frames []string) string {
	var b strings.Builder
	for i, f := range frames {
		if b.Len() >= maxReportSampleBytes {
			fmt.Fprintf(&b, "…[%d more frames not shown: the report shows %d KiB of a sample; violations.jsonl has them]", len(frames)-i, maxReportSampleBytes>>10)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(measure.Clip(f, maxReportFrameBytes))
	}
	return b.String()
}

func writeHTML(w io.Writer, r *measure.Run, figs []Figure, pngs [][]byte, notes []string) error {
	s := &r.Summary
	data := htmlData{
		Summary:    s,
		Incomplete: IncompleteBanner(s),
		Headline:   NewHeadline(r),
		Run:        runTable(s),
		Tables:     runTables(r, nil),
		Samples:    r.Samples,
		PlotNotes:  notes,
	}
	for i, f := range figs {
		hp := htmlPlot{Title: plotTexts[f.Name].title, Caption: plotTexts[f.Name].caption, Name: f.Name,
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(pngs[i]))}
		if f.Name == PlotOverview {
			data.FirstPlot = &hp
			continue
		}
		data.Plots = append(data.Plots, hp)
	}
	if err := reportTemplate.Execute(w, data); err != nil {
		return fmt.Errorf("render %s: %w", HTMLFile, err)
	}
	return nil
}

// runTables are a run's tables, in report order, with first before and last near the end.
func runTables(r *measure.Run, first []Table, last ...Table) []Table {
	s := &r.Summary
	tables := append(first, overviewMetricsTable(r))
	if len(s.Measures) > 0 {
		tables = append(tables, measuresTable(r))
	}
	if s.Tokens != nil {
		tables = append(tables, tokensTable(s))
	}
	tables = append(tables, countersTable(s), violationsTable(s), leaksTable(s), metricsTable(s))
	tables = append(tables, last...)
	if s.ProviderRequests != nil {
		tables = append(tables, providerTable(s))
	}
	if s.Engine != nil {
		tables = append(tables, engineTable(s.Engine))
	}
	return tables
}
