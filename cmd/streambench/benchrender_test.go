package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/selfbench"
)

const benchFixture = "../../internal/selfbench/testdata/bench.json"

// TestBenchRenderStdout renders a figures file to standard output: the same Markdown as the
// library's, one section per file.
func TestBenchRenderStdout(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := benchRender([]string{benchFixture, benchFixture}, &out); err != nil {
		t.Fatal(err)
	}
	one := renderFixture(t)
	if out.String() != one+"\n"+one {
		t.Errorf("two files rendered as\n%s\nwant each file's Markdown in turn", out.String())
	}
}

// TestBenchRenderOut writes between the markers of --out and keeps the rest of the document.
func TestBenchRenderOut(t *testing.T) {
	t.Parallel()
	doc := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	before := "# Benchmarks\n\n" + selfbench.GeneratedBegin + "\nto be filled\n" + selfbench.GeneratedEnd + "\n\n## History (hand-kept, before the renderer)\n\n| old | 1 ms |\n"
	if err := os.WriteFile(doc, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	if err := benchRender([]string{benchFixture, "--out", doc}, &stdout); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if stdout.Len() != 0 || strings.Contains(got, "to be filled") || !strings.Contains(got, "### Measured 2026-12-01T18:27:04Z") ||
		!strings.HasPrefix(got, "# Benchmarks\n\n") || !strings.HasSuffix(got, selfbench.GeneratedEnd+"\n\n## History (hand-kept, before the renderer)\n\n| old | 1 ms |\n") {
		t.Errorf("stdout %q; document now\n%s", stdout.String(), got)
	}
}

// TestBenchRenderRefuses: no file, a missing file, a file that is not a figures file and an
// --out without markers are bad input (exit 104), each error naming the file.
func TestBenchRenderRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "notes.txt")
	noMarkers := filepath.Join(dir, "plain.md")
	for _, f := range []string{notJSON, noMarkers} {
		if err := os.WriteFile(f, []byte("# just text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// Nothing to render.
		{"no file", nil, "name at least one figures file"},
		// A file that is not there.
		{"missing", []string{filepath.Join(dir, "nope.json")}, "nope.json"},
		// Text, not JSON.
		{"not JSON", []string{notJSON}, notJSON + ": not JSON: line 1, column 1"},
		// --out without the markers: nothing is written.
		{"no markers", []string{benchFixture, "--out", noMarkers}, noMarkers + ": want the lines"},
	} {
		err := benchRender(tc.args, &bytes.Buffer{})
		var exit *exitError
		if !errors.As(err, &exit) || exit.code != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want exit %d naming %q", tc.name, err, exitUsage, tc.want)
		}
	}
	if b, _ := os.ReadFile(noMarkers); string(b) != "# just text\n" {
		t.Errorf("--out without markers was changed: %q", b)
	}
}

// TestBenchmarksDocRenders: docs/BENCHMARKS.md keeps its markers, so `bench render --out`
// can fill it, and filling it leaves the hand-kept history after them as it was.
func TestBenchmarksDocRenders(t *testing.T) {
	t.Parallel()
	const docPath = "../../docs/BENCHMARKS.md"
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	md := renderFixture(t)
	got, err := selfbench.ReplaceGenerated(docPath, string(doc), md)
	if err != nil {
		t.Fatal(err)
	}
	_, historyBefore, _ := strings.Cut(string(doc), selfbench.GeneratedEnd)
	_, historyAfter, _ := strings.Cut(got, selfbench.GeneratedEnd)
	if historyAfter != historyBefore || !strings.Contains(historyAfter, "## History (hand-kept, before the renderer)") {
		t.Errorf("rendering into %s changed what follows the generated section, or it has no hand-kept history", docPath)
	}
	if !strings.Contains(got, md) {
		t.Errorf("the rendered figures are not in the document")
	}
}

// renderFixture is the library's Markdown of the figures fixture.
func renderFixture(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(benchFixture)
	if err != nil {
		t.Fatal(err)
	}
	md, err := selfbench.RenderMarkdown(benchFixture, data)
	if err != nil {
		t.Fatal(err)
	}
	return md
}
