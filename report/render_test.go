package report_test

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/report"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// renderRun renders r into a new directory and returns it.
func renderRun(t *testing.T, r *measure.Run) string {
	t.Helper()
	dir := t.TempDir()
	if err := report.RenderRun(dir, r); err != nil {
		t.Fatal(err)
	}
	return dir
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update to accept):\n%s", name, firstDiff(string(got), string(want)))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

// renderAll renders r into a new directory and as the console summary.
func renderAll(t *testing.T, r *measure.Run) (dir, console string) {
	t.Helper()
	dir = renderRun(t, r)
	var b strings.Builder
	if err := report.WriteSummary(&b, r, report.SessionTally{}); err != nil {
		t.Fatal(err)
	}
	return dir, b.String()
}

// readFile is dir's file, failing the test when it cannot be read.
func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// renderedRun is goldenRun rendered (report.Render).
func renderedRun(t *testing.T) string {
	t.Helper()
	dir := goldenRun(t)
	if err := report.Render(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func goldenRun(t *testing.T) string {
	// A results file names rules by ID: report needs no dialect package.
	dir := t.TempDir()
	if err := measure.WriteRun(dir, fixture.Run(t, fixture.Options{Seed: 1, Violations: map[protocol.Rule]int64{protocol.RConverge: 3,
		"R-tool-gate": 1}, Leak: true, HTTPErrors: 4})); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSummaryGolden(t *testing.T) {
	t.Parallel()
	dir := goldenRun(t)
	got := readFile(t, dir, measure.SummaryFile)
	golden(t, "summary.json", got)
}

func TestRenderGoldenMarkdownAndPlots(t *testing.T) {
	t.Parallel()
	dir := renderedRun(t)
	md := readFile(t, dir, report.MarkdownFile)
	golden(t, "report.md", md)

	for _, name := range []string{report.PlotOverview, report.PlotTimeToFirstChunk, report.PlotChunkGap, report.PlotCancel, report.PlotTimeline, report.PlotLatencyOverTime, report.PlotViolations} {
		f, err := os.Open(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 250 {
			t.Errorf("%s.png is %dx%d, want at least 600x250 (one panel)", name, b.Dx(), b.Dy())
		}
		st, err := os.Stat(filepath.Join(dir, name+".png"))
		if err != nil || st.Size() < 10_000 {
			t.Errorf("%s.png: %v, size %d: want a non-trivial image", name, err, st.Size())
		}
		svg, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s.svg: %v, not an SVG", name, err)
		}
	}

	if err := report.Render(dir); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !bytes.Equal(md, again) {
		t.Error("re-rendering changed report.md: output is not deterministic")
	}
}

func TestRenderHTML(t *testing.T) {
	t.Parallel()
	dir := renderedRun(t)
	html := readFile(t, dir, report.HTMLFile)
	s := string(html)
	for _, want := range []string{
		"data:image/png;base64,",                // plots embedded
		"<details>",                             // a sample is expandable
		"&lt;script&gt;alert(1)&lt;/script&gt;", // frames escaped
		"R-converge",                            // violations table
		"streambench_open_streams",              // the leak
		"Verdict: FAIL",                         // verdict
		`<td class="num">`,                      // numbers right-aligned
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(s, "<script>") {
		t.Error("report.html contains an unescaped <script> from a frame")
	}
	if n := strings.Count(s, "<img "); n != 7 {
		t.Errorf("report.html has %d images, want 7 (the overview, ttfc, chunk_gap, cancel, timeline, latency over time, violations)", n)
	}
	if strings.Contains(s, `src="#ZgotmplZ"`) {
		t.Error("html/template rejected an embedded image URL")
	}
}

func TestRenderEmptyRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := measure.WriteRun(dir, &measure.Run{Summary: measure.Summary{RunID: "empty"}}); err != nil {
		t.Fatal(err)
	}
	if err := report.Render(dir); err != nil {
		t.Fatalf("an empty run must still render: %v", err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !strings.Contains(string(md), "None.") {
		t.Errorf("empty tables should say None:\n%s", md)
	}
}

func TestRenderMissingDir(t *testing.T) {
	t.Parallel()
	err := report.Render(filepath.Join(t.TempDir(), "missing"))
	if err == nil || !strings.Contains(err.Error(), "run directory") {
		t.Errorf("Render of a missing dir: %v, want an error naming the run directory", err)
	}
}

// TestRenderShowsOutcomesAndAllowed: error outcomes have their counter rows, and an allowed rule's
// violations are shown as allowed in the verdict, the run table and the violations table of
// both report.md and report.html, never dropped.
func TestRenderShowsOutcomesAndAllowed(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 12, Violations: map[protocol.Rule]int64{protocol.RAbort: 12, protocol.RTerminal: 2}})
	r.Summary.Counters.Outcomes[measure.OutcomeStalled] = 2
	r.Summary.Config.Allow = []protocol.Rule{protocol.RAbort}
	r.Summary.Verdict = measure.Verdict{Pass: false, Reasons: []string{"errors==0: 2 (limit == 0): stalled×2"}, Allowed: []string{"R-abort×12"}}
	dir := renderRun(t, r)
	for file, wants := range map[string][]string{
		report.MarkdownFile: {"| outcome stalled (error) | 2 |", "- allowed (known findings, not failing the run): R-abort×12",
			"| allowed rules | R-abort |", "| R-abort | 12 | allowed (known finding) |", "| R-terminal | 2 | FAIL |"},
		report.HTMLFile: {"<td>outcome stalled (error)</td>", "Allowed (known findings, not failing the run): R-abort×12",
			"<td>allowed (known finding)</td>"},
	} {
		data := readFile(t, dir, file)
		for _, w := range wants {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q", file, w)
			}
		}
	}
}

// TestRenderLeaksNotChecked: what the leak check could not read is in the report's leak table,
// with its reason, next to what it compared.
func TestRenderLeaksNotChecked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := &measure.Run{Summary: measure.Summary{RunID: "not-checked",
		Leaks: []measure.Leak{{Source: "generator", Name: "go_goroutines", Before: 5, After: 5, Tolerance: 8, OK: true}},
		LeaksNotChecked: []measure.LeakNotChecked{
			{Source: "runtime", Reason: "no metrics: GET http://127.0.0.1:1/metrics: HTTP 404"},
			{Source: "mock", Name: "new_open_things", Reason: "absent before the load (5 after it): no baseline"},
		}}}
	if err := measure.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	if err := report.Render(dir); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{report.MarkdownFile, report.HTMLFile} {
		b := readFile(t, dir, file)
		for _, want := range []string{"go_goroutines", "not checked: no metrics: GET http://127.0.0.1:1/metrics: HTTP 404", "new_open_things", "not checked: absent before the load"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s lacks %q", file, want)
			}
		}
	}
}

