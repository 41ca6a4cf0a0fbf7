package selfbench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/stack"
)

// startStack starts the mock (on scenarioDir) and the runtime as child processes serving profiles.
func startStack(scenarioDir string, providerHTTP1 bool) (*stack.Stack, error) {
	return stack.StartChildren(stack.Options{TimeScale: 1, ScenarioDir: scenarioDir, ProviderHTTP1: providerHTTP1, Pprof: true})
}

// writeScenarioDir writes each YAML document to a new temporary DIR/NAME.yaml and loads DIR back.
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

// keptScenarioDir is writeScenarioDir whose cleanup keeps the directory with keep (noted in rep).
func keptScenarioDir(rep *Report, keep bool, docs map[string]string) (dir string, lib *scenarios.Library, cleanup func(), err error) {
	dir, lib, err = writeScenarioDir(docs)
	if err != nil {
		return "", nil, nil, err
	}
	if keep {
		rep.note("scenario directory kept: %s", dir)
		return dir, lib, func() {}, nil
	}
	return dir, lib, func() { os.RemoveAll(dir) }, nil
}

// startScenarioStack is keptScenarioDir then startStack; stop ends both and cleans up.
func startScenarioStack(rep *Report, keep bool, docs map[string]string, providerHTTP1 bool) (st *stack.Stack, lib *scenarios.Library, stop func(), err error) {
	dir, lib, cleanup, err := keptScenarioDir(rep, keep, docs)
	if err != nil {
		return nil, nil, nil, err
	}
	if st, err = startStack(dir, providerHTTP1); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return st, lib, func() { st.Stop(); cleanup() }, nil
}

// pacedScenario is a one-turn scenario of one token per frame; text is a quoted literal or {tokens: N}.
func pacedScenario(name, description string, ttft, itl time.Duration, text string) string {
	return fmt.Sprintf("name: %s\ndescription: %s\ntiming:\n  ttft: %s\n  itl: %s\n  tokensPerFrame: 1\nturns:\n  - text: %s\n",
		name, description, ttft, itl, text)
}

func ownExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find own executable: %w", err)
	}
	return exe, nil
}

// chatMix is one scenario played by opted-in sim-chat clients against the given deployments.
func chatMix(name, scenario string, slugs ...string) (*loadgen.Mix, error) {
	targets := make([]loadgen.Target, len(slugs))
	for i, s := range slugs {
		targets[i] = loadgen.Target{Slug: s}
	}
	mix, err := loadgen.NewMix(name, 1, map[string]float64{scenario: 1}, []loadgen.Profile{
		{Name: "chat", Dialect: "sim-chat", Options: protocol.Options{"optedIn": true}, Weight: 1, Targets: targets},
	})
	if err != nil {
		return nil, fmt.Errorf("bench mix: %w", err)
	}
	return mix, nil
}

// literalText is n words of fixed text, the same answer for every seed (one pre-encoded stream serves all).
func literalText(words int) string {
	vocabulary := strings.Fields("streaming tokens arrive one frame at a time while the harness measures every gap")
	out := make([]string, words)
	for i := range out {
		out[i] = vocabulary[i%len(vocabulary)]
	}
	return strings.Join(out, " ")
}

func mockSessions(ctx context.Context, mockURL string) ([]mockrecords.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return mockrecords.Client{URL: mockURL}.Sessions(ctx)
}

func mergedMetric(run *measure.Run, m measure.Metric) *hdrhistogram.Histogram {
	h, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == m })
	return h
}

// runFailures copies a failed run's verdict reasons into the report, each after prefix.
func runFailures(rep *Report, run *measure.Run, prefix ...string) {
	if !run.Summary.Verdict.Pass {
		for _, r := range run.Summary.Verdict.Reasons {
			rep.fail("%s%s", strings.Join(prefix, ""), r)
		}
	}
}

