package docs

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/streambench/streambench/"

// runsOrServes are the packages that run a load or serve one: the mock, the runtime, the
// generator, the system under test and the lab.
var runsOrServes = []string{"loadgen", "mockprovider", "agentruntime", "stack", "internal/selfbench"}

// arrows are docs/ARCHITECTURE.md's import rules: the packages under dir (subdirectories
// included, their test kits' test files too when kits is set) import none of banned (a module
// package and everything under it).
var arrows = []struct {
	dir    string
	banned []string
	kits   []string // subdirectories whose files, tests included, are held to the rule
	why    string
}{
	{"protocol", append(runsOrServes[:len(runsOrServes):len(runsOrServes)], "report"), []string{"protocol/internal/dialecttest", "protocol/internal/wiretest"},
		"protocol's arrows point down: a dialect's own tests may start a mock (mockprovider/mocktest; the provider-client dialects' suites are clientturn's tests), its code and the test kits may not"},
	{"report", runsOrServes, nil, "report renders saved results only"},
	{"internal/floorrelay", runsOrServes, nil, "the floor relay is the bare relay the runtime is compared with: it imports nothing that runs or serves a load"},
	{"internal/golden", append(runsOrServes[:len(runsOrServes):len(runsOrServes)], "protocol", "measure"), nil, "the golden kit serves the tests of every layer: it imports none of them"},
	{"internal/proctest", append(runsOrServes[:len(runsOrServes):len(runsOrServes)], "protocol", "measure"), nil, "the process kit serves the tests of the stack and the command line: it imports nothing that runs or serves a load"},
	{"sweep", runsOrServes, nil, "sweep judges and renders the runs its caller hands it or it reads from disk"},
	{"verdict", []string{"protocol/"}, nil, "verdict needs no dialect: a rule list reaches it as Config.Rules"},
	{"measure", []string{"protocol/"}, nil, "measure needs no dialect"},
	{"report", []string{"protocol/"}, nil, "report needs no dialect"},
	{"loadgen/engine", []string{"loadgen", "protocol/", "mockprovider"}, nil,
		"the engine's gauges are read into measure's types: nothing of the run, no dialect"},
	{"loadgen", []string{"protocol/", "mockprovider"}, nil,
		"loadgen asks its registry (Config.Dialects) what a dialect can do and reads the mock's records through mockrecords: no dialect package, no mock"},
}

// TestArrowsPointDown: each package keeps to its arrows (above), so saved results re-render
// and re-judge without the load generator or any dialect, and the protocol packages and their
// kits import nothing that serves or runs a load. Its non-test files are read (a kit's, tests
// too); a package that would break a rule fails with the import and the reason.
func TestArrowsPointDown(t *testing.T) {
	t.Parallel()
	for _, a := range arrows {
		files := 0
		err := filepath.WalkDir(filepath.Join("..", a.dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			rel, _ := filepath.Rel("..", path)
			rel = filepath.ToSlash(rel)
			kit := slices.ContainsFunc(a.kits, func(k string) bool { return strings.HasPrefix(rel, k+"/") })
			if strings.HasSuffix(path, "_test.go") && !kit {
				return nil
			}
			files++
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, b := range a.banned {
					if p == module+strings.TrimSuffix(b, "/") && !strings.HasSuffix(b, "/") || strings.HasPrefix(p, module+strings.TrimSuffix(b, "/")+"/") {
						t.Errorf("%s imports %s: %s", rel, p, a.why)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files == 0 {
			t.Errorf("%s: no Go files read: the walk went wrong", a.dir)
		}
	}
}
