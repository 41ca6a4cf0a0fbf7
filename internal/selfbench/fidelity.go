package selfbench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// fidelityWords is the fidelity scenario's answer length.
const fidelityWords = 20

// fidelityParams are the fidelity measurement's sizes and its scenario, in dir and as lib.
type fidelityParams struct {
	streams                             int
	ttft, length, duration, itl, warmup time.Duration
	rate                                float64
	probeRate                           float64 // the probe client's starts per second
	text, dir                           string
	lib                                 *scenarios.Library
}

// newFidelityParams derives the sizes from o and writes the scenario; the caller removes dir.
func newFidelityParams(o Options) (fidelityParams, error) {
	p := fidelityParams{streams: cmp.Or(o.Streams, 2000), ttft: cmp.Or(o.TTFT, 200*time.Millisecond)}
	p.length = max(cmp.Or(o.StreamLength, 15*time.Second), p.ttft+time.Duration(fidelityWords)*time.Millisecond)
	p.duration = cmp.Or(o.Duration, 30*time.Second)
	p.itl = (p.length - p.ttft) / fidelityWords
	p.rate = float64(p.streams) / p.length.Seconds()
	// The first second (first dials, empty pools) is checked, not measured: not a cold start.
	p.warmup = min(time.Second, p.duration/5)
	p.text = literalText(fidelityWords)
	p.probeRate = max(10, p.rate/5)
	yaml := pacedScenario("fidelity", "constant TTFT and a short literal answer, for the harness's TTFC error", p.ttft, p.itl, fmt.Sprintf("%q", p.text))
	var err error
	p.dir, p.lib, err = writeScenarioDir(map[string]string{"fidelity": yaml})
	return p, err
}

// probe is the probe client's run against target, from the warm-up's end to the starts' end.
func (p fidelityParams) probe(target, wire string) probeRequest {
	return probeRequest{Target: target, Wire: wire, Rate: p.probeRate, Delay: p.warmup, Duration: p.duration - p.warmup, TTFT: p.ttft}
}

// addFloor adds the probe client's figures as the yardsticks of measured+"p50", "p99" and "max",
// and returns the generator's p99 (ms) beyond the floor's.
func addFloor(rep *Report, name, measured string, floor probeResult, p99 float64) (beyond float64) {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	for i, f := range rep.Figures {
		for q, v := range map[string]int64{"p50": floor.P50, "p99": floor.P99, "max": floor.Max} {
			if f.Name == measured+q {
				rep.Figures[i].Yardstick = Yardstick{Name: fmt.Sprintf("%s: floor %s (probe client)", name, q), Value: new(ms(v)), Unit: "ms"}
			}
		}
	}
	rep.add(fmt.Sprintf("%s: floor (probe client, %d streams): TTFT − scripted TTFT p50", name, floor.Streams-floor.Failed), ms(floor.P50), "ms")
	rep.add(name+": floor p99", ms(floor.P99), "ms")
	rep.add(name+": floor max", ms(floor.Max), "ms")
	if floor.Sleeps > 0 {
		rep.add(fmt.Sprintf("%s: timer floor (the probe's own sleeps of the TTFT, %d): late by p50", name, floor.Sleeps), ms(floor.SleepP50), "ms")
		rep.add(name+": timer floor late by p99", ms(floor.SleepP99), "ms")
	}
	if floor.Failed > 0 {
		rep.fail("%s: %d of %d probe streams failed, the first: %s", name, floor.Failed, floor.Streams, floor.FirstFailure)
	}
	if floor.Streams == floor.Failed {
		rep.fail("%s: the probe client measured no stream", name)
	}
	return p99 - ms(floor.P99)
}

