package selfbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// AbuseParts lists the sub-measurements of the abuse measurement, in the order it runs them:
// each shows how streambench and the reference stack behave when a client or the input
// misbehaves. A new kind of abuse is one more entry here.
func AbuseParts() []Measurement {
	return []Measurement{
		{"abort-storm", "10,000 sessions aborted at random points (before headers, in TTFT, mid-answer, thinking, tools, compose stop) at 2,000 concurrent: leaks, cancel latency, R-abort", AbortStorm},
		{"stalled-readers", "1,000 clients that stop reading among 1,000 normal ones: the normal clients' TTFC and gaps against a yardstick, the runtime's drops and memory per stalled stream", StalledReaders},
	}
}

// Abuse runs the abuse parts named in o.Parts (every part when empty) and returns one report
// holding each part's figures, notes and failures, prefixed with the part's name.
func Abuse(ctx context.Context, o Options) (*Report, error) {
	parts := AbuseParts()
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	for _, want := range o.Parts {
		if !slices.Contains(names, want) {
			return nil, fmt.Errorf("abuse: unknown part %q: want one of %s", want, strings.Join(names, ", "))
		}
	}
	rep := &Report{Name: "abuse: " + strings.Join(selected(names, o.Parts), ", ")}
	var commands, methods []string
	for _, p := range parts {
		if len(o.Parts) > 0 && !slices.Contains(o.Parts, p.Name) {
			continue
		}
		sub, err := p.Run(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("abuse %s: %w", p.Name, err)
		}
		rep.merge(p.Name, sub)
		commands = append(commands, sub.Command)
		methods = append(methods, p.Name+": "+sub.Method)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Command = strings.Join(commands, "; ")
	rep.Method = strings.Join(methods, " | ")
	return rep, nil
}

// selected is the names to run: want when given, else all.
func selected(all, want []string) []string {
	if len(want) == 0 {
		return all
	}
	return want
}

// merge appends sub's figures, notes and failures to r, each named "part: ...".
func (r *Report) merge(part string, sub *Report) {
	for _, f := range sub.Figures {
		f.Name = part + ": " + f.Name
		r.Figures = append(r.Figures, f)
	}
	for _, n := range sub.Notes {
		r.Notes = append(r.Notes, part+": "+n)
	}
	for _, f := range sub.Failures {
		r.Failures = append(r.Failures, part+": "+f)
	}
}
