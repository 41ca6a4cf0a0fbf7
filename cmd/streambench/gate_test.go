package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
)

// runGateText runs gateMain and returns its exit code and output, the error's text appended.
func runGateText(args []string) (int, string) {
	var out bytes.Buffer
	err := gateMain(args, &out)
	text := out.String()
	if err != nil {
		text += "\nerror: " + err.Error()
	}
	return exitCode(err), text
}

// savedRun writes a small seeded run: ttfc around 80 ms plus shift, the given violations.
func savedRun(t *testing.T, id string, shift time.Duration, violations map[protocol.Rule]int64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	h := measure.NewHistograms()
	for range 400 {
		for _, sc := range []string{"plain-answer", "tool-loop"} {
			k := measure.Key{Metric: measure.FirstChunk, Scenario: sc, Dialect: "sim-chat"}
			if err := h.Record(k, 60*time.Millisecond+time.Duration(rng.ExpFloat64()*float64(20*time.Millisecond))+shift); err != nil {
				t.Fatal(err)
			}
			g := measure.Key{Metric: measure.ChunkGap, Scenario: sc, Dialect: "sim-chat"}
			if err := h.Record(g, time.Duration(rng.ExpFloat64()*float64(10*time.Millisecond))); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	run := &measure.Run{
		Summary: measure.Summary{RunID: id, Started: start, Ended: start.Add(10 * time.Second),
			Counters: measure.Counters{SessionsStarted: 800, SessionsOK: 800, Frames: 8000,
				Outcomes: map[measure.Outcome]int64{measure.OutcomeCompleted: 800}},
			Violations: violations, Verdict: measure.Verdict{Pass: len(violations) == 0}},
		Histograms: h,
		Timeline:   []measure.TimelinePoint{{Second: 0, Active: 5, Started: 5}, {Second: 1, Active: 3, Completed: 2, Frames: 40}},
	}
	dir := filepath.Join(t.TempDir(), id)
	if err := measure.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGateCommand(t *testing.T) {
	t.Parallel()
	base := savedRun(t, "base", 0, nil)
	slow := savedRun(t, "slow", 200*time.Millisecond, nil)
	broken := savedRun(t, "broken", 0, map[protocol.Rule]int64{protocol.RResetScope: 3})
	junit := filepath.Join(t.TempDir(), "gate.xml")
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string // in the output table or the error
	}{
		// a run passes against itself with a regression check and the default correctness checks
		{"self", []string{"--current", base, "--baseline", base, "--max-regression", "ttfc.p99=10%"}, exitOK, "gate: PASS"},
		// 200 ms slower time to first chunk fails the regression, named, with exit 99
		{"slower", []string{"--current", slow, "--baseline", base, "--max-regression", "ttfc.p99=10%", "--threshold", "violations==0"}, exitThreshold, "ttfc.p99=10%"},
		// violations fail violations==0 (the run given as the argument)
		{"violations", []string{broken, "--threshold", "violations==0"}, exitThreshold, "violations==0"},
		// default checks include violations==0 when none are given
		{"defaults", []string{broken}, exitThreshold, "violations==0"},
		// JUnit written alongside
		{"junit", []string{base, "--threshold", "ttfc.p99<1s", "--junit", junit}, exitOK, "ttfc.p99<1s"},
		// a JUnit file that cannot be written does not mask a failed check: both said, exit 99
		{"junit unwritable, checks failed", []string{broken, "--junit", filepath.Join(t.TempDir(), "no", "such", "gate.xml")}, exitThreshold, "checks failed: violations==0; and --junit: open"},
		// on a run that passes, it is bad input
		{"junit unwritable, checks passed", []string{base, "--junit", filepath.Join(t.TempDir(), "no", "such", "gate.xml")}, exitUsage, "--junit: open"},
		// an unparseable threshold is bad input naming the threshold and what was expected
		{"bad threshold", []string{base, "--threshold", "ttfc.p99<fast"}, exitUsage, `threshold "ttfc.p99<fast": limit "fast": want a duration`},
		// an unknown metric lists the known ones
		{"unknown metric", []string{base, "--threshold", "tfc.p99<1s"}, exitUsage, "want one of connect, headers"},
		// a regression without a baseline
		{"no baseline", []string{base, "--max-regression", "ttfc.p99=10%"}, exitUsage, "needs --baseline"},
		// a missing run directory
		{"missing dir", []string{filepath.Join(t.TempDir(), "nope")}, exitUsage, "run directory"},
		// no run at all
		{"no run", nil, exitUsage, "missing --current"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, text := runGateText(tc.args)
			if got != tc.wantCode {
				t.Errorf("exit code %d, want %d\n%s", got, tc.wantCode, text)
			}
			if !strings.Contains(text, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, text)
			}
		})
	}
	// Parallel subtests finish before the parent's cleanups run: check the JUnit file then.
	t.Cleanup(func() {
		data, err := os.ReadFile(junit)
		if err != nil || !bytes.Contains(data, []byte(`<testcase name="ttfc.p99&lt;1s"`)) {
			t.Errorf("JUnit file: %v\n%s", err, data)
		}
	})
}

