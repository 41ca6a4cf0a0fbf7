package selfbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Figure is one measured number with its unit and, where it has one, its target.
type Figure struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Target string  `json:"target,omitempty"` // the goal in words ("≤ 1 ms"), empty for context
	Met    *bool   `json:"met,omitempty"`    // whether Value reached Target
	// Yardstick is what the figure is read against, NoYardstick when nothing was measured beside it.
	Yardstick Yardstick `json:"yardstick"`
}

// NoYardstick is the Yardstick name of a figure that was measured against nothing.
const NoYardstick = "none"

// Yardstick is what a figure is read against, measured in the same run (for a ratio, its denominator).
type Yardstick struct {
	Name  string   `json:"name"`            // what the yardstick is, or NoYardstick.
	Value *float64 `json:"value,omitempty"` // with Unit, its own figure; nil for NoYardstick.
	Unit  string   `json:"unit,omitempty"`
}

// String is the yardstick as a table cell.
func (y Yardstick) String() string {
	if y.Value == nil {
		return y.Name
	}
	return strings.TrimSpace(fmt.Sprintf("%s: %s %s", y.Name, formatFigure(*y.Value), y.Unit))
}

// Report is what one measurement found: its figures, how, and whether the run was clean.
// Missed targets are not failures: on a shared 2-core machine they measure the machine too.
type Report struct {
	Name     string   `json:"name"`
	Command  string   `json:"command"`
	Method   string   `json:"method"`
	Figures  []Figure `json:"figures"`
	Failures []string `json:"failures,omitempty"` // correctness problems: the bench command exits non-zero
	Notes    []string `json:"notes,omitempty"`
}

func (r *Report) add(name string, value float64, unit string) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Yardstick: Yardstick{Name: NoYardstick}})
}

func (r *Report) addTarget(name string, value float64, unit, target string, met bool) {
	r.Figures = append(r.Figures, Figure{Name: name, Value: value, Unit: unit, Target: target, Met: &met, Yardstick: Yardstick{Name: NoYardstick}})
}

// against sets the last added figure's yardstick.
func (r *Report) against(name string, value float64, unit string) {
	r.Figures[len(r.Figures)-1].Yardstick = Yardstick{Name: name, Value: &value, Unit: unit}
}

// pairYardsticks reads each figure named prefix+X against the one named yardPrefix+X.
func (r *Report) pairYardsticks(prefix, yardPrefix string) {
	for i, f := range r.Figures {
		rest, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			continue
		}
		for _, y := range r.Figures {
			if y.Name == yardPrefix+rest {
				v := y.Value
				r.Figures[i].Yardstick = Yardstick{Name: y.Name, Value: &v, Unit: y.Unit}
			}
		}
	}
}

