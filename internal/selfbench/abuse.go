package selfbench

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/stack"
)

// AbuseParts lists the abuse measurement's parts (a client or the input misbehaving) in run order.
func AbuseParts() []Measurement {
	return []Measurement{
		{"abort-storm", "10,000 sessions aborted at random points (before headers, in TTFT, mid-answer, thinking, tools, compose stop) at 2,000 concurrent: leaks, cancel latency, R-abort", AbortStorm},
		{"stalled-readers", "1,000 clients that stop reading among 1,000 normal ones: the normal clients' TTFC and gaps against a yardstick, the runtime's drops and memory per stalled stream", StalledReaders},
		{"bad-input", "20 classes of malformed requests to the runtime and the mock at 500 requests/s for 30 s: every answer the right 4xx with a JSON error, no panic, no leak", badInputMeasurement},
	}
}

// Abuse runs the parts in o.Parts (all when empty) as one report, each line prefixed with its part.
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

// stormPoint is where in a stream the abort storm's clients leave, and the scenarios that do it.
type stormPoint struct {
	name      string
	scenarios map[string]string // scenario name → YAML
}

// stormTiming is slow enough that the processes keep CPU to spare: cancel latency on saturated
// cores is their run queue (docs/BENCHMARKS.md, "Why the constants").
const stormTiming = "timing:\n  ttft: {kind: uniform, min: 1000ms, max: 4000ms}\n  itl: {kind: uniform, min: 100ms, max: 300ms}\n"

// stormRamp is how long the storm's users take to arrive: the first aborts must not meet a queue.
const stormRamp = 5 * time.Second

// stormPoints are the abort storm's trigger points; every client aborts or stops (compose) before the end.
func stormPoints() []stormPoint {
	doc := func(name, desc, turns, client string) string {
		return fmt.Sprintf("name: %s\ndescription: %s\n%sturns:\n%sclient:\n  %s\n", name, desc, stormTiming, turns, client)
	}
	answer := "  - text: {tokens: 120}\n"
	tool := "  - text: Running the tool now.\n    toolCalls:\n      - name: slow_tool\n        arguments: {n: 1}\n        duration: {kind: uniform, min: 800ms, max: 1200ms}\n  - text: {tokens: 40}\n"
	points := []stormPoint{
		// The client leaves as soon as its request is written: before the response head.
		{"before headers", map[string]string{"storm-before-headers": doc("storm-before-headers", "abort once the request is written", answer, "abort: {beforeHeaders: true}")}},
		// After the head (sent at once), before the first token.
		{"during TTFT", map[string]string{}},
		{"mid-answer", map[string]string{}},
		{"during thinking", map[string]string{"storm-thinking": doc("storm-thinking", "abort while the model thinks", "  - thinking: {tokens: 100}\n    text: {tokens: 40}\n", "abort: {duringThinking: true}")}},
		{"during a tool", map[string]string{"storm-tool": doc("storm-tool", "abort while a tool runs", tool, "abort: {duringTool: true}")}},
		{"compose stop", map[string]string{
			"storm-stop-tool": doc("storm-stop-tool", "compose stop while a tool runs", tool, "stop: {duringTool: true}"),
		}},
	}
	// The first token comes ≥ 500 ms after the latest abort, so a late abort timer still fires first.
	slowTTFT := "timing:\n  ttft: {kind: uniform, min: 800ms, max: 1000ms}\n  itl: {kind: uniform, min: 100ms, max: 300ms}\n"
	for _, after := range []string{"1ms", "50ms", "150ms", "300ms"} {
		name := "storm-ttft-" + after
		points[1].scenarios[name] = fmt.Sprintf("name: %s\ndescription: abort %s after the request, before the first token\n%sturns:\n%sclient:\n  abort: {after: %s}\n", name, after, slowTTFT, answer, after)
	}
	for _, n := range []int{1, 5, 20, 60} {
		name := fmt.Sprintf("storm-mid-answer-%d", n)
		points[2].scenarios[name] = doc(name, fmt.Sprintf("abort after %d answer chunks", n), answer, fmt.Sprintf("abort: {afterChunks: %d}", n))
	}
	for _, n := range []int{3, 30} {
		name := fmt.Sprintf("storm-stop-answer-%d", n)
		points[5].scenarios[name] = doc(name, fmt.Sprintf("compose stop after %d answer chunks", n), answer, fmt.Sprintf("stop: {afterChunks: %d}", n))
	}
	return points
}