// Fidelity measures the generator's TTFC error at ~N open streams against a paced server and
// through the runtime and the mock; with Options.Wires, each provider wire against the mock.
func Fidelity(ctx context.Context, o Options) (*Report, error) {
	p, err := newFidelityParams(o)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(p.dir)
	if len(o.Wires) > 0 {
		return fidelityWires(ctx, o, p)
	}
	streams, ttft, length, duration, itl, rate, warmup := p.streams, p.ttft, p.length, p.duration, p.itl, p.rate, p.warmup
	rep := &Report{
		Name: fmt.Sprintf("fidelity: TTFC − scripted TTFT at %d open streams", streams),
		Command: fmt.Sprintf("streambench bench fidelity --streams %d --ttft %s --stream-length %s --duration %s%s",
			streams, ttft, length, duration, o.transportFlags()),
		Method: fmt.Sprintf("constant TTFT %s, %d-word answer %s apart (sessions ~%s), open loop at %.0f sessions/s for %s (~%d open streams, the first %s a warm-up), "+
			"sim-chat opted in. (1) paced: the generator against a minimal sim-chat server in a child process that sends the first chunk "+
			"exactly TTFT after each request arrives — TTFC − TTFT is the harness's error plus the machine's: alongside, a probe client "+
			"(a minimal open-loop client in a process of its own, %.0f starts/s, from the warm-up's end) samples the same server, and its TTFT error is the machine's floor "+
			"(the loopback and the kernel waking the processes); the generator's p99 beyond the floor's is the harness's own. (2) runtime: generator → runtime → mock, "+
			"each its own process (runtime to mock over "+o.providerProtocol()+") — the difference to (1) is what the runtime and the mock add (the mock's records show how fast it started each stream). "+
			"TTFC is measured from the intended start to the chunk's arrival (the kernel's receive stamp of the read that completed it, generator and probe alike; "+
			"HdrHistogram, 3 digits: ~%dµs buckets at this TTFT).",
			ttft, fidelityWords, itl, length, rate, duration, streams, warmup, p.probeRate, bucketWidthMicros(ttft)),
	}
	textFile := filepath.Join(p.dir, "answer.txt")
	if err := os.WriteFile(textFile, []byte(p.text), 0o644); err != nil {
		return nil, fmt.Errorf("answer text: %w", err)
	}
	mix, err := chatMix("bench-fidelity", "fidelity", "openai-none")
	if err != nil {
		return nil, err
	}
	base := loadgen.Config{
		Mix: mix, MixName: "bench-fidelity", Library: p.lib, Rate: rate, Duration: duration, Warmup: warmup,
		MaxInflight: 4 * streams, HTTP2: o.HTTP2, Grace: length + 30*time.Second,
	}

	// (1) The paced server: the harness's own error.
	paced, err := startBenchChild("paced server", pacedServerMode, "--ttft", ttft.String(), "--itl", itl.String(), "--text-file", textFile)
	if err != nil {
		return nil, err
	}
	cfg := base
	cfg.Target, cfg.RunID, cfg.NoLeakCheck, cfg.RuntimeMetricsURL = paced.URL(), "bench-fidelity-paced", true, "-"
	pacedRun, pacedPeak, floor, err := runWithProbe(ctx, cfg, o, p.probe(paced.URL(), "sim-chat"))
	paced.Stop()
	if err != nil {
		return nil, fmt.Errorf("paced run: %w", err)
	}
	pacedP99 := rep.addDelay("paced: ", "TTFC − TTFT", pacedPeak, mergedMetric(pacedRun, measure.FirstChunk), ttft, rep.withinMs)
	beyond := addFloor(rep, "paced", "paced: TTFC − TTFT ", floor, pacedP99)
	rep.add("paced: late starts (> 1 ms behind schedule)", float64(pacedRun.Summary.Counters.LateStarts), "sessions")
	// What the error is made of: the generator's start lag, and headers (sent at once).
	rep.addP50P99("paced: start lag", mergedMetric(pacedRun, measure.StartLag))
	rep.addP50P99("paced: response headers", mergedMetric(pacedRun, measure.Headers))
	runFailures(rep, pacedRun)

	// (2) Through the runtime and the mock.
	st, err := startStack(p.dir, o.ProviderHTTP1)
	if err != nil {
		return nil, err
	}
	defer st.Stop()
	cfg = base
	cfg.Target, cfg.MockURL, cfg.RunID = st.RuntimeURL, st.MockURL, "bench-fidelity-runtime"
	rtRun, rtPeak, err := runWithPeak(ctx, cfg, o)
	if err != nil {
		return nil, fmt.Errorf("runtime run: %w", err)
	}
	rtP99 := rep.addDelay("runtime: ", "TTFC − TTFT", rtPeak, mergedMetric(rtRun, measure.FirstChunk), ttft, func(name string, p99 float64) {
		rep.add(name, p99, "ms")
		rep.against("paced: TTFC − TTFT p99 (no runtime or mock between)", pacedP99, "ms")
	})
	records, err := mockSessions(ctx, st.MockURL)
	if err != nil {
		return nil, err
	}
	mockStart := streamStartLatency(records, "fidelity")
	rep.addP50P99("mock: stream start − request arrival", mockStart)
	rep.add("runtime path p99 − paced p99 (what runtime + mock add)", rtP99-pacedP99, "ms")
	rep.against("paced: TTFC − TTFT p99", pacedP99, "ms")
	rep.withinMs("harness error p99 beyond the machine's floor (paced − probe)", beyond)
	rep.against("paced: floor p99 (probe client)", pacedP99-beyond, "ms")
	runFailures(rep, rtRun)
	if mockStart.TotalCount() == 0 {
		rep.fail("the mock recorded no fidelity session with a first byte")
	}
	return rep, nil
}

