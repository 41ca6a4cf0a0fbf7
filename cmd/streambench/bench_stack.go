package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// startBenchStack starts `streambench mock --scenarios DIR` and `streambench runtime` as child
// processes of this binary (as `run` does for big runs) and waits until both are healthy; their
// process ids let a bench read their memory and CPU from /proc.
func startBenchStack(scenarioDir string, providerHTTP1 bool) (*stack.Stack, error) {
	return stack.StartChildren(stack.Options{TimeScale: 1, ScenarioDir: scenarioDir, ProviderHTTP1: providerHTTP1})
}

// providerProtocol names how the runtime reaches the mock.
func providerProtocol(f *benchFlags) string {
	if f.providerHTTP1 {
		return "HTTP/1.1 (one connection per stream)"
	}
	return "h2c (streams multiplexed on pooled connections)"
}

// writeScenarioDir writes each YAML document to DIR/NAME.yaml in a new temporary directory and
// loads it back as a library (the mock child loads the same directory).
func writeScenarioDir(docs map[string]string) (dir string, lib *scenarios.Library, err error) {
	dir, err = os.MkdirTemp("", "streambench-bench-")
	if err != nil {
		return "", nil, fmt.Errorf("scenario directory: %w", err)
	}
	for name, doc := range docs {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(doc), 0o644); err != nil {
			os.RemoveAll(dir)
			return "", nil, fmt.Errorf("scenario %s: %w", name, err)
		}
	}
	lib, err = scenarios.LoadDir(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("scenario directory %s: %w", dir, err)
	}
	return dir, lib, nil
}

// chatMix is a workload of one scenario played by opted-in sim-chat clients against the given
// deployments (policy none, so the checker expects text only).
func chatMix(name, scenario string, slugs ...string) (*loadgen.Mix, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nseed: 1\nscenarios: {%s: 1}\nprofiles:\n  - name: chat\n    dialect: sim-chat\n    optedIn: true\n    weight: 1\n    targets:\n", name, scenario)
	for _, s := range slugs {
		fmt.Fprintf(&b, "      - {slug: %s}\n", s)
	}
	mix, err := loadgen.ParseMix(name, []byte(b.String()))
	if err != nil {
		return nil, fmt.Errorf("bench mix: %w", err)
	}
	return mix, nil
}

// literalText is n words of fixed text: every session of a scenario using it expects the same
// answer whatever its seed, so a paced server can serve one pre-encoded stream to all.
func literalText(words int) string {
	vocabulary := strings.Fields("streaming tokens arrive one frame at a time while the harness measures every gap")
	out := make([]string, words)
	for i := range out {
		out[i] = vocabulary[i%len(vocabulary)]
	}
	return strings.Join(out, " ")
}

// procStatusKiB reads a "Name:   N kB" line (VmRSS, VmHWM) from /proc/PID/status; pid 0 is
// this process.
func procStatusKiB(pid int, field string) (int64, error) {
	p := "/proc/self/status"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s %s: %w", p, field, err)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("%s: no %s line", p, field)
}

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ, 100 on every Linux architecture
// Go supports.
const userHZ = 100

// procCPU is a process's user+system CPU time from /proc/PID/stat (10 ms resolution).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces; fields after its closing parenthesis
	// start at field 3 (state), so utime (14) and stime (15) are the 12th and 13th.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// liveMemory is this process's live heap plus goroutine stacks after a full collection, the
// part of RSS that scales with open streams (RSS also holds freed pages the runtime has not
// returned yet).
func liveMemory() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse
}

// mockSessions fetches the mock's session records.
func mockSessions(ctx context.Context, mockURL string) ([]mockprovider.SessionRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, mockURL+mockprovider.PathSessions, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mock sessions: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("mock sessions: HTTP %d", resp.StatusCode)
	}
	var body struct {
		Sessions []mockprovider.SessionRecord `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("mock sessions: decoding: %w", err)
	}
	return body.Sessions, nil
}

// mergedMetric merges one metric's histograms over every scenario × dialect of a run.
func mergedMetric(run *measure.Run, m measure.Metric) *hdrhistogram.Histogram {
	out := measure.NewHistogram()
	for _, k := range run.Histograms.Keys() {
		if k.Metric == m {
			out.Merge(run.Histograms.Get(k))
		}
	}
	return out
}

// runFailures copies a failed run's verdict into the report: each reason names what failed
// (violations by rule, leaks, errors with the first messages).
func runFailures(rep *benchReport, run *measure.Run) {
	if !run.Summary.Verdict.Pass {
		for _, r := range run.Summary.Verdict.Reasons {
			rep.fail("%s", r)
		}
	}
}

// leakCount counts the leak checks made and those over tolerance.
func leakCount(run *measure.Run) (checked, failed int) {
	for _, l := range run.Summary.Leaks {
		checked++
		if !l.OK {
			failed++
		}
	}
	return checked, failed
}

// quantileMs is a histogram (µs) quantile minus an offset, in milliseconds.
func quantileMs(h *hdrhistogram.Histogram, q float64, offset time.Duration) float64 {
	if h.TotalCount() == 0 {
		return 0
	}
	v := h.ValueAtQuantile(q)
	if q >= 100 {
		v = h.Max()
	}
	return float64(v-offset.Microseconds()) / 1000
}

// transportFlags are the protocol flags of a measurement's command line, as given.
func (f *benchFlags) transportFlags() string {
	s := ""
	if f.http2 {
		s += " --http2"
	}
	if f.providerHTTP1 {
		s += " --provider-http1"
	}
	return s
}
