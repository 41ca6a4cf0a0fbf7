package loadgen

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/streambench/streambench/loadgen/engine"
	"github.com/streambench/streambench/measure"
)

// Saturation: when the mock, the runtime and the generator share one machine, a latency may be
// a frame's wait for a CPU. The run reads each local process's CPU time before and after the
// load and, with the generator's scheduling lag, says which one saturated.

// Shares of the machine's cores above which all processes, or one alone, count as saturated.
const (
	saturatedMachine = 0.85
	saturatedProcess = 0.9
)

// cpuSource is one process whose CPU time the run reads.
type cpuSource struct {
	name string
	url  string // its /metrics; "" for the generator itself
}

// cpuReading is each readable source's CPU seconds and process start time at one moment.
type cpuReading struct {
	cpu, start map[string]float64
}

// cpuSources are the generator and, when scrape (the leak check's), the local mock and runtime.
func (r *runner) cpuSources(scrape bool) []cpuSource {
	out := []cpuSource{{name: "generator"}}
	if !scrape {
		return out
	}
	if u := r.cfg.MockURL; u != "" && isLoopback(u) {
		out = append(out, cpuSource{name: "mock", url: strings.TrimSuffix(u, "/") + "/metrics"})
	}
	if u := r.cfg.RuntimeMetricsURL; u != "" && u != "-" && isLoopback(u) {
		out = append(out, cpuSource{name: "runtime", url: u})
	}
	return out
}

func isLoopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// readCPU reads every source once; errors leave a source out.
func (r *runner) readCPU(ctx context.Context, sources []cpuSource) cpuReading {
	out := cpuReading{cpu: map[string]float64{}, start: map[string]float64{}}
	for _, src := range sources {
		if src.url == "" {
			out.cpu[src.name] = ProcessCPU().Seconds()
			if st, ok := selfStartTime(); ok {
				out.start[src.name] = st
			}
			continue
		}
		cpu, start, ok := scrapeCPU(ctx, r.client, src.url)
		if ok {
			out.cpu[src.name], out.start[src.name] = cpu, start
		}
	}
	return out
}

// selfStartTime is this process's start time as Prometheus (and an in-process mock) reports it.
func selfStartTime() (float64, bool) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	fams, err := reg.Gather()
	if err != nil {
		return 0, false
	}
	for _, f := range fams {
		if f.GetName() == "process_start_time_seconds" && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// scrapeCPU reads process_cpu_seconds_total and process_start_time_seconds from a /metrics.
func scrapeCPU(ctx context.Context, client *http.Client, u string) (cpu, start float64, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	fams, err := engine.Fetch(ctx, client, u, nil)
	if err != nil {
		return 0, 0, false
	}
	c, s := fams["process_cpu_seconds_total"], fams["process_start_time_seconds"]
	if c == nil || len(c.GetMetric()) != 1 {
		return 0, 0, false
	}
	cpu = c.GetMetric()[0].GetCounter().GetValue()
	if s != nil && len(s.GetMetric()) == 1 {
		start = s.GetMetric()[0].GetGauge().GetValue()
	}
	return cpu, start, true
}

// processLoads is each process's CPU between two readings over wall, one process's sources joined.
func processLoads(sources []cpuSource, before, after cpuReading, wall time.Duration) []measure.ProcessLoad {
	var out []measure.ProcessLoad
	joined := map[string]int{} // start time → index in out
	for _, src := range sources {
		b, okB := before.cpu[src.name]
		a, okA := after.cpu[src.name]
		if !okB || !okA || wall <= 0 {
			continue
		}
		if st := after.start[src.name]; st != 0 {
			key := fmt.Sprint(st)
			if i, ok := joined[key]; ok {
				out[i].Name += "+" + src.name // the same process: its CPU is counted once
				continue
			}
			joined[key] = len(out)
		}
		used := max(a-b, 0)
		out = append(out, measure.ProcessLoad{Name: src.name, CPUSeconds: used, Cores: used / wall.Seconds()})
	}
	return out
}

// saturation marks the saturated processes in loads and says why ("" when none; lag alone is overloadWarning's).
func saturation(loads []measure.ProcessLoad, cores int, lag *hdrhistogram.Histogram) string {
	if cores <= 0 {
		return ""
	}
	var total float64
	busiest := -1
	for i, l := range loads {
		total += l.Cores
		if busiest < 0 || l.Cores > loads[busiest].Cores {
			busiest = i
		}
	}
	machine := total >= saturatedMachine*float64(cores)
	for i := range loads {
		loads[i].Saturated = loads[i].Cores >= saturatedProcess*float64(cores) || (machine && i == busiest)
	}
	var lagP99 time.Duration
	if lag != nil && lag.TotalCount() > 0 {
		lagP99 = time.Duration(lag.ValueAtQuantile(99)) * time.Microsecond
	}
	if lagP99 > OverloadLag {
		for i := range loads {
			if slices.Contains(strings.Split(loads[i].Name, "+"), "generator") {
				loads[i].Saturated = true
			}
		}
	}
	var named, figures []string
	byCPU := false
	for _, l := range loads {
		if l.Saturated {
			named = append(named, l.Name)
		}
		byCPU = byCPU || machine || l.Cores >= saturatedProcess*float64(cores)
		figures = append(figures, fmt.Sprintf("%s %.2f", l.Name, l.Cores))
	}
	if len(named) == 0 || !byCPU {
		return ""
	}
	why := fmt.Sprintf("cores used: %s, of the machine's %d", strings.Join(figures, ", "), cores)
	if len(loads) > 1 {
		why = fmt.Sprintf("cores used: %s, %.2f in all of the machine's %d", strings.Join(figures, ", "), total, cores)
	}
	if lagP99 > OverloadLag {
		why += fmt.Sprintf("; the generator's scheduling lag p99 %v", lagP99.Round(100*time.Microsecond))
	}
	return fmt.Sprintf("saturated: %s (%s): latencies include time spent waiting for a CPU, overheads too; "+
		"measure with fewer clients, or with the target on a machine of its own", strings.Join(named, ", "), why)
}

// roundCores rounds each process's figures as they are printed.
func roundCores(loads []measure.ProcessLoad) {
	for i := range loads {
		loads[i].Cores = math.Round(loads[i].Cores*100) / 100
		loads[i].CPUSeconds = math.Round(loads[i].CPUSeconds*1000) / 1000
	}
}