func (r *Report) fail(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

func (r *Report) note(format string, args ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// WriteText writes the report as a table with units, its notes and its verdict.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "== %s\n   command: %s\n   method: %s\n", r.Name, r.Command, r.Method)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, f := range r.Figures {
		target := ""
		if f.Target != "" {
			verdict := "met"
			if f.Met != nil && !*f.Met {
				verdict = "MISSED"
			}
			target = fmt.Sprintf("target %s: %s", f.Target, verdict)
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", f.Name, formatFigure(f.Value), f.Unit, target)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "   note: %s\n", n)
	}
	if len(r.Failures) == 0 {
		fmt.Fprintln(w, "   result: clean")
	}
	for _, f := range r.Failures {
		fmt.Fprintf(w, "   FAILED: %s\n", f)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// formatFigure prints integers as integers and other values with three significant decimals.
func formatFigure(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	switch a := max(v, -v); {
	case a > 0 && a < 0.001:
		return fmt.Sprintf("%.1e", v)
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// floorRatio is a figure of another measurement that has a floor in `bench floor`.
type floorRatio struct {
	report, figure string // the measurement's report name prefix ("scale:") and figure name
	floor          string // the floor figure's name after "N streams, "
	label          string
}

func floorRatios() []floorRatio {
	return []floorRatio{
		{"scale:", "generator CPU per received frame", "two-hop: client CPU per event", "scale: generator CPU per frame ÷ floor client"},
		{"scale:", "runtime CPU per relayed frame", "two-hop: relay CPU per event", "scale: runtime CPU per frame ÷ floor relay"},
		{"scale:", "mock CPU per frame", "two-hop: server CPU per event", "scale: mock CPU per frame ÷ floor server"},
		{"scale:", "generator RSS per open stream", "two-hop: client RSS per open stream", "scale: generator RSS per stream ÷ floor client"},
		{"pacing:", "CPU per token", "one-hop: CPU per event, all processes", "pacing: mock self-test CPU per token ÷ one-hop floor (server + client)"},
	}
}

// FloorRatios is `bench all`'s closing table: every figure divided by its floor at the floor's
// largest size, and the path's and fidelity's ratios; nil without a floor.
func FloorRatios(reports []*Report) *Report {
	byPrefix := func(prefix string) *Report {
		for _, r := range reports {
			if strings.HasPrefix(r.Name, prefix) {
				return r
			}
		}
		return nil
	}
	floor := byPrefix("floor:")
	if floor == nil {
		return nil
	}
	size := largestFloorSize(floor)
	rep := &Report{
		Name:    "ratios: every figure that has a floor, divided by it",
		Command: "streambench bench all",
		Method: fmt.Sprintf("floors from this run's bench floor at %d streams × 20 events/s; scale and pacing run at their own sizes and rates "+
			"(scale 5,000 streams × 2 tokens/s by default), so their ratios compare a busier or idler process with the floor's; "+
			"the path's ratios are against the two-hop floor measured beside it at the same load", size),
	}
	for _, fr := range floorRatios() {
		src := byPrefix(fr.report)
		if src == nil {
			continue
		}
		v, ok1 := figureNamed(src, fr.figure)
		f, ok2 := figureNamed(floor, fmt.Sprintf("%d streams, %s", size, fr.floor))
		if ok1 && ok2 && f.Value > 0 {
			rep.add(fr.label, v.Value/f.Value, "×")
			rep.against("floor: "+f.Name, f.Value, f.Unit)
		}
	}
	repeat := func(r *Report, part, mark string) {
		for _, f := range r.Figures {
			if strings.Contains(f.Name, mark) {
				f.Name = part + ": " + f.Name
				rep.Figures = append(rep.Figures, f)
			}
		}
	}
	if path := byPrefix("path:"); path != nil {
		repeat(path, "path", "÷")
	}
	for _, r := range reports {
		if strings.HasPrefix(r.Name, "fidelity") {
			repeat(r, "fidelity", "beyond the machine's floor")
		}
	}
	if len(rep.Figures) == 0 {
		return nil
	}
	return rep
}

func figureNamed(rep *Report, name string) (Figure, bool) {
	i := slices.IndexFunc(rep.Figures, func(f Figure) bool { return f.Name == name })
	if i < 0 {
		return Figure{}, false
	}
	return rep.Figures[i], true
}

// largestFloorSize is the most streams the floor report measured ("2000 streams, ...").
func largestFloorSize(floor *Report) int {
	largest := 0
	for _, f := range floor.Figures {
		var n int
		if _, err := fmt.Sscanf(f.Name, "%d streams,", &n); err == nil {
			largest = max(largest, n)
		}
	}
	return largest
}

// The lines between which `bench render --out` writes its Markdown.
const (
	GeneratedBegin = "<!-- generated by streambench bench render: begin -->"
	GeneratedEnd   = "<!-- generated by streambench bench render: end -->"
)

// requiredEnvironment are the keys a figures file must hold: every figure shows its machine and date.
var requiredEnvironment = []string{"measured", "cpus", "go"}

// The JSON shape ParseFile checks: pointers where a missing field must be told from a zero one.
type (
	fileJSON struct {
		Environment map[string]string `json:"environment"`
		Reports     *[]reportJSON     `json:"reports"`
	}
	reportJSON struct {
		Name     *string       `json:"name"`
		Command  string        `json:"command"`
		Method   string        `json:"method"`
		Figures  *[]figureJSON `json:"figures"`
		Failures []string      `json:"failures"`
		Notes    []string      `json:"notes"`
	}
	figureJSON struct {
		Name      *string    `json:"name"`
		Value     *float64   `json:"value"`
		Unit      string     `json:"unit"`
		Target    string     `json:"target"`
		Met       *bool      `json:"met"`
		Yardstick *Yardstick `json:"yardstick"`
	}
)

// ParseFile reads the figures file (`bench --json`) name from data and checks it holds what
// Markdown shows; its errors name the file and what is missing or malformed.
func ParseFile(name string, data []byte) (*File, error) {
	var raw fileJSON
	if err := json.Unmarshal(data, &raw); err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syntax):
			line, col := position(data, syntax.Offset)
			return nil, fmt.Errorf("%s: not JSON: line %d, column %d: %w", name, line, col, err)
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s: not a bench figures file (`streambench bench --json`): field %q holds a JSON %s, want %s", name, typ.Field, typ.Value, typ.Type)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if raw.Reports == nil || raw.Environment == nil {
		return nil, fmt.Errorf("%s: not a bench figures file (`streambench bench --json`): want top-level \"environment\" and \"reports\"", name)
	}
	for _, k := range requiredEnvironment {
		if raw.Environment[k] == "" {
			return nil, fmt.Errorf("%s: environment has no %q: every figure is shown with its machine and date", name, k)
		}
	}
	if len(*raw.Reports) == 0 {
		return nil, fmt.Errorf("%s: \"reports\" is empty: nothing was measured", name)
	}
	f := &File{Environment: raw.Environment}
	for i, r := range *raw.Reports {
		where := fmt.Sprintf("%s: report %d", name, i+1)
		if r.Name == nil || *r.Name == "" {
			return nil, fmt.Errorf("%s: no \"name\"", where)
		}
		where += fmt.Sprintf(" (%q)", *r.Name)
		if r.Figures == nil {
			return nil, fmt.Errorf("%s: no \"figures\"", where)
		}
		rep := &Report{Name: *r.Name, Command: r.Command, Method: r.Method, Failures: r.Failures, Notes: r.Notes}
		for j, g := range *r.Figures {
			at := fmt.Sprintf("%s, figure %d", where, j+1)
			switch {
			case g.Name == nil || *g.Name == "":
				return nil, fmt.Errorf("%s: no \"name\"", at)
			case g.Value == nil:
				return nil, fmt.Errorf("%s (%q): no \"value\"", at, *g.Name)
			case g.Yardstick == nil:
				return nil, fmt.Errorf("%s (%q): no \"yardstick\": the file was written before figures carried one; re-run `streambench bench all --json FILE`", at, *g.Name)
			case g.Yardstick.Name == "":
				return nil, fmt.Errorf("%s (%q): yardstick has no \"name\" (want what it is, or %q)", at, *g.Name, NoYardstick)
			case g.Target != "" && g.Met == nil:
				return nil, fmt.Errorf("%s (%q): target %q without \"met\"", at, *g.Name, g.Target)
			}
			rep.Figures = append(rep.Figures, Figure{Name: *g.Name, Value: *g.Value, Unit: g.Unit, Target: g.Target, Met: g.Met, Yardstick: *g.Yardstick})
		}
		f.Reports = append(f.Reports, rep)
	}
	return f, nil
}

func position(data []byte, offset int64) (line, col int) {
	offset = min(max(offset, 0), int64(len(data)))
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	return line, int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
}

// Markdown renders a figures file: its machine, date and commit, then a table per report.
func Markdown(f *File) string {
	env := func(k string) string {
		if v := f.Environment[k]; v != "" {
			return v
		}
		return "not recorded"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Measured %s\n\n", env("measured"))
	fmt.Fprintf(&b, "Machine: %s CPUs, %s; Go %s; commit `%s`; load average when written %s; open files %s per process.\n",
		env("cpus"), env("cpu"), env("go"), env("git"), env("loadavg"), env("nofile"))
	for _, r := range f.Reports {
		fmt.Fprintf(&b, "\n#### %s\n\n", cell(r.Name))
		if r.Command != "" {
			fmt.Fprintf(&b, "`%s`", r.Command)
			if r.Method != "" {
				b.WriteString(": ")
			}
		}
		if r.Method != "" {
			b.WriteString(cell(r.Method))
		}
		if r.Command != "" || r.Method != "" {
			b.WriteString("\n\n")
		}
		b.WriteString("| figure | value | target | met | yardstick |\n|---|---|---|---|---|\n")
		for _, g := range r.Figures {
			value := strings.TrimSpace(formatFigure(g.Value) + " " + g.Unit)
			if g.Unit == "×" {
				value = formatFigure(g.Value) + "×"
			}
			target, met := "—", "—"
			if g.Target != "" {
				target, met = g.Target, "yes"
				if g.Met != nil && !*g.Met {
					met = "**no**"
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell(g.Name), cell(value), cell(target), met, cell(g.Yardstick.String()))
		}
		b.WriteString("\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- note: %s\n", cell(n))
		}
		if len(r.Failures) == 0 {
			b.WriteString("- result: clean\n")
		}
		for _, fl := range r.Failures {
			fmt.Fprintf(&b, "- **FAILED**: %s\n", cell(fl))
		}
	}
	return b.String()
}

// cell makes s one line with pipes escaped, for a Markdown table cell or list item.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// RenderMarkdown is ParseFile then Markdown: the figures file named name, as Markdown.
func RenderMarkdown(name string, data []byte) (string, error) {
	f, err := ParseFile(name, data)
	if err != nil {
		return "", err
	}
	return Markdown(f), nil
}

// ReplaceGenerated returns doc with generated between GeneratedBegin and GeneratedEnd; docName names doc in errors.
func ReplaceGenerated(docName, doc, generated string) (string, error) {
	begin := strings.Index(doc, GeneratedBegin+"\n")
	end := strings.Index(doc, GeneratedEnd)
	switch {
	case begin < 0 || end < 0:
		return "", fmt.Errorf("%s: want the lines %q and %q around the generated figures", docName, GeneratedBegin, GeneratedEnd)
	case end < begin || strings.Count(doc, GeneratedBegin) > 1 || strings.Count(doc, GeneratedEnd) > 1:
		return "", fmt.Errorf("%s: want %q once, then %q once", docName, GeneratedBegin, GeneratedEnd)
	}
	if generated != "" && !strings.HasSuffix(generated, "\n") {
		generated += "\n"
	}
	head := doc[:begin+len(GeneratedBegin)+1]
	return head + generated + doc[end:], nil
}
