// Package docs holds the project's documentation; its one test keeps the layout it describes
// in step with the code.
package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// packages returns every directory of the module that holds a non-test Go file, relative to
// the root (nested modules, testdata and node_modules left out).
func packages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestLayoutIsDocumented: every package has its row in docs/REFERENCE.md's layout table (its
// path in backquotes, alone or beside its siblings), and docs/ARCHITECTURE.md's package list
// names its top directory (a dialect's package under protocol/, a kit under internal/ by
// its own path). A package added without its line, or a row left for one removed, fails.
func TestLayoutIsDocumented(t *testing.T) {
	t.Parallel()
	pkgs := packages(t, "..")
	if len(pkgs) < 10 || !slices.Contains(pkgs, "cmd/streambench") {
		t.Fatalf("found packages %v: the walk went wrong", pkgs)
	}
	ref, err := os.ReadFile("REFERENCE.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(ref)
	start := strings.Index(text, "## Layout")
	if start < 0 {
		t.Fatal("REFERENCE.md has no '## Layout' section")
	}
	layout := text[start:]
	if end := strings.Index(layout[3:], "\n## "); end >= 0 {
		layout = layout[:end+3]
	}
	// The first column's paths: `dir/` or `dir`, several to a row.
	listed := map[string]bool{}
	for _, line := range strings.Split(layout, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			listed[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	for _, p := range pkgs {
		if !listed[p] {
			t.Errorf("package %s has no row in docs/REFERENCE.md's layout table", p)
		}
	}
	for p := range listed {
		if _, err := os.Stat(filepath.Join("..", p)); err != nil {
			t.Errorf("docs/REFERENCE.md's layout lists %s, which does not exist", p)
		}
	}

	arch, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		name := strings.Split(p, "/")[0]
		if name == "internal" {
			name = p
		}
		if !regexp.MustCompile(`(^|[\s,(])` + regexp.QuoteMeta(name) + `([\s,)/]|$)`).MatchString(string(arch)) {
			t.Errorf("package %s: docs/ARCHITECTURE.md does not name %s", p, name)
		}
	}
}