// addLeakChecks adds how many of run's leak checks were over tolerance and returns how many were made.
func (r *Report) addLeakChecks(name string, run *measure.Run) (checked int) {
	failed := 0
	for _, l := range run.Summary.Leaks {
		if !l.OK {
			failed++
		}
	}
	checked = len(run.Summary.Leaks)
	r.addTarget(name, float64(failed), fmt.Sprintf("of %d", checked), "0", failed == 0 && checked > 0)
	return checked
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

// dialTCP connects to addr, closing the connection when ctx ends or done is called.
func dialTCP(ctx context.Context, addr string) (conn net.Conn, done func(), err error) {
	var d net.Dialer
	if conn, err = d.DialContext(ctx, "tcp", addr); err != nil {
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	return conn, func() { stop(); conn.Close() }, nil
}

// addP50P99 adds h's p50 and p99 in ms as label+" p50" and label+" p99".
func (r *Report) addP50P99(label string, h *hdrhistogram.Histogram) {
	r.add(label+" p50", quantileMs(h, 50, 0), "ms")
	r.add(label+" p99", quantileMs(h, 99, 0), "ms")
}

// addDelay adds the peak open streams and h − offset's p50, p99 (by addP99) and max in ms; it returns the p99.
func (r *Report) addDelay(prefix, what string, peak int64, h *hdrhistogram.Histogram, offset time.Duration, addP99 func(name string, p99 float64)) float64 {
	p99 := quantileMs(h, 99, offset)
	r.add(prefix+"peak open streams", float64(peak), "streams")
	r.add(prefix+what+" p50", quantileMs(h, 50, offset), "ms")
	addP99(prefix+what+" p99", p99)
	r.add(prefix+what+" max", quantileMs(h, 100, offset), "ms")
	return p99
}

// withinMs adds a figure in ms held to ≤ 1 ms.
func (r *Report) withinMs(name string, v float64) { r.addTarget(name, v, "ms", "≤ 1 ms", v <= 1) }

// bucketWidthMicros is the width of the HdrHistogram bucket holding d.
func bucketWidthMicros(d time.Duration) int64 {
	h := measure.NewHistogram()
	if h.RecordValue(d.Microseconds()) != nil {
		return 0
	}
	return h.Max() - h.Min() + 1
}

// runWithPeak runs cfg with progress output (then each, on the run's collector goroutine) and
// returns the run and its peak open streams.
func runWithPeak(ctx context.Context, cfg loadgen.Config, o Options, each ...func(loadgen.Progress)) (*measure.Run, int64, error) {
	update, done := func(loadgen.Progress) {}, func() {}
	if o.Progress != nil {
		update, done = o.Progress()
	}
	var peak int64 // only the run's collector goroutine writes it
	cfg.Outputs = append(cfg.Outputs, loadgen.ProgressFunc(func(p loadgen.Progress) {
		peak = max(peak, p.Active)
		update(p)
		for _, f := range each {
			f(p)
		}
	}))
	cfg.Dialects = dialects.Default()
	run, err := loadgen.Run(ctx, cfg)
	done()
	return run, peak, err
}

// streamStartLatency is the mock's first flush − request arrival over one scenario's records, in µs.
func streamStartLatency(records []mockrecords.Record, scenario string) *hdrhistogram.Histogram {
	h := measure.NewHistogram()
	for _, r := range records {
		if r.Scenario != scenario || r.FirstByte.IsZero() {
			continue
		}
		_ = h.RecordValue(max(0, r.FirstByte.Sub(r.Start).Microseconds()))
	}
	return h
}

// procStatusKiB reads a "Name: N kB" line (VmRSS, VmHWM) of /proc/PID/status (0: this process).
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

// userHZ is the unit of /proc/PID/stat's CPU times, 100 on every Linux Go supports.
const userHZ = 100

// procCPU is a process's user+system CPU time from /proc/PID/stat (10 ms steps); 0 is this process.
func procCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return loadgen.ProcessCPU(), nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: after its ')', utime and stime are the 12th and 13th fields.
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

// liveMem is this process's memory in use after a full collection.
type liveMem struct {
	heap, stacks uint64 // live heap bytes; goroutine stack bytes (StackInuse)
}

func (l liveMem) total() uint64 { return l.heap + l.stacks }

// liveMemory is this process's live heap and goroutine stacks after a full collection: the part
// of RSS that scales with open streams (RSS also holds unreturned freed pages and garbage).
func liveMemory() liveMem {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return liveMem{heap: ms.HeapAlloc, stacks: ms.StackInuse}
}

func openFileLimit() uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	return lim.Cur
}

// loadAverage is the 1-minute load average ("?" when unreadable).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// cpuTimes are the machine's CPU times from /proc/stat in USER_HZ ticks: all, and steal.
type cpuTimes struct{ total, steal uint64 }

func machineCPU() (t cpuTimes, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return t, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return t, false
	}
	// user nice system idle iowait irq softirq steal [guest guest_nice]: guest is in user.
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return t, false
		}
		t.total += v
		if i == 7 {
			t.steal = v
		}
	}
	return t, true
}

func stealShare(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total)
}
