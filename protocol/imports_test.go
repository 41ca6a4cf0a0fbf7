package protocol

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestArrowsPointDown: the protocol packages, their test kits under protocol/internal
// included, import nothing that serves or runs a load (docs/ARCHITECTURE.md): the mock, the
// runtime, the generator and the stack sit above them. A dialect's own tests may start a mock
// (mockprovider/mocktest); its non-test files and the kits may not.
func TestArrowsPointDown(t *testing.T) {
	t.Parallel()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		kit := strings.HasPrefix(filepath.ToSlash(path), "internal/")
		if strings.HasSuffix(path, "_test.go") && !kit {
			return nil
		}
		ast, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range ast.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, banned := range []string{"/loadgen", "/mockprovider", "/agentruntime", "/stack", "/internal/selfbench", "/report"} {
				if strings.HasSuffix(p, banned) || strings.Contains(p, banned+"/") {
					t.Errorf("protocol/%s imports %s: protocol's arrows point down", filepath.ToSlash(path), p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
