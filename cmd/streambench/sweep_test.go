package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streambench/streambench/sweep"
)

func TestSweepCommandBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "errors<1%"}, "either --clients"},                                                         // no steps
		{[]string{"--clients", "1,2", "--rate", "5", "--slo", "errors<1%"}, "not both"},                              // both kinds of steps
		{[]string{"--clients", "1,2", "--slo", "ttfc.p99<soon"}, `threshold "ttfc.p99<soon"`},                        // bad SLO
		{[]string{"--clients", "1,2", "--slo", "violations{rule=R-convergence}==0"}, `unknown rule "R-convergence"`}, // a rule no dialect has
		{[]string{"--clients", "1,x", "--slo", "errors<1%"}, "clients"},                                              // not a number
		{[]string{"--clients", "2,2", "--slo", "errors<1%"}, "given twice"},                                          // duplicate step
		{[]string{"--clients", "1", "--slo", "errors<1%", "--mock", "http://x"}, "give --target too"},                // mock alone
		{[]string{"--clients", "1", "--slo", "errors<1%", "--fault", "no-such-fault"}, "--fault"},                    // unknown fault
		{[]string{"--clients", "1", "--slo", "errors<1%", "--stages", "bogus"}, "--stages"},                          // a bad workload flag
	} {
		var out bytes.Buffer
		err := sweepMain(tc.args, &out)
		if code := exitCode(err); code != exitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sweep %q: exit %d, %v; want exit %d and %q", tc.args, code, err, exitUsage, tc.want)
		}
	}
}

// TestSweepCommand runs a real two-step sweep in process against the mock and the runtime,
// scaled down (time scale 0.05, six sessions per step).
func TestSweepCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a mock and a runtime per step")
	}
	// Not parallel: each step's leak check reads this process's gauges (the mock and runtime
	// run in it), and a parallel test's goroutines and descriptors would count as its leaks.
	out := t.TempDir()
	var buf bytes.Buffer
	err := sweepMain([]string{"--clients", "3,1", "--sessions", "6", "--time-scale", "0.05", "--in-process", "--quiet",
		"--slo", "errors<50%", "--slo", "violations==0", "--slo", "goodput>=50%", "--slo", "tokens_per_s>0", "--goodput-slo", "ttft<30s",
		"--out", out, "--run-id", "sw"}, &buf)
	if err != nil {
		t.Fatalf("sweep: %v\n%s", err, buf.String())
	}
	if !strings.Contains(buf.String(), "the knee is above 3 clients") {
		t.Errorf("sweep output:\n%s", buf.String())
	}
	res := readSweep(t, filepath.Join(out, "sw"))
	if len(res.Steps) != 2 || res.Steps[0].Step.Clients != 1 || res.Knee != 1 || res.Steps[1].Sessions != 6 {
		t.Errorf("sweep.json = %+v", res)
	}
	// Every step has the token metrics' headline: tokens counted through the real runtime
	// (sweep.json writes -1 for "none"; tpot may be 0 µs: legacy sim-chat clients get the
	// whole answer in one chunk, so all its tokens arrive at once).
	for _, st := range res.Steps {
		if st.TokensPerSecond <= 0 || st.GoodputShare <= 0 || st.TTFTP99 <= 0 || st.TPOTP50 < 0 {
			t.Errorf("step %s: tokens/s %v, goodput %v, ttft p99 %v µs, tpot p50 %v µs; want all measured", st.Step, st.TokensPerSecond, st.GoodputShare, st.TTFTP99, st.TPOTP50)
		}
	}
	for _, f := range []string{"sweep.md", "sweep.html", "sweep.png", "sw-c1/summary.json", "sw-c3/report.html"} {
		if _, err := os.Stat(filepath.Join(out, "sw", f)); err != nil {
			t.Error(err)
		}
	}
	// streambench report on the sweep directory re-judges and re-renders it; --rejudge with a
	// stricter SLO (no session may start at all) finds no knee.
	buf.Reset()
	if err := reportMain([]string{filepath.Join(out, "sw")}, &buf); err != nil || !strings.Contains(buf.String(), "the knee is above 3 clients") {
		t.Errorf("report on a sweep: %v\n%s", err, buf.String())
	}
	buf.Reset()
	if err := sweepMain([]string{"--rejudge", filepath.Join(out, "sw"), "--slo", "failed<0"}, &buf); err != nil || !strings.Contains(buf.String(), "no knee") {
		t.Errorf("sweep --rejudge: %v\n%s", err, buf.String())
	}
}

// readSweep reads the sweep.json of the sweep directory dir.
func readSweep(t *testing.T, dir string) sweep.Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, sweep.JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	var res sweep.Result
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