// Rate compares the rate an open loop through the runtime and the mock achieves with its target.
func Rate(ctx context.Context, o Options) (*Report, error) {
	rate := cmp.Or(o.Rate, 200)
	duration := cmp.Or(o.Duration, 20*time.Second)
	rep := &Report{
		Name:    fmt.Sprintf("rate: open loop at %g sessions/s for %s", rate, duration),
		Command: fmt.Sprintf("streambench bench rate --rate %g --duration %s%s", rate, duration, o.transportFlags()),
		Method: "constant arrivals through runtime and mock (child processes), a 0.6 s answer per session; " +
			"achieved at the generator = sessions started / duration; achieved at the mock = (requests − 1) / (last arrival − first arrival)",
	}
	yaml := pacedScenario("rate-answer", "a short answer for the open-loop rate check", 100*time.Millisecond, 50*time.Millisecond, fmt.Sprintf("%q", literalText(10)))
	mix, err := chatMix("bench-rate", "rate-answer", "openai-none")
	if err != nil {
		return nil, err
	}
	st, lib, stop, err := startScenarioStack(rep, false, map[string]string{"rate-answer": yaml}, o.ProviderHTTP1)
	if err != nil {
		return nil, err
	}
	defer stop()
	run, _, err := runWithPeak(ctx, loadgen.Config{
		Target: st.RuntimeURL, MockURL: st.MockURL, Mix: mix, MixName: "bench-rate", Library: lib,
		RunID: "bench-rate", Rate: rate, Duration: duration,
	}, o)
	if err != nil {
		return nil, err
	}
	c := run.Summary.Counters
	atGenerator := float64(c.SessionsStarted) / duration.Seconds()
	records, err := mockSessions(ctx, st.MockURL)
	if err != nil {
		return nil, err
	}
	var arrivals []time.Time
	for _, r := range records {
		if r.Scenario == "rate-answer" && r.Turn == 0 {
			arrivals = append(arrivals, r.Start)
		}
	}
	slices.SortFunc(arrivals, time.Time.Compare)
	within := func(v float64) bool { return v >= rate*0.99 && v <= rate*1.01 }
	rep.addTarget("achieved at the generator", atGenerator, "sessions/s", fmt.Sprintf("%g ± 1%%", rate), within(atGenerator))
	if len(arrivals) > 1 {
		span := arrivals[len(arrivals)-1].Sub(arrivals[0])
		atMock := float64(len(arrivals)-1) / span.Seconds()
		rep.addTarget("achieved at the mock", atMock, "sessions/s", fmt.Sprintf("%g ± 1%%", rate), within(atMock))
		rep.add("deviation at the mock", 100*(atMock-rate)/rate, "%")
		rep.add("requests at the mock", float64(len(arrivals)), "requests")
	} else {
		rep.fail("the mock recorded %d requests of the rate scenario", len(arrivals))
	}
	lag := mergedMetric(run, measure.StartLag)
	rep.add("sessions started", float64(c.SessionsStarted), "sessions")
	rep.add("late starts (> 1 ms behind)", float64(c.LateStarts), "sessions")
	rep.add("dropped starts", float64(c.DroppedStarts), "sessions")
	rep.add("start lag p99", quantileMs(lag, 99, 0), "ms")
	rep.add("start lag max", quantileMs(lag, 100, 0), "ms")
	runFailures(rep, run)
	return rep, nil
}

// FidelityWires lists the provider wires fidelity can measure straight to the mock (Options.Wires).
func FidelityWires() []string { return []string{"openai", "anthropic"} }

