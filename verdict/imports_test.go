package verdict

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNeedsNoDialect: verdict, measure and report judge and render saved results by rule ID;
// none imports a dialect package or the registry (a rule list reaches verdict as
// Config.Rules, from the command line), so results of a dialect they were built without still
// load, judge and render (issue 27).
func TestNeedsNoDialect(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{".", "../measure", "../report"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files: %v", len(files), files)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/streambench/streambench/protocol/") {
				t.Errorf("%s imports %s: it needs no dialect", f, path)
			}
		}
	}
}
