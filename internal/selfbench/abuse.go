package selfbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// AbuseParts lists the abuse measurement's parts (a client or the input misbehaving), in the
// order it runs them.
func AbuseParts() []Measurement {
	return []Measurement{
		{"abort-storm", "10,000 sessions aborted at random points (before headers, in TTFT, mid-answer, thinking, tools, compose stop) at 2,000 concurrent: leaks, cancel latency, R-abort", AbortStorm},
		{"stalled-readers", "1,000 clients that stop reading among 1,000 normal ones: the normal clients' TTFC and gaps against a yardstick, the runtime's drops and memory per stalled stream", StalledReaders},
		{"bad-input", "20 classes of malformed requests to the runtime and the mock at 500 requests/s for 30 s: every answer the right 4xx with a JSON error, no panic, no leak", badInputMeasurement},
	}
}

// Abuse runs the abuse parts named in o.Parts (all when empty) as one report, each part's
// figures, notes and failures prefixed with its name.
func Abuse(ctx context.Context, o Options) (*Report, error) {
	return abuse(ctx, o, AbuseParts())
}

func abuse(ctx context.Context, o Options, parts []Measurement) (*Report, error) {
	names := nameList(parts)
	for _, want := range o.Parts {
		if !slices.Contains(names, want) {
			return nil, fmt.Errorf("abuse: unknown part %q: want one of %s", want, strings.Join(names, ", "))
		}
	}
	chosen := names
	if len(o.Parts) > 0 {
		chosen = o.Parts
	}
	rep := &Report{Name: "abuse: " + strings.Join(chosen, ", ")}
	var commands, methods []string
	for _, p := range parts {
		if !slices.Contains(chosen, p.Name) {
			continue
		}
		// Each part notes its own load and steal, unless it is alone: the caller's Run does.
		run := p.Run
		if len(chosen) == 1 {
			run = p.run
		}
		sub, err := run(ctx, o)
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

func badInputMeasurement(ctx context.Context, o Options) (*Report, error) {
	f, err := BadInput(ctx, BadInputOptions{Rate: o.Rate, Duration: o.Duration})
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Name:    fmt.Sprintf("bad input: %d classes at %g requests/s for %s", len(f.Classes), f.Rate, f.Duration),
		Command: fmt.Sprintf("streambench bench abuse --part bad-input --rate %g --duration %s", f.Rate, f.Duration),
		Method: "the reference runtime and the mock in this process; the classes of BadInputClasses sent round-robin, open loop at a constant rate; " +
			"each answer must be the class's status with a JSON error naming the problem; panics counted from the servers' error logs; " +
			"goroutines and file descriptors of this process before the load and after it settled",
	}
	rep.add("requests sent", float64(f.Sent), "requests")
	rep.addTarget("answers with a wrong status", float64(f.WrongStatus), "answers", "0", f.WrongStatus == 0)
	rep.addTarget("right status, no JSON error naming the problem", float64(f.BadError), "answers", "0", f.BadError == 0)
	rep.addTarget("handler panics", float64(f.Panics), "panics", "0", f.Panics == 0)
	rep.addTarget("goroutines after − before", float64(f.GoroutinesAfter-f.GoroutinesBefore), "goroutines", "≤ 0", f.GoroutinesAfter <= f.GoroutinesBefore)
	if f.FDsBefore >= 0 {
		rep.addTarget("file descriptors after − before", float64(f.FDsAfter-f.FDsBefore), "fds", "≤ 0", f.FDsAfter <= f.FDsBefore)
	}
	rep.add("starts late by over 10 ms", float64(f.Late), "starts")
	rep.add("starts dropped", float64(f.Dropped), "starts")
	if err := f.Check(); err != nil {
		rep.fail("%v", err)
	}
	rep.note("per class:\n%s", f.Table())
	return rep, nil
}
