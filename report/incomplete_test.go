package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/fixture"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
)

// TestRenderIncompleteRun: a snapshot saved by WriteSnapshot renders (its metrics computed
// from its histograms) with the INCOMPLETE banner first in report.md and report.html, naming
// the time its figures reach; a finished run has no banner.
func TestRenderIncompleteRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		incomplete bool
	}{
		// a snapshot: the banner, in both files
		{"snapshot", true},
		// the final results: none
		{"final", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := fixture.Run(t, fixture.Options{Seed: 14})
			r.Summary.Ended = r.Summary.Started.Add(17 * time.Second)
			dir := t.TempDir()
			write := measure.WriteRun
			if tc.incomplete {
				r.Summary.Incomplete = true
				write = measure.WriteSnapshot
			}
			if err := write(dir, r); err != nil {
				t.Fatal(err)
			}
			if err := report.Render(dir); err != nil {
				t.Fatal(err)
			}
			banner := "INCOMPLETE: the run was killed before it finished (or is still running); figures cover up to " +
				r.Summary.Ended.UTC().Format(time.TimeOnly) + " UTC, 17s into the run"
			for file, before := range map[string]string{report.MarkdownFile: "**Verdict", report.HTMLFile: ">Verdict: "} {
				data, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil {
					t.Fatal(err)
				}
				text := string(data)
				i, v := strings.Index(text, banner), strings.Index(text, before)
				if (i >= 0) != tc.incomplete || (tc.incomplete && (v < 0 || i > v)) {
					t.Errorf("%s: banner at %d, verdict at %d: want the banner %v, before the verdict", file, i, v, tc.incomplete)
				}
			}
			md, _ := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
			if tc.incomplete && !strings.Contains(string(md), "| incomplete | yes: a snapshot 17s into the run") {
				t.Errorf("report.md's run table does not say incomplete:\n%s", md)
			}
			if tc.incomplete && !strings.Contains(string(md), "| ttfc |") {
				t.Errorf("report.md has no ttfc row: the snapshot's metrics were not computed from its histograms:\n%s", md)
			}
		})
	}
}
