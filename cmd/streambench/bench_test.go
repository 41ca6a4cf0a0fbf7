package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/internal/selfbench"
)

// benchChildEnv marks a run of this test binary as a streambench child process (mock, runtime,
// paced server): the bench measurements start children with os.Executable, which in tests is
// the test binary.
const benchChildEnv = "STREAMBENCH_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) == "1" && len(os.Args) > 1 && !strings.HasPrefix(os.Args[1], "-test.") {
		os.Exit(run(os.Args[1:]))
	}
	os.Setenv(benchChildEnv, "1")
	os.Exit(m.Run())
}

// runBenchJSON runs `streambench bench ARGS --quiet --json FILE` in a child process (this test
// binary as main: the generator's leak check reads its own process's goroutines and
// descriptors, which parallel tests in this process would move) and returns its exit code and
// what it wrote.
func runBenchJSON(t *testing.T, args ...string) (int, selfbench.File) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bench.json")
	cmd := exec.Command(os.Args[0], append(append([]string{"bench"}, args...), "--quiet", "--json", file)...)
	output, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("bench %v: %v", args, err)
	}
	if code != exitOK {
		t.Logf("bench %v exited %d:\n%s", args, code, output)
	}
	var out selfbench.File
	if b, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("--json file: %v", err)
		}
	}
	return code, out
}

// benchReport is runBenchJSON's one report, failing the test on another exit code or count.
func benchReport(t *testing.T, args ...string) *selfbench.Report {
	t.Helper()
	code, out := runBenchJSON(t, args...)
	if code != exitOK || len(out.Reports) != 1 {
		t.Fatalf("exit %d, %s", code, describeReports(out.Reports))
	}
	return out.Reports[0]
}

// noFailures fails the test for each failure rep reports.
func noFailures(t *testing.T, rep *selfbench.Report) {
	t.Helper()
	if len(rep.Failures) > 0 {
		t.Errorf("failures: %v", rep.Failures)
	}
}

// figure returns the named figure of rep, failing the test when it is missing.
func figure(t *testing.T, rep *selfbench.Report, name string) selfbench.Figure {
	t.Helper()
	for _, f := range rep.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("%s: no figure %q in %+v", rep.Name, name, rep.Figures)
	return selfbench.Figure{}
}

// TestBenchCodecPrintsAndWritesJSON runs the in-process measurement through the command: its
// table on standard output and its figures in the --json file.
func TestBenchCodecPrintsAndWritesJSON(t *testing.T) {
	t.Parallel()
	code, out := runBenchJSON(t, "codec")
	if code != exitOK || len(out.Reports) != 1 {
		t.Fatalf("exit %d, %s", code, describeReports(out.Reports))
	}
	if f := figure(t, out.Reports[0], "events/s per core"); f.Value <= 0 || f.Unit != "M events/s" || f.Target == "" {
		t.Errorf("events/s per core: %+v", f)
	}
	for _, key := range []string{"go", "cpus", "measured", "nofile"} {
		if out.Environment[key] == "" {
			t.Errorf("environment lacks %q: %v", key, out.Environment)
		}
	}
}

func TestBenchScaleSmall(t *testing.T) {
	t.Parallel()
	code, out := runBenchJSON(t, "scale", "--streams", "20", "--ramp", "500ms", "--stream-length", "3s", "--itl", "100ms")
	if code != exitOK {
		t.Fatalf("exit %d, %s", code, describeReports(out.Reports))
	}
	if len(out.Reports) != 1 {
		t.Fatalf("want one report, got %d", len(out.Reports))
	}
	rep := out.Reports[0]
	noFailures(t, rep)
	for _, row := range []struct {
		name string
		want func(v float64) bool
	}{
		{"peak concurrent streams", func(v float64) bool { return v == 20 }}, // every stream open at once
		{"transport errors", func(v float64) bool { return v == 0 }},
		{"violations", func(v float64) bool { return v == 0 }},
		{"leak checks over tolerance", func(v float64) bool { return v == 0 }},
		{"sessions ok", func(v float64) bool { return v == 20 }},                  // one session per user
		{"generator RSS per open stream", func(v float64) bool { return v != 0 }}, // measured, whatever its size
		{"generator CPU per received frame", func(v float64) bool { return v > 0 }},
		{"frames received", func(v float64) bool { return v >= 20*28 }}, // 28 tokens per stream at least
	} {
		if f := figure(t, rep, row.name); !row.want(f.Value) {
			t.Errorf("%s = %v %s", row.name, f.Value, f.Unit)
		}
	}
	if out.Environment["cpus"] == "" {
		t.Errorf("environment not recorded: %v", out.Environment)
	}
}

func TestBenchFidelitySmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "fidelity", "--streams", "20", "--ttft", "50ms", "--stream-length", "500ms", "--duration", "1s")
	noFailures(t, rep)
	// Both paths ran streams and measured a first chunk no earlier than the script allows.
	for _, name := range []string{"paced: TTFC − TTFT p50", "runtime: TTFC − TTFT p50", "mock: stream start − request arrival p50"} {
		if f := figure(t, rep, name); f.Value < -0.1 {
			t.Errorf("%s = %v ms: a first chunk before the scripted TTFT", name, f.Value)
		}
	}
	if f := figure(t, rep, "paced: peak open streams"); f.Value < 1 {
		t.Errorf("paced run opened no stream: %+v", f)
	}
}

