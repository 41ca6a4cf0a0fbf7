package selfbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/golden"
)

// TestRenderMarkdownGolden renders the hand-made figures file in testdata and compares it
// with its golden Markdown (refresh with -update).
func TestRenderMarkdownGolden(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := RenderMarkdown("testdata/bench.json", data)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/bench.md", []byte(got))
	// What the golden file must show, whatever it is refreshed to.
	for _, s := range []string{
		"Machine: 2 CPUs, Intel(R) Xeon(R) Processor; Go go1.26.8; commit `0123abc`",
		"### Measured 2026-12-01T18:27:04Z",
		"| 1000 streams: path ÷ two-hop floor, CPU | 1.11× | ≤ 1.25× | yes | 1000 streams: two-hop floor CPU per event, all processes: 67.20 µs |",
		"| mock ÷ naive: TTFT error p99 | 1.19× | ≤ 0.5× | **no** | naive: TTFT error p99: 9.60 ms |",
		"| 1000 streams: answer chunks delivered | 200000 chunks | — | — | none |",
		`#### pacing: the mock beside a naive server \| each in its own process`,
		"- **FAILED**: naive: 3 of 2000 streams failed",
		"- result: clean",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("Markdown lacks %q", s)
		}
	}
}

// TestParseFileReadsWhatWriteFileWrites: the renderer accepts the bench command's own output,
// so the fixture's shape and the writer's cannot drift apart unnoticed.
func TestParseFileReadsWhatWriteFileWrites(t *testing.T) {
	t.Parallel()
	rep := &Report{Name: "floor: test", Command: "streambench bench floor", Method: "m"}
	rep.add("events delivered", 10, "events")
	rep.addTarget("ratio", 1.5, "×", "≤ 1.25×", false)
	rep.against("floor", 2, "µs")
	path := filepath.Join(t.TempDir(), "bench.json")
	if err := WriteFile(path, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path, data)
	if err != nil {
		t.Fatalf("the bench command's own file: %v", err)
	}
	got := f.Reports[0].Figures
	if len(got) != 2 || got[0].Yardstick.Name != NoYardstick || got[1].Yardstick.String() != "floor: 2 µs" || got[1].Met == nil || *got[1].Met {
		t.Errorf("figures read back: %+v", got)
	}
	if f.Environment["measured"] == "" || f.Environment["cpus"] == "" {
		t.Errorf("environment read back: %v", f.Environment)
	}
}

// TestParseFileRejects: each malformed file is refused with an error naming the file and
// what is wrong with it.
func TestParseFileRejects(t *testing.T) {
	t.Parallel()
	const env = `"environment": {"measured": "2026-12-01T18:27:04Z", "cpus": "2", "go": "go1.26.8"}`
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		// Not JSON at all: the line and column of the first error.
		{"text", "bench all\nfinished", []string{"in.json: not JSON: line 1, column 1"}},
		// Cut short: the offset points at the end.
		{"truncated", "{\n  \"environment\": {", []string{"in.json: not JSON: line 2"}},
		// A run's summary.json is JSON, not a figures file.
		{"summary.json", `{"schema": 2, "run_id": "baseline"}`, []string{"in.json: not a bench figures file", `"environment" and "reports"`}},
		// The right keys holding the wrong types.
		{"wrong type", `{` + env + `, "reports": {"name": "x"}}`, []string{"in.json: not a bench figures file", `field "reports"`}},
		// A figure's value as a string.
		{"value string", `{` + env + `, "reports": [{"name": "r", "figures": [{"name": "f", "value": "1"}]}]}`, []string{"in.json", "reports.figures.value"}},
		// No date: a figure without its date is not shown.
		{"no date", `{"environment": {"cpus": "2", "go": "go1.26.8"}, "reports": []}`, []string{`in.json: environment has no "measured"`}},
		// Nothing measured.
		{"no reports", `{` + env + `, "reports": []}`, []string{`in.json: "reports" is empty`}},
		// A report without its figures.
		{"no figures", `{` + env + `, "reports": [{"name": "scale: x"}]}`, []string{`in.json: report 1 ("scale: x"): no "figures"`}},
		// A figure without a value.
		{"no value", `{` + env + `, "reports": [{"name": "r", "figures": [{"name": "f", "unit": "ms"}]}]}`, []string{`report 1 ("r"), figure 1 ("f"): no "value"`}},
		// A file from before figures carried yardsticks.
		{"older version", `{` + env + `, "reports": [{"name": "r", "figures": [{"name": "f", "value": 1, "unit": "ms"}]}]}`, []string{`in.json: report 1 ("r"), figure 1 ("f"): no "yardstick"`, "re-run `streambench bench all --json FILE`"}},
		// A yardstick without its name.
		{"yardstick unnamed", `{` + env + `, "reports": [{"name": "r", "figures": [{"name": "f", "value": 1, "yardstick": {"value": 2}}]}]}`, []string{`yardstick has no "name"`}},
		// A target whose verdict is missing.
		{"target without met", `{` + env + `, "reports": [{"name": "r", "figures": [{"name": "f", "value": 1, "target": "≤ 1", "yardstick": {"name": "none"}}]}]}`, []string{`target "≤ 1" without "met"`}},
	} {
		f, err := ParseFile("in.json", []byte(tc.data))
		if err == nil {
			t.Errorf("%s: parsed %+v, want an error", tc.name, f)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
}

// TestReplaceGenerated swaps only what lies between the markers, and refuses a document
// without them, in the wrong order, or with two.
func TestReplaceGenerated(t *testing.T) {
	t.Parallel()
	doc := "# Title\n\nintro\n" + GeneratedBegin + "\nold figures\n" + GeneratedEnd + "\n\n## History\nkept\n"
	got, err := ReplaceGenerated("doc.md", doc, "new figures")
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Title\n\nintro\n" + GeneratedBegin + "\nnew figures\n" + GeneratedEnd + "\n\n## History\nkept\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// Replacing again gives the same document: rendering twice changes nothing.
	if again, _ := ReplaceGenerated("doc.md", got, "new figures"); again != got {
		t.Errorf("a second replace changed the document:\n%s", again)
	}
	for _, bad := range []struct{ name, doc string }{
		{"no markers", "# Title\n"},
		{"end first", GeneratedEnd + "\n" + GeneratedBegin + "\n"},
		{"two begins", GeneratedBegin + "\n" + GeneratedBegin + "\n" + GeneratedEnd + "\n"},
	} {
		if _, err := ReplaceGenerated("doc.md", bad.doc, "x"); err == nil || !strings.HasPrefix(err.Error(), "doc.md: ") {
			t.Errorf("%s: error %v, want one naming doc.md", bad.name, err)
		}
	}
}
