package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/golden"
	"github.com/streambench/streambench/measure"
)

// TestMetricsTable: METRICS.md's table of every metric is the registry's (measure.Registry),
// never kept by hand beside it; -update rewrites it.
func TestMetricsTable(t *testing.T) {
	t.Parallel()
	const file, begin, end = "METRICS.md", "<!-- generated from measure.Registry: go test ./docs -run TestMetricsTable -update -->\n",
		"<!-- end of the generated table -->\n"
	want := "| metric | kind | unit | scopes | a threshold on it | goodput SLO | live series | what |\n|---|---|---|---|---|---|---|---|\n"
	code := func(s string) string { return strings.TrimSuffix("`"+s+"`", "``") }
	for _, d := range measure.Registry() {
		name, slo := code(string(d.Name)), map[bool]string{true: "yes"}[d.PerSession]
		if d.Alias != "" {
			name += ", " + code(string(d.Alias))
		}
		want += "| " + strings.Join([]string{name, d.Kind.String(), d.Kind.Unit(), strings.Join(d.Scopes, ", "),
			code(d.Example), slo, code(d.Live), d.Doc}, " | ") + " |\n"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(data), begin)
	table, after, ok2 := strings.Cut(rest, end)
	switch {
	case !ok || !ok2:
		t.Fatalf("%s: no generated table between %q and %q", file, begin, end)
	case table == want:
	case *golden.Update:
		if err := os.WriteFile(file, []byte(before+begin+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Errorf("%s: the table of every metric differs from the registry (go test ./docs -run TestMetricsTable -update rewrites it); want:\n%s", file, want)
	}
}
