package selfbench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Names lists the measurements' names, in Measurements' order.
func Names() []string {
	var names []string
	for _, m := range Measurements() {
		names = append(names, m.Name)
	}
	return names
}

// AbusePartNames lists the abuse measurement's parts (Options.Parts).
func AbusePartNames() []string {
	var names []string
	for _, p := range AbuseParts() {
		names = append(names, p.Name)
	}
	return names
}

// Select returns the measurements `bench WHAT` runs: the one named what, or every one for
// "all". o.Parts (--part) select parts of abuse, o.Wires (--wire) fidelity's wires and
// o.Shards (--shards) scale's generators, of nothing else; the errors name the flag.
func Select(what string, o Options) ([]Measurement, error) {
	parts, wires := o.Parts, o.Wires
	if o.Shards > 1 && what != "scale" {
		return nil, fmt.Errorf("--shards is for scale alone (got %s)", what)
	}
	if len(parts) > 0 && what != "abuse" {
		return nil, fmt.Errorf("--part selects parts of the abuse measurement, not of %q", what)
	}
	if len(wires) > 0 && what != "fidelity" {
		return nil, fmt.Errorf("--wire selects the provider wires of the fidelity measurement, not of %q", what)
	}
	for _, w := range wires {
		if !slices.Contains(FidelityWires(), w) {
			return nil, fmt.Errorf("--wire %q: want one of %s", w, strings.Join(FidelityWires(), ", "))
		}
	}
	for _, p := range parts {
		if !slices.Contains(AbusePartNames(), p) {
			return nil, fmt.Errorf("--part %q: want one of %s", p, strings.Join(AbusePartNames(), ", "))
		}
	}
	var todo []Measurement
	for _, m := range Measurements() {
		if what == "all" || what == m.Name {
			todo = append(todo, m)
		}
	}
	if len(todo) == 0 {
		return nil, fmt.Errorf("unknown measurement %q: want %s or all", what, strings.Join(Names(), ", "))
	}
	return todo, nil
}

// RunAll runs todo in turn (started is called before each), writing each report to w as it
// ends and, after more than one, the floor ratios; it returns the reports and the names of the
// measurements that were not clean. An interrupt of ctx ends it after the measurement it cut.
func RunAll(ctx context.Context, todo []Measurement, o Options, w io.Writer, started func(Measurement)) (reports []*Report, failed []string, err error) {
	for _, m := range todo {
		started(m)
		rep, err := m.Run(ctx, o)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if err := rep.WriteText(w); err != nil {
			return nil, nil, err
		}
		reports = append(reports, rep)
		if len(rep.Failures) > 0 {
			failed = append(failed, m.Name)
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: interrupted", m.Name)
		}
	}
	if ratios := FloorRatios(reports); ratios != nil && len(reports) > 1 {
		if err := ratios.WriteText(w); err != nil {
			return nil, nil, err
		}
		reports = append(reports, ratios)
	}
	return reports, failed, nil
}

// File is the figures file (`bench --json`): where the figures were measured, and every report.
type File struct {
	Environment map[string]string `json:"environment"`
	Reports     []*Report         `json:"reports"`
}

// WriteFile writes reports with this machine's Environment to path as indented JSON.
func WriteFile(path string, reports []*Report) error {
	b, err := json.MarshalIndent(File{Environment(), reports}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
