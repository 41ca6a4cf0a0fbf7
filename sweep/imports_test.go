package sweep

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunsNoLoad: sweep judges and renders the runs its caller hands it or it reads from disk;
// it imports none of the packages that run a load or serve one (docs/ARCHITECTURE.md), so
// re-judging a saved sweep never needs them.
func TestRunsNoLoad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
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
			for _, banned := range []string{"/loadgen", "/mockprovider", "/agentruntime", "/stack", "/internal/selfbench"} {
				if strings.HasSuffix(path, banned) || strings.Contains(path, banned+"/") {
					t.Errorf("%s imports %s: sweep runs no load itself", f, path)
				}
			}
		}
	}
}
