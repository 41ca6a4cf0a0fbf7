package selfbench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/stack"
)

// FidelityWires lists the provider wires fidelity can measure the generator on, straight to
// the mock (Options.Wires).
func FidelityWires() []string { return []string{"openai", "anthropic"} }

// wireDialect is the client dialect that speaks a provider wire.
func wireDialect(wire string) (string, error) {
	switch wire {
	case "openai":
		return "openai-chat", nil
	case "anthropic":
		return "anthropic-messages", nil
	}
	return "", fmt.Errorf("wire %q: want one of %s", wire, strings.Join(FidelityWires(), ", "))
}

// fidelityWires is Fidelity with Options.Wires: per wire, the generator speaks its client
// dialect straight to a mock child at the sim-chat measurement's size, so TTFT − scripted TTFT
// is the harness's error on that wire plus the mock's. Every rule must pass.
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
	exe, err := ownExecutable()
	if err != nil {
		return nil, err
	}
	for _, wire := range o.Wires {
		dialect, err := wireDialect(wire)
		if err != nil {
			return nil, err
		}
		mix, err := loadgen.ParseMix("bench-fidelity-"+wire, fmt.Appendf(nil,
			"name: bench-fidelity-%s\nseed: 1\nscenarios: {fidelity: 1}\nprofiles:\n  - name: %s\n    dialect: %s\n    weight: 1\n    targets:\n      - {slug: %s}\n",
			wire, dialect, dialect, dialect))
		if err != nil {
			return nil, fmt.Errorf("bench mix for wire %s: %w", wire, err)
		}
		// A mock of its own per wire: the second run does not start on the first's warm pools.
		mock, err := stack.StartChild(exe, []string{"mock", "--addr", "127.0.0.1:0", "--time-scale", "1", "--scenarios", p.dir})
		if err != nil {
			return nil, fmt.Errorf("wire %s: start mock: %w", wire, err)
		}
		if err := stack.WaitHealthy(mock.URL()); err != nil {
			mock.Stop()
			return nil, fmt.Errorf("wire %s: %w", wire, err)
		}
		cfg := loadgen.Config{
			Mix: mix, MixName: "bench-fidelity-" + wire, Library: p.lib, Rate: p.rate, Duration: p.duration, Warmup: p.warmup,
			MaxInflight: 4 * p.streams, HTTP2: o.HTTP2, Grace: p.length + 30*time.Second,
			Target: mock.URL(), MockURL: mock.URL(), RuntimeMetricsURL: "-", RunID: "bench-fidelity-" + wire,
		}
		probe, err := probeDuring(ctx, exe, p.probe(mock.URL(), wire))
		if err != nil {
			mock.Stop()
			return nil, fmt.Errorf("wire %s: %w", wire, err)
		}
		run, peak, err := runWithPeak(ctx, cfg, o)
		floor, probeErr := probe()
		if err == nil {
			err = probeErr
		}
		if err != nil {
			mock.Stop()
			return nil, fmt.Errorf("wire %s run: %w", wire, err)
		}
		records, err := mockSessions(ctx, mock.URL())
		mock.Stop()
		if err != nil {
			return nil, fmt.Errorf("wire %s: %w", wire, err)
		}
		ttft := mergedMetric(run, measure.TimeToFirstToken)
		p99 := rep.addDelay(wire+": ", "TTFT − scripted TTFT", peak, ttft, p.ttft, rep.withinMs)
		beyond := addFloor(rep, wire, wire+": TTFT − scripted TTFT ", floor, p99)
		rep.withinMs(wire+": harness error p99 beyond the machine's floor (generator − probe)", beyond)
		rep.against(wire+": floor p99 (probe client)", p99-beyond, "ms")
		lag := mergedMetric(run, measure.StartLag)
		rep.add(wire+": start lag p99", quantileMs(lag, 99, 0), "ms")
		rep.add(wire+": late starts (> 1 ms behind schedule)", float64(run.Summary.Counters.LateStarts), "sessions")
		mockStart := streamStartLatency(records, "fidelity")
		rep.add(wire+": mock stream start − request arrival p99", quantileMs(mockStart, 99, 0), "ms")
		var violations int64
		for _, n := range run.Summary.Violations {
			violations += n
		}
		rep.addTarget(wire+": violations", float64(violations), "", "0", violations == 0)
		runFailures(rep, run)
		if ttft.TotalCount() == 0 {
			rep.fail("wire %s: no time to first token measured", wire)
		}
	}
	return rep, nil
}
