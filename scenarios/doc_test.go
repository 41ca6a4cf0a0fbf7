package scenarios

import (
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// yamlFields adds to out every YAML field name the parser accepts in t: the yaml tags of t and
// of every struct reachable from it (an inline struct's fields count as its parent's).
func yamlFields(t reflect.Type, seen map[reflect.Type]bool, out map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		tag, ok := f.Tag.Lookup("yaml")
		if !ok {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name != "" && name != "-" {
			out[name] = true
		} else if !strings.Contains(opts, "inline") {
			continue
		}
		yamlFields(f.Type, seen, out)
	}
}

// TestDocNamesEveryField: docs/SCENARIOS.md mentions, as `name`, every field the parser knows,
// so a field added to the model without a word in the doc fails here.
func TestDocNamesEveryField(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]bool{}
	yamlFields(reflect.TypeFor[Scenario](), map[reflect.Type]bool{}, fields)
	if len(fields) < 40 {
		t.Fatalf("found %d fields by reflection; the walk is broken", len(fields))
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/SCENARIOS.md does not mention the field `%s`", name)
		}
	}
}

// TestDocExamplesParse: every YAML example in docs/SCENARIOS.md is a valid scenario once the
// parts it leaves out (name, timing, a turn) are filled in, so the examples cannot drift from
// the parser either.
func TestDocExamplesParse(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/SCENARIOS.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 8 {
		t.Fatalf("%d YAML examples, want one per feature", len(blocks))
	}
	for i, b := range blocks {
		var m map[string]any
		if err := yaml.Unmarshal(b[1], &m); err != nil {
			t.Errorf("example %d is not YAML: %v\n%s", i+1, err, b[1])
			continue
		}
		defaults := map[string]any{
			"name":   "doc-example",
			"timing": map[string]any{"ttft": "10ms", "itl": "1ms"},
			"turns":  []any{map[string]any{"text": map[string]any{"tokens": 30}}},
		}
		for k, v := range defaults {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		full, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(fmt.Sprintf("docs/SCENARIOS.md example %d", i+1), full); err != nil {
			t.Errorf("example %d does not parse: %v\n%s", i+1, err, full)
		}
	}
}