// stormMix plays every storm scenario equally through opted-in sim-chat, sim-canvas and compose.
func stormMix(points []stormPoint) (*loadgen.Mix, error) {
	scen := map[string]float64{}
	for _, p := range points {
		for name := range p.scenarios {
			scen[name] = 1
		}
	}
	both := func(opts protocol.Options) []loadgen.Target {
		return []loadgen.Target{{Slug: "openai-all", Options: opts}, {Slug: "anthropic-all", Options: opts}}
	}
	mix, err := loadgen.NewMix("abort-storm", 14, scen, []loadgen.Profile{
		{Name: "chat", Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 2, Targets: both(protocol.Options{"policy": "all"})},
		{Name: "canvas", Dialect: "sim-canvas", Weight: 1, Targets: both(nil)},
		{Name: "compose", Dialect: "compose", Weight: 2, Targets: both(nil)},
	})
	if err != nil {
		return nil, fmt.Errorf("abort storm mix: %w", err)
	}
	return mix, nil
}

// AbortStorm plays o.Sessions sessions aborting at random points, o.Streams at a time, against child processes.
func AbortStorm(ctx context.Context, o Options) (*Report, error) {
	sessions := cmp.Or(o.Sessions, 10000)
	streams := cmp.Or(o.Streams, 2000)
	points := stormPoints()
	docs := map[string]string{}
	pointOf := map[string]string{}
	for _, p := range points {
		for name, doc := range p.scenarios {
			docs[name], pointOf[name] = doc, p.name
		}
	}
	rep := &Report{
		Name:    fmt.Sprintf("abort storm: %d sessions aborted at random points, %d concurrent", sessions, streams),
		Command: fmt.Sprintf("streambench bench abuse --part abort-storm --sessions %d --streams %d%s", sessions, streams, o.transportFlags()),
		Method: fmt.Sprintf("%d scenarios, equally weighted, each ending with the client leaving: %s; "+
			"closed loop, %d users (arriving over %s) back to back until %d sessions, 5 tokens/s per stream; opted-in sim-chat (every frame kind visible), sim-canvas and compose (stop scenarios stop for real, elsewhere they abort). "+
			"Mock and runtime are child processes (the runtime talks %s to the mock). Cancel latency: the client's abort → the mock saw its client go (mock session records); "+
			"leaks: every live-thing gauge of runtime, mock and generator before the load and after the drain",
			len(docs), pointList(points), streams, stormRamp, sessions, o.providerProtocol()),
	}
	mix, err := stormMix(points)
	if err != nil {
		return nil, err
	}
	st, lib, stop, err := startScenarioStack(rep, o.KeepDir, docs, o.ProviderHTTP1)
	if err != nil {
		return nil, err
	}
	defer stop()

	var (
		mu      sync.Mutex
		aborted = map[string]int{} // point → sessions that ended aborted or stopped
	)
	started := time.Now()
	cpu0 := stackCPU(st)
	run, peak, err := runWithPeak(ctx, loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: mix, MixName: "abort-storm", Library: lib,
		RunID: "bench-storm-" + time.Now().UTC().Format("150405"), Sessions: int64(sessions),
		Stages: loadgen.Stages{{Duration: stormRamp, Target: float64(streams)}, {Duration: time.Hour, Target: float64(streams)}},
		Grace:  time.Minute, StreamTimeout: time.Minute, HTTP2: o.HTTP2,
		Outputs: []loadgen.Output{loadgen.SessionEndFunc(func(e loadgen.SessionEnd) {
			if e.Outcome == measure.OutcomeAborted {
				mu.Lock()
				aborted[pointOf[e.Scenario]]++
				mu.Unlock()
			}
		})},
	}, o)
	if err != nil {
		return nil, err
	}
	busy := (stackCPU(st) - cpu0).Seconds() / time.Since(started).Seconds() / float64(runtime.NumCPU())
	c := run.Summary.Counters
	rep.add("CPU of generator + runtime + mock, share of the machine's cores (start → drain)", 100*busy, "%")
	rep.add("sessions started", float64(c.SessionsStarted), "sessions")
	rep.add("peak concurrent streams", float64(peak), "streams")
	nAborted := c.Outcome(measure.OutcomeAborted)
	rep.addTarget("sessions aborted or stopped by the client", float64(nAborted), "sessions", fmt.Sprintf("= %d", sessions), nAborted == int64(sessions))
	rep.addTarget("R-abort violations", float64(run.Summary.Violations[protocol.RAbort]), "violations", "0", run.Summary.Violations[protocol.RAbort] == 0)
	rep.addTarget("violations (every rule)", float64(run.Summary.TotalViolations()), "violations", "0", run.Summary.TotalViolations() == 0)
	rep.addTarget("sessions with an error outcome (stalled, over time, cut included)", float64(c.Errors()), "errors", "0", c.Errors() == 0)
	cancel := mergedMetric(run, measure.CancelLatency)
	rep.add("cancel latency samples", float64(cancel.TotalCount()), "aborts")
	rep.add("cancel latency p50", quantileMs(cancel, 50, 0), "ms")
	p99 := quantileMs(cancel, 99, 0)
	rep.addTarget("cancel latency p99", p99, "ms", "< 20 ms", cancel.TotalCount() > 0 && p99 < 20)
	rep.add("cancel latency max", quantileMs(cancel, 100, 0), "ms")
	// Cancel latency exists where a provider stream was open; the leak check's tools gauge covers tools.
	for _, p := range points {
		h, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.CancelLatency && pointOf[k.Scenario] == p.name })
		rep.add(fmt.Sprintf("sessions aborted: %s", p.name), float64(aborted[p.name]), "sessions")
		if h.TotalCount() > 0 {
			rep.add(fmt.Sprintf("cancel latency p99 %s (%d with a provider stream open)", p.name, h.TotalCount()), quantileMs(h, 99, 0), "ms")
		}
	}
	heads, _ := run.Histograms.Merged(func(k measure.Key) bool {
		return k.Metric == measure.Headers && k.Scenario == "storm-before-headers"
	})
	rep.addTarget("before-headers sessions that saw a response head", float64(heads.TotalCount()), fmt.Sprintf("of %d", aborted["before headers"]), "0", heads.TotalCount() == 0)
	ttfc, _ := run.Histograms.Merged(func(k measure.Key) bool {
		return k.Metric == measure.FirstChunk && pointOf[k.Scenario] == "during TTFT"
	})
	rep.addTarget("during-TTFT sessions that saw a first chunk", float64(ttfc.TotalCount()), fmt.Sprintf("of %d", aborted["during TTFT"]), "0", ttfc.TotalCount() == 0)

	checked := rep.addLeakChecks("leak checks over tolerance", run)
	for _, l := range run.Summary.Leaks {
		rep.add(fmt.Sprintf("leak check: %s %s after − before (tolerance %g)", l.Source, l.Name, l.Tolerance), l.Delta, "")
	}
	lag := mergedMetric(run, measure.GeneratorLag)
	rep.addTarget("generator scheduling lag p99", quantileMs(lag, 99, 0), "ms", fmt.Sprintf("≤ %v (else the verdict warns)", loadgen.OverloadLag), lag.TotalCount() > 0 && quantileMs(lag, 99, 0) <= float64(loadgen.OverloadLag.Milliseconds()))
	for _, w := range run.Summary.Verdict.Warnings {
		rep.note("%s", w)
	}
	rep.add("storm duration (start → leak check done)", time.Since(started).Seconds(), "s")
	runFailures(rep, run)
	if checked == 0 {
		rep.fail("no leak check was made")
	}
	return rep, nil
}

func pointList(points []stormPoint) string {
	var out []string
	for _, p := range points {
		out = append(out, fmt.Sprintf("%s (%d)", p.name, len(p.scenarios)))
	}
	return strings.Join(out, ", ")
}

// stackCPU is the CPU time so far of the generator (this process), the mock and the runtime.
func stackCPU(st *stack.Stack) time.Duration {
	return roleCPU(0) + roleCPU(st.Mock.PID()) + roleCPU(st.Runtime.PID())
}