func TestReportAndCompareCommands(t *testing.T) {
	t.Parallel()
	a := savedRun(t, "a", 0, nil)
	b := savedRun(t, "b", 50*time.Millisecond, map[protocol.Rule]int64{protocol.RTerminal: 1})
	var out bytes.Buffer
	if err := reportMain([]string{a}, &out); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "report.md", "latency.png", "ttfc.png", "ttfc.svg", "timeline.png"} {
		if _, err := os.Stat(filepath.Join(a, f)); err != nil {
			t.Errorf("report did not write %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(a, "violations.png")); err == nil {
		t.Error("report drew violations.png for a run without violations: an empty plot")
	}
	out.Reset()
	if err := compareMain([]string{a, b}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "ttfc p50 plain-answer/sim-chat") || !strings.Contains(out.String(), "violations") {
		t.Errorf("compare output:\n%s", out.String())
	}
	out.Reset()
	if err := compareMain([]string{a, b, "--markdown"}, &out); err != nil || !strings.HasPrefix(out.String(), "## Comparison: a → b") {
		t.Errorf("compare --markdown: %v\n%s", err, out.String())
	}
	plot := filepath.Join(t.TempDir(), "ab.svg")
	if err := compareMain([]string{a, b, "--plot", plot}, &out); err != nil {
		t.Fatal(err)
	}
	if svg, err := os.ReadFile(plot); err != nil || !bytes.Contains(svg, []byte(">B n=")) {
		t.Errorf("compare --plot wrote no plot of B: %v", err)
	}
	for _, args := range [][]string{{a}, {a, filepath.Join(t.TempDir(), "none")}, {a, b, "--plot", "ab.jpg"}} {
		if code := exitCode(compareMain(args, &out)); code != exitUsage {
			t.Errorf("compare %v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code := exitCode(reportMain(nil, &out)); code != exitUsage {
		t.Errorf("report without a dir: exit %d, want %d", code, exitUsage)
	}
}

// TestGateCatchesRuntimeFaults is the acceptance end to end: real runs against the
// reference runtime, scaled down. A run with --fault slow-first-chunk=200ms fails a regression
// check against a clean baseline with exit 99, naming the check; a run with a rule fault fails
// violations==0; the clean run passes against itself.
func TestGateCatchesRuntimeFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the mock and the runtime")
	}
	t.Parallel()
	out := t.TempDir()
	run := func(id string, extra ...string) string {
		args := append([]string{"--sessions", "24", "--clients", "6", "--time-scale", "0.05", "--in-process", "--quiet",
			"--no-leak-check", "--out", out, "--run-id", id}, extra...)
		err := runRun(args)
		if (id == "clean" || id == "slow") && err != nil {
			t.Errorf("run %s: %v", id, err) // not Fatal: this runs on its own goroutine
		}
		return filepath.Join(out, id)
	}
	// The three runs are independent stacks on their own ports: run them side by side.
	var clean, slow, broken string
	var wg sync.WaitGroup
	wg.Go(func() { clean = run("clean") })
	wg.Go(func() { slow = run("slow", "--fault", "slow-first-chunk=200ms") })
	wg.Go(func() { broken = run("broken", "--fault", "no-reset") })
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		// the clean run against itself
		{"self", []string{clean, "--baseline", clean, "--max-regression", "ttfc.p99=10%", "--threshold", "violations==0"}, exitOK, "gate: PASS"},
		// the slow first chunk against the clean baseline
		{"slow", []string{slow, "--baseline", clean, "--max-regression", "ttfc.p99=10%", "--threshold", "violations==0"}, exitThreshold, "checks failed: ttfc.p99=10%"},
		// a rule fault
		{"rule fault", []string{broken, "--threshold", "violations==0"}, exitThreshold, "violations==0"},
		// the false PASS: no flags at all still fails the rule fault, on the default
		{"rule fault, no flags", []string{broken}, exitThreshold, "violations==0"},
		// and the clean run passes the defaults alone
		{"clean, no flags", []string{clean}, exitOK, "gate: PASS"},
	} {
		code, text := runGateText(tc.args)
		if code != tc.wantCode || !strings.Contains(text, tc.want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", tc.name, code, tc.wantCode, tc.want, text)
		}
	}
}