// TestBenchFidelityWireSmall: per wire, the generator's client dialect straight to the mock
// measures a TTFT no earlier than scripted, with every rule passing.
func TestBenchFidelityWireSmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "fidelity", "--wire", "openai,anthropic", "--streams", "20", "--ttft", "50ms", "--stream-length", "500ms", "--duration", "1s")
	noFailures(t, rep)
	for _, wire := range []string{"openai", "anthropic"} {
		if f := figure(t, rep, wire+": TTFT − scripted TTFT p50"); f.Value < -0.1 {
			t.Errorf("%s: TTFT − TTFT p50 = %v ms: a first token before the scripted TTFT", wire, f.Value)
		}
		if f := figure(t, rep, wire+": peak open streams"); f.Value < 1 {
			t.Errorf("%s: no stream opened: %+v", wire, f)
		}
		if f := figure(t, rep, wire+": violations"); f.Value != 0 {
			t.Errorf("%s: %v violations", wire, f.Value)
		}
	}
}

func TestBenchRateSmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "rate", "--rate", "20", "--duration", "2s")
	if f := figure(t, rep, "sessions started"); f.Value != 40 {
		t.Errorf("sessions started = %v, want 20/s × 2s", f.Value)
	}
	if f := figure(t, rep, "requests at the mock"); f.Value != 40 {
		t.Errorf("requests at the mock = %v, want 40", f.Value)
	}
	// How close the achieved rate is depends on the machine's load: that is the bench
	// command's figure, not a unit test's bound (loadgen's rate test proves the pacer in
	// virtual time). Here: the figure is measured from the mock's arrivals.
	if f := figure(t, rep, "achieved at the mock"); f.Value <= 0 {
		t.Errorf("achieved at the mock = %v sessions/s: not measured", f.Value)
	}
}

func TestBenchBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no measurement named", nil},
		{"unknown measurement", []string{"warp"}},
		{"two measurements", []string{"codec", "scale"}},
		{"negative streams", []string{"scale", "--streams", "-5"}},
		{"unknown flag", []string{"codec", "--speed", "3"}},
		{"unknown abuse part", []string{"abuse", "--part", "hostile"}},
		{"part of another measurement", []string{"codec", "--part", "abort-storm"}},
		{"negative stalled readers", []string{"abuse", "--stalled", "-1"}},
		{"unknown wire", []string{"fidelity", "--wire", "grpc"}},
		{"wire of another measurement", []string{"rate", "--wire", "openai"}},
	} {
		if code := run(append([]string{"bench"}, tc.args...)); code != exitUsage {
			t.Errorf("%s: exit %d, want %d", tc.name, code, exitUsage)
		}
	}
}

// TestBenchAbuseSmall runs both abuse parts at a small size through the command: every
// session of the storm aborted, no leak, no R-abort; every stalled reader dropped and counted.
func TestBenchAbuseSmall(t *testing.T) {
	t.Parallel()
	rep := benchReport(t, "abuse", "--part", "abort-storm", "--part", "stalled-readers",
		"--sessions", "80", "--streams", "20", "--stalled", "5", "--duration", "7s", "--idle-timeout", "2s")
	noFailures(t, rep)
	for _, row := range []struct {
		name string
		want func(v float64) bool
	}{
		{"abort-storm: sessions aborted or stopped by the client", func(v float64) bool { return v == 80 }}, // every session left
		{"abort-storm: R-abort violations", func(v float64) bool { return v == 0 }},
		{"abort-storm: leak checks over tolerance", func(v float64) bool { return v == 0 }},
		{"abort-storm: before-headers sessions that saw a response head", func(v float64) bool { return v == 0 }},
		{"abort-storm: cancel latency samples", func(v float64) bool { return v > 0 }}, // joined with the mock's records
		{"stalled-readers: stalled readers opened", func(v float64) bool { return v == 5 }},
		{"stalled-readers: stalled streams dropped and counted by the runtime", func(v float64) bool { return v == 5 }},
		{"stalled-readers: runtime client streams open after the drops", func(v float64) bool { return v == 0 }},
		{"stalled-readers: TTFC p99 yardstick", func(v float64) bool { return v > 0 }}, // both runs measured
		{"stalled-readers: TTFC p99 among stalled readers", func(v float64) bool { return v > 0 }},
	} {
		if f := figure(t, rep, row.name); !row.want(f.Value) {
			t.Errorf("%s = %v %s", row.name, f.Value, f.Unit)
		}
	}
}

// describeReports quotes each report's failures and notes, for a failed bench test.
func describeReports(reps []*selfbench.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d reports", len(reps))
	for _, r := range reps {
		fmt.Fprintf(&b, "\n%s: failures %q; notes %q", r.Name, r.Failures, r.Notes)
	}
	return b.String()
}
