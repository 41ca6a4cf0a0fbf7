package dialects

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/agui"
	"github.com/streambench/streambench/protocol/compose"
)

// protocolDoc is the project's protocol document, relative to this package.
var protocolDoc = filepath.Join("..", "..", "docs", "PROTOCOLS.md")

// declaredRules reads the Rule constants of package protocol and of every package under it
// from their source (protocol.Rule in a dialect package), so a rule added later is covered
// without touching this test.
func declaredRules(t *testing.T) []protocol.Rule {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join("..", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := filepath.Glob(filepath.Join("..", "*", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []protocol.Rule
	for _, name := range append(files, sub...) {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				switch typ := vs.Type.(type) {
				case *ast.Ident:
					if typ.Name != "Rule" || f.Name.Name != "protocol" {
						continue
					}
				case *ast.SelectorExpr:
					if x, ok := typ.X.(*ast.Ident); !ok || x.Name != "protocol" || typ.Sel.Name != "Rule" {
						continue
					}
				default:
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a Rule constant that is not a string literal: %T", fset.Position(v.Pos()), v)
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					rules = append(rules, protocol.Rule(s))
				}
			}
		}
	}
	return rules
}

// TestRulesListsEveryConstant: the registry's rules are the shared ones and each dialect's
// own, declared by hand in its Rules; a Rule constant left out of them would be refused by
// --allow. The constants are read from the source.
func TestRulesListsEveryConstant(t *testing.T) {
	t.Parallel()
	listed := map[protocol.Rule]bool{}
	for _, r := range Default().Rules().Rules() {
		listed[r] = true
	}
	declared := declaredRules(t)
	if len(declared) < 70 {
		t.Fatalf("found %d Rule constants under protocol/, expected at least the 76 of today: %v", len(declared), declared)
	}
	for _, r := range declared {
		if !listed[r] {
			t.Errorf("Rule constant %s is missing from Default().Rules(): declare it in its package's Rules", r)
		}
	}
	if len(listed) != len(declared) {
		t.Errorf("Default().Rules() lists %d rules, the packages declare %d", len(listed), len(declared))
	}
}

// TestRulesOwnership: a dialect's rules are listed by its own Dialect and no other, after the
// shared ones, and the registry parses and classifies them.
func TestRulesOwnership(t *testing.T) {
	t.Parallel()
	r := Default()
	set := r.Rules()
	d, err := r.Lookup(agui.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(d.Rules(), func(s protocol.RuleSpec) bool { return s.ID == agui.RRun }) {
		t.Errorf("ag-ui does not list %s", agui.RRun)
	}
	for _, n := range r.Names() {
		d, _ := r.Lookup(n)
		for _, s := range d.Rules() {
			if got, err := set.Parse(string(s.ID)); err != nil || got != s.ID {
				t.Errorf("%s's %s: Parse = %q, %v", n, s.ID, got, err)
			}
			if reg, _ := set.Lookup(s.ID); reg.Kind != s.Kind || reg.Content != s.Content {
				t.Errorf("%s's %s: the registry says %s %q, the dialect %s %q", n, s.ID, reg.Kind, reg.Content, s.Kind, s.Content)
			}
			if n != compose.Name && strings.HasPrefix(string(s.ID), "R-swarm") {
				t.Errorf("%s lists compose's %s", n, s.ID)
			}
		}
	}
	shared := make([]protocol.Rule, 0, len(protocol.SharedRules()))
	for _, s := range protocol.SharedRules() {
		shared = append(shared, s.ID)
	}
	if got := set.Rules()[:len(shared)]; !slices.Equal(got, shared) {
		t.Errorf("the registry's rules start with %v, want the shared ones first: %v", got, shared)
	}
	if set.Kind(protocol.RTerminal) != protocol.RuleMixed || set.Kind(agui.RContent) != protocol.RuleContent {
		t.Errorf("kinds: R-terminal %s, R-agui-content %s", set.Kind(protocol.RTerminal), set.Kind(agui.RContent))
	}
	if _, err := set.Parse("R-agui-nothing"); err == nil || !strings.Contains(err.Error(), string(agui.RRun)) {
		t.Errorf("Parse(unknown): %v, want an error listing the rules", err)
	}
}

// missingFromIndex returns the rules that have no row of their own in the document's rule
// index (a table row starting "| `R-…` |") or are not described elsewhere in it.
func missingFromIndex(doc string, rules []protocol.Rule) []protocol.Rule {
	var missing []protocol.Rule
	for _, r := range rules {
		row := "| `" + string(r) + "` |"
		if !strings.Contains(doc, row) || strings.Count(doc, string(r)) < 2 {
			missing = append(missing, r)
		}
	}
	return missing
}

// TestEveryRuleIsDocumented: docs/PROTOCOLS.md has a rule-index row for every rule of the
// registry and every Rule constant, so the document cannot silently fall behind the checkers.
func TestEveryRuleIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatalf("the protocol document: %v", err)
	}
	rules := append(declaredRules(t), Default().Rules().Rules()...)
	if missing := missingFromIndex(string(doc), rules); len(missing) != 0 {
		t.Errorf("%s lacks a rule-index row (| `R-…` | … |) and a description for %v", protocolDoc, missing)
	}
	// The check itself fails when a rule's row is gone.
	without := strings.Replace(string(doc), "| `"+string(compose.RArgs)+"` |", "| compose args |", 1)
	if got := missingFromIndex(without, []protocol.Rule{compose.RArgs, agui.RRun}); len(got) != 1 || got[0] != compose.RArgs {
		t.Errorf("with the R-compose-args row removed: missing %v, want [R-compose-args]", got)
	}
}

// TestDocumentedRuleKinds: every table row of the document that names a rule (the rule index,
// the provider-wire dialects' tables) gives its kind as the registry does, and the rule index
// gives one for every rule.
func TestDocumentedRuleKinds(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatalf("the protocol document: %v", err)
	}
	set := Default().Rules()
	row := regexp.MustCompile("(?m)^\\| `(R-[a-z0-9-]+)` \\| ([a-z]+) \\|")
	seen := map[protocol.Rule]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		r := protocol.Rule(m[1])
		seen[r] = true
		if want := set.Kind(r).String(); m[2] != want {
			t.Errorf("%s: %s says %s, the registry says %s", r, protocolDoc, m[2], want)
		}
	}
	for _, r := range set.Rules() {
		if !seen[r] {
			t.Errorf("%s: no row | `%s` | kind | in %s", r, r, protocolDoc)
		}
	}
}