// fidelityWires is Fidelity with Options.Wires: TTFT − scripted TTFT on each wire, generator to mock.
func fidelityWires(ctx context.Context, o Options, p fidelityParams) (*Report, error) {
	rep := &Report{
		Name: fmt.Sprintf("fidelity per wire: TTFT − scripted TTFT at %d open streams, generator → mock (%s)", p.streams, strings.Join(o.Wires, ", ")),
		Command: fmt.Sprintf("streambench bench fidelity --wire %s --streams %d --ttft %s --stream-length %s --duration %s%s",
			strings.Join(o.Wires, ","), p.streams, p.ttft, p.length, p.duration, o.transportFlags()),
		Method: fmt.Sprintf("constant TTFT %s, %d-word answer %s apart (sessions ~%s), open loop at %.0f sessions/s for %s (~%d open streams, the first %s a warm-up); "+
			"per wire, the generator speaks its client dialect (openai: openai-chat, POST /v1/chat/completions; anthropic: anthropic-messages, POST /v1/messages) "+
			"straight to the mock in a child process, which paces the script. TTFT runs from the intended start to the arrival of the first frame carrying a token "+
			"(the kernel's receive stamp of the read that completed it; HdrHistogram, 3 digits: ~%dµs buckets at this TTFT); the mock's records give its own stream start latency. "+
			"Alongside, a probe client (a minimal open-loop client in a process of its own, %.0f starts/s from the warm-up's end, the request written by hand, "+
			"the first token frame timed the same way) samples the same mock: its TTFT error is the floor of this machine at that moment "+
			"(the mock's pacing, the loopback, the kernel waking the processes), and the generator's p99 beyond the floor's is the harness's own error.",
			p.ttft, fidelityWords, p.itl, p.length, p.rate, p.duration, p.streams, p.warmup, bucketWidthMicros(p.ttft), p.probeRate),
	}
	for _, wire := range o.Wires {
		if err := fidelityWire(ctx, rep, o, p, wire); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// fidelityWire measures one wire, on a mock of its own (not the previous wire's warm pools).
func fidelityWire(ctx context.Context, rep *Report, o Options, p fidelityParams, wire string) error {
	dialect, ok := map[string]string{"openai": "openai-chat", "anthropic": "anthropic-messages"}[wire]
	if !ok {
		return fmt.Errorf("wire %q: want one of %s", wire, strings.Join(FidelityWires(), ", "))
	}
	mix, err := loadgen.NewMix("bench-fidelity-"+wire, 1, map[string]float64{"fidelity": 1},
		[]loadgen.Profile{{Name: dialect, Dialect: dialect, Weight: 1, Targets: []loadgen.Target{{Slug: dialect}}}})
	if err != nil {
		return fmt.Errorf("bench mix for wire %s: %w", wire, err)
	}
	mock, err := stack.StartChildren(stack.Options{TimeScale: 1, ScenarioDir: p.dir, MockOnly: true})
	if err != nil {
		return fmt.Errorf("wire %s: %w", wire, err)
	}
	defer mock.Stop()
	cfg := loadgen.Config{
		Mix: mix, MixName: "bench-fidelity-" + wire, Library: p.lib, Rate: p.rate, Duration: p.duration, Warmup: p.warmup,
		MaxInflight: 4 * p.streams, HTTP2: o.HTTP2, Grace: p.length + 30*time.Second,
		Target: mock.MockURL, MockURL: mock.MockURL, RuntimeMetricsURL: "-", RunID: "bench-fidelity-" + wire,
	}
	run, peak, floor, err := runWithProbe(ctx, cfg, o, p.probe(mock.MockURL, wire))
	if err != nil {
		return fmt.Errorf("wire %s run: %w", wire, err)
	}
	records, err := mockSessions(ctx, mock.MockURL)
	if err != nil {
		return fmt.Errorf("wire %s: %w", wire, err)
	}
	ttft := mergedMetric(run, measure.TimeToFirstToken)
	p99 := rep.addDelay(wire+": ", "TTFT − scripted TTFT", peak, ttft, p.ttft, rep.withinMs)
	beyond := addFloor(rep, wire, wire+": TTFT − scripted TTFT ", floor, p99)
	rep.withinMs(wire+": harness error p99 beyond the machine's floor (generator − probe)", beyond)
	rep.against(wire+": floor p99 (probe client)", p99-beyond, "ms")
	rep.add(wire+": start lag p99", quantileMs(mergedMetric(run, measure.StartLag), 99, 0), "ms")
	rep.add(wire+": late starts (> 1 ms behind schedule)", float64(run.Summary.Counters.LateStarts), "sessions")
	rep.add(wire+": mock stream start − request arrival p99", quantileMs(streamStartLatency(records, "fidelity"), 99, 0), "ms")
	violations := run.Summary.TotalViolations()
	rep.addTarget(wire+": violations", float64(violations), "", "0", violations == 0)
	runFailures(rep, run)
	if ttft.TotalCount() == 0 {
		rep.fail("wire %s: no time to first token measured", wire)
	}
	return nil
}
