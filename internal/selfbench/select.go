package selfbench

import (
	"encoding/json"
	"fmt"
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
// "all". parts (--part) select parts of abuse and of nothing else; the errors name the flag.
func Select(what string, parts, wires []string) ([]Measurement, error) {
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
