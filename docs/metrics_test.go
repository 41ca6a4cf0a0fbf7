package docs

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/streambench/streambench/measure"
)

var update = flag.Bool("update", false, "rewrite the tables generated from the code")

// The table of every metric in METRICS.md lies between these lines.
const (
	tableBegin = "<!-- generated from measure.Registry: go test ./docs -run TestMetricsTable -update -->\n"
	tableEnd   = "<!-- end of the generated table -->\n"
)

// metricsTable is the Markdown table of every metric the registry declares.
func metricsTable() string {
	var b strings.Builder
	b.WriteString("| metric | kind | unit | scopes | a threshold on it | goodput SLO | live series | what |\n" +
		"|---|---|---|---|---|---|---|---|\n")
	code := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, d := range measure.Registry() {
		name := code(string(d.Name))
		if d.Alias != "" {
			name += ", " + code(string(d.Alias))
		}
		slo := ""
		if d.PerSession {
			slo = "yes"
		}
		b.WriteString("| " + strings.Join([]string{name, d.Kind.String(), d.Kind.Unit(), strings.Join(d.Scopes, ", "),
			code(d.Example), slo, code(d.Live), d.Doc}, " | ") + " |\n")
	}
	return b.String()
}

// TestMetricsTable: METRICS.md's table of every metric is the registry's (measure.Registry),
// never kept by hand beside it; -update rewrites it.
func TestMetricsTable(t *testing.T) {
	t.Parallel()
	const file = "METRICS.md"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	before, rest, ok := strings.Cut(text, tableBegin)
	table, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok || !ok2 {
		t.Fatalf("%s: no generated table between %q and %q", file, tableBegin, tableEnd)
	}
	want := metricsTable()
	if table == want {
		return
	}
	if *update {
		if err := os.WriteFile(file, []byte(before+tableBegin+want+tableEnd+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: the table of every metric differs from the registry (go test ./docs -run TestMetricsTable -update rewrites it); want:\n%s", file, want)
}
