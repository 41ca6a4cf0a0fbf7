// Package selfbench measures streambench's own costs and fidelity, each as a Report of typed
// figures; measurements needing separate processes start the running executable's subcommands.
package selfbench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/streambench/streambench/loadgen"
)

// Options are every measurement's settings, one per `bench` flag; zero means the default.
type Options struct {
	Streams         int           // --streams: concurrent streams
	Duration        time.Duration // --duration
	Ramp            time.Duration // --ramp (scale)
	StreamLength    time.Duration // --stream-length (scale, fidelity)
	InterToken      time.Duration // --itl (scale)
	TTFT            time.Duration // --ttft (fidelity)
	Rate            float64       // --rate: sessions (rate) or requests (bad-input) per second
	TokensPerSecond float64       // --tokens-per-second (pacing, floor, path)
	Sessions        int           // --sessions (abort-storm)
	Stalled         int           // --stalled (stalled-readers)
	IdleTimeout     time.Duration // --idle-timeout: the runtime's client idle timeout (stalled-readers)
	Wires           []string      // --wire: fidelity's provider wires (FidelityWires)
	Parts           []string      // --part: abuse's parts (AbuseParts; empty: all)
	HTTP2           bool          // --http2: the generator speaks h2c
	ProviderHTTP1   bool          // --provider-http1: the runtime speaks HTTP/1.1 to the mock
	DefaultMix      bool          // --default-mix: scale plays the default mix among its long streams
	KeepDir         bool          // --keep: keep the generated scenario directory (noted in the report)
	Shards          int           // --shards: scale's generator processes (0, 1: this process)
	ProfileDir      string        // --profile: where scale, pacing and path write profiles
	// Progress, when set, gives each load run its progress callback and a function called when it ends.
	Progress func() (update func(loadgen.Progress), done func())
}

// Measurement is one thing the bench command can measure.
type Measurement struct {
	Name    string // the measurement's subcommand ("scale", "codec", ...).
	Summary string // says in one line what it measures.
	run     func(ctx context.Context, o Options) (*Report, error)
}

// Measurements lists the measurements in `bench all`'s order: scale first, while this
// process's heap holds nothing of earlier ones (its memory per stream is a difference of RSS).
func Measurements() []Measurement {
	return []Measurement{
		{"scale", "N concurrent streams through mock, runtime and generator in separate processes: errors, violations, leaks, memory per stream, CPU per frame", Scale},
		{"fidelity", "TTFC − scripted TTFT at 2,000 streams, through the runtime and against a paced server, beside a probe client's floor and the timer floor sampled at the same time (the harness's own error is the excess over it); frames timed at arrival (the kernel's receive stamp)", Fidelity},
		{"rate", "an open-loop run's achieved session rate against its target", Rate},
		{"codec", "SSE decode of ~60-byte data frames: events/s per core, ns and allocations per event", Codec},
		{"abuse", "abort storm and stalled readers against mock + runtime in separate processes (leaks, cancel latency, R-abort, the others' latency, slow-client drops), and bad input at load (parts: --part)", Abuse},
		{"floor", "the bare SSE floors: a naive server to a minimal client, direct and through a line-copying relay, at 1,000 and 2,000 streams × 20 events/s (CPU per event, memory per stream)", Floor},
		{"path", "mock → runtime → generator against the two-hop floor in the same run, at 1,000 and 2,000 streams × 20 tokens/s (CPU per answer chunk ÷ floor, target ≤ 1.25×), and the generator against a minimal client playing the same streams through the same mock and runtime (CPU, target ≤ 1.1×; memory per busy stream)", Path},
		{"pacing", "the mock beside a naive reference server, each in its own process, at 2,000 streams × 20 tokens/s (TTFT, gap and end-of-stream error, CPU per token, RSS), then the mock's in-process self-test", Pacing},
	}
}

// stealWarn is the steal share above which latency figures are the host's (docs/BENCHMARKS.md).
const stealWarn = 0.05

// Run measures and notes the machine's load and CPU steal: every figure depends on them.
func (m Measurement) Run(ctx context.Context, o Options) (*Report, error) {
	before := loadAverage()
	cpu0, stat := machineCPU()
	rep, err := m.run(ctx, o)
	if err != nil {
		return nil, err
	}
	rep.note("load average before %s, after %s (%d CPUs: %s)", before, loadAverage(), runtime.NumCPU(), cmp.Or(CPUModel(), "model unknown"))
	if cpu1, ok := machineCPU(); stat && ok {
		steal := stealShare(cpu0, cpu1)
		rep.note("CPU steal during the measurement: %.1f%% of the machine's CPU time (the hypervisor running others on this VM's vCPUs; latency tails grow with it)", 100*steal)
		if steal >= stealWarn {
			rep.note("steal at %.0f%% or more: the latency figures and their targets above measure the host's contention as much as this code; re-run when steal is low", 100*stealWarn)
		}
	}
	return rep, nil
}

// Environment records where and when the figures were measured, and from which revision.
func Environment() map[string]string {
	env := map[string]string{
		"go":       runtime.Version(),
		"cpus":     fmt.Sprint(runtime.NumCPU()),
		"measured": time.Now().UTC().Format(time.RFC3339),
		"nofile":   fmt.Sprint(openFileLimit()),
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		env["loadavg"] = strings.TrimSpace(string(b))
	}
	if m := CPUModel(); m != "" {
		env["cpu"] = m
	}
	if rev := revision(); rev != "" {
		env["git"] = rev
	}
	return env
}

// revision is the binary's VCS stamp; without one (go run), the working directory's HEAD.
func revision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" {
			rev = rev[:min(len(rev), 7)]
			if modified == "true" {
				rev += "-modified"
			}
			return rev
		}
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		return strings.TrimSpace(string(out)) + " (the working directory's HEAD: the binary has no VCS stamp)"
	}
	return ""
}

// RaiseOpenFileLimit lifts the open-files soft limit to the hard one, for this process and its children.
func RaiseOpenFileLimit() {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < lim.Max {
		lim.Cur = lim.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
}

// transportFlags are the protocol flags of a measurement's command line.
func (o Options) transportFlags() string {
	s := ""
	if o.HTTP2 {
		s += " --http2"
	}
	if o.ProviderHTTP1 {
		s += " --provider-http1"
	}
	return s
}

func (o Options) providerProtocol() string {
	if o.ProviderHTTP1 {
		return "HTTP/1.1 (one connection per stream)"
	}
	return "h2c (streams multiplexed on pooled connections)"
}

func (o Options) generatorProtocol() string {
	if o.HTTP2 {
		return "h2c"
	}
	return "one HTTP/1.1 connection per stream"
}

// CPUModel is the first "model name" of /proc/cpuinfo ("" where there is none).
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Names lists the measurements' names, in Measurements' order.
func Names() []string { return nameList(Measurements()) }

// AbusePartNames lists the abuse measurement's parts (Options.Parts).
func AbusePartNames() []string { return nameList(AbuseParts()) }

func nameList(ms []Measurement) []string {
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	return names
}

// Select returns the measurements `bench WHAT` runs (what, or every one for "all"), refusing
// --part, --wire and --shards for a measurement that has none.
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

// RunAll runs todo in turn, writing each report to w and, after more than one, the floor ratios;
// it returns the reports and the names of those not clean, and stops after a measurement ctx cut.
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

// File is the figures file (`bench --json`).
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
