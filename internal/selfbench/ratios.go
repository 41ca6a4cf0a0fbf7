package selfbench

import (
	"fmt"
	"slices"
	"strings"
)

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

// FloorRatios is `bench all`'s closing table: every figure that has a floor divided by it (at
// the floor's largest size), the path's and fidelity's own ratios repeated; nil without a floor.
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