// TestRenderShowsWarnings: a passing run with an overloaded generator shows the warning in the
// console summary, report.md and report.html, and still passes.
func TestRenderShowsWarnings(t *testing.T) {
	t.Parallel()
	const warning = "the generator was overloaded: its scheduling lag p99 was 40ms"
	r := fixture.Run(t, fixture.Options{Seed: 13})
	r.Summary.Verdict = measure.Verdict{Pass: true, Warnings: []string{warning}}
	dir, console := renderAll(t, r)
	md := readFile(t, dir, report.MarkdownFile)
	html := readFile(t, dir, report.HTMLFile)
	for name, out := range map[string]string{"console": console, "report.md": string(md), "report.html": string(html)} {
		if !strings.Contains(out, "arning (not failing the run): "+warning) {
			t.Errorf("%s lacks the warning:\n%s", name, out)
		}
	}
	if !strings.Contains(console, "verdict: PASS") {
		t.Errorf("a warning turned the verdict:\n%s", console)
	}
}

// TestRenderShowsProviderRequests: a run that read the mock's records shows its provider
// requests and retries per scenario in report.md, report.html and the console summary, with
// the total; a run without them shows no such table.
func TestRenderShowsProviderRequests(t *testing.T) {
	t.Parallel()
	r := fixture.Run(t, fixture.Options{Seed: 13})
	r.Summary.ProviderRequests = []measure.ProviderRequests{
		{Scenario: "plain-answer", Sessions: 4, Requests: 4},
		{Scenario: "provider-429", Sessions: 2, Requests: 6, Retries: 4, RetriesByStatus: map[int]int64{429: 4}},
	}
	dir, console := renderAll(t, r)
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	html, _ := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	for name, out := range map[string]string{"report.md": string(md), "report.html": string(html)} {
		for _, want := range []string{"Provider requests (the mock&#39;s records)", "provider-429", "3.00", "429 ×4", "(all)", "1.67"} {
			if name == "report.md" {
				want = strings.ReplaceAll(want, "&#39;", "'")
			}
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
	if want := "provider requests (mock): 10 for 6 sessions, 4 retries (after HTTP 429 ×4)"; !strings.Contains(console, want) {
		t.Errorf("console summary lacks %q:\n%s", want, console)
	}
	r.Summary.ProviderRequests = nil
	dir = renderRun(t, r)
	if md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile)); strings.Contains(string(md), "Provider requests") {
		t.Error("a run without the mock's records shows a provider requests table")
	}
}

