package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// protocolDoc is the project's protocol document, relative to this package.
var protocolDoc = filepath.Join("..", "docs", "PROTOCOLS.md")

// declaredRules reads the Rule constants of this package from its source, so a rule added later
// is covered without touching this test.
func declaredRules(t *testing.T) []Rule {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var rules []Rule
	for _, name := range files {
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
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Rule" {
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
					rules = append(rules, Rule(s))
				}
			}
		}
	}
	return rules
}

// missingFromIndex returns the rules that have no row of their own in the document's rule
// index (a table row starting "| `R-…` |") or are not described elsewhere in it.
func missingFromIndex(doc string, rules []Rule) []Rule {
	var missing []Rule
	for _, r := range rules {
		row := "| `" + string(r) + "` |"
		if !strings.Contains(doc, row) || strings.Count(doc, string(r)) < 2 {
			missing = append(missing, r)
		}
	}
	return missing
}

// TestEveryRuleIsDocumented: docs/PROTOCOLS.md has a rule-index row for every Rule constant,
// so the document cannot silently fall behind the checkers.
func TestEveryRuleIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatalf("the protocol document: %v", err)
	}
	rules := declaredRules(t)
	if len(rules) < 15 {
		t.Fatalf("found %d Rule constants in package protocol, expected at least the 15 of today: %v", len(rules), rules)
	}
	if missing := missingFromIndex(string(doc), rules); len(missing) != 0 {
		t.Errorf("%s lacks a rule-index row (| `R-…` | … |) and a description for %v", protocolDoc, missing)
	}
	// The check itself fails when a rule's row is gone.
	without := strings.Replace(string(doc), "| `"+string(RComposeArgs)+"` |", "| compose args |", 1)
	if got := missingFromIndex(without, rules); len(got) != 1 || got[0] != RComposeArgs {
		t.Errorf("with the R-compose-args row removed: missing %v, want [R-compose-args]", got)
	}
}

// TestDocumentedRuleKinds: every table row of the document that names a rule (the rule index,
// the provider-wire dialects' tables) gives its kind as RuleKindOf does, and the rule index
// gives one for every rule.
func TestDocumentedRuleKinds(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatalf("the protocol document: %v", err)
	}
	row := regexp.MustCompile("(?m)^\\| `(R-[a-z0-9-]+)` \\| ([a-z]+) \\|")
	seen := map[Rule]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		r := Rule(m[1])
		seen[r] = true
		if want := RuleKindOf(r).String(); m[2] != want {
			t.Errorf("%s: %s says %s, RuleKindOf says %s", r, protocolDoc, m[2], want)
		}
	}
	for _, r := range Rules() {
		if !seen[r] {
			t.Errorf("%s: no row | `%s` | kind | in %s", r, r, protocolDoc)
		}
	}
}