// TestRenderClipsLongFrames: a run whose samples hold frames of a mebibyte (written by an
// older streambench, or another tool) renders a report.html of kilobytes, each frame cut with
// a marker saying how much, the sample's later frames counted, not shown.
func TestRenderClipsLongFrames(t *testing.T) {
	t.Parallel()
	frame := "data: " + strings.Repeat("x", 1<<20)
	var frames []string
	for range 60 {
		frames = append(frames, frame)
	}
	run := &measure.Run{Summary: measure.Summary{RunID: "big-frames", Violations: map[protocol.Rule]int64{protocol.RConverge: 1}},
		Samples: []measure.ViolationSample{{Session: "s-1", Scenario: "plain-answer", Dialect: "sim-chat", Rule: protocol.RConverge,
			Detail: strings.Repeat("d", 1<<20), Frames: frames}}}
	dir := renderRun(t, run)
	for _, file := range []string{report.HTMLFile, report.MarkdownFile} {
		b := readFile(t, dir, file)
		if len(b) > 1<<20 {
			t.Errorf("%s is %d KiB for 60 MiB of frames: not clipped", file, len(b)>>10)
		}
		if !bytes.Contains(b, []byte("[clipped: ")) {
			t.Errorf("%s does not say what was clipped", file)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, report.HTMLFile)); !bytes.Contains(b, []byte("more frames not shown")) {
		t.Errorf("%s does not count the frames it left out", report.HTMLFile)
	}
}

// TestRenderLatencyOverTime: a run with its latency over time gets the plot, as PNG and SVG,
// listed in report.md and shown in report.html under its file name; the same run without the
// series (recorded before it, or merged from shards) gets no plot, no stale file from an
// earlier rendering, and a note saying why.
func TestRenderLatencyOverTime(t *testing.T) {
	t.Parallel()
	dir := renderedRun(t)
	png := filepath.Join(dir, report.PlotLatencyOverTime+".png")
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(filepath.Join(dir, report.PlotLatencyOverTime+ext)); err != nil || st.Size() < 5_000 {
			t.Fatalf("%s%s: %v, want a drawn plot", report.PlotLatencyOverTime, ext, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !strings.Contains(string(html), "("+report.PlotLatencyOverTime+".png, ") {
		t.Errorf("report.html does not show %s.png", report.PlotLatencyOverTime)
	}
	if !strings.Contains(string(md), "]("+report.PlotLatencyOverTime+".png)") {
		t.Errorf("report.md does not list %s.png", report.PlotLatencyOverTime)
	}

	run, err := measure.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	run.Summary.OverTime = nil
	if err := measure.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	if err := report.Render(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(png); err == nil {
		t.Errorf("%s is left from the earlier rendering of a run that has no latency over time", png)
	}
	md, _ = os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if !strings.Contains(string(md), "no latency over time in this run") {
		t.Errorf("report.md does not say why there is no latency over time plot:\n%s", md)
	}
}
