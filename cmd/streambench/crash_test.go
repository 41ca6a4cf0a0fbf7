package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench/internal/proctest"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/stack"
	"github.com/streambench/streambench/verdict"
)

// liveMain is this test binary running as streambench (TestMain's child mode) in a process of
// its own, which a test can signal and kill, with its output collected as it comes.
type liveMain struct {
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	out    bytes.Buffer
}

func startMain(t *testing.T, args ...string) *liveMain {
	t.Helper()
	m := &liveMain{cmd: exec.Command(os.Args[0], args...), exited: make(chan struct{})}
	m.cmd.Env = append(os.Environ(), benchChildEnv+"=1")
	pr, pw := io.Pipe()
	m.cmd.Stdout, m.cmd.Stderr = pw, pw
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			m.mu.Lock()
			m.out.WriteString(sc.Text() + "\n")
			m.mu.Unlock()
		}
	}()
	go func() { _ = m.cmd.Wait(); pw.Close(); close(m.exited) }()
	t.Cleanup(func() {
		_ = m.cmd.Process.Kill()
		<-m.exited
	})
	return m
}

// output is everything the process printed so far.
func (m *liveMain) output() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.out.String()
}

// exitCode waits up to timeout for the process to exit and returns its exit code.
func (m *liveMain) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-m.exited:
	case <-time.After(timeout):
		t.Fatalf("still running %s later:\n%s", timeout, m.output())
	}
	return m.cmd.ProcessState.ExitCode()
}

// kill sends SIGKILL and waits for the process to be gone.
func (m *liveMain) kill(t *testing.T) time.Time {
	t.Helper()
	if err := m.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	<-m.exited
	return at
}

// eventually polls cond every 20 ms until it holds, failing the test with what after timeout:
// the other process gives no signal but its output and its files.
func eventually(t *testing.T, timeout time.Duration, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// snapshotWith waits until dir's summary.json reads and satisfies ok, and returns it.
func snapshotWith(t *testing.T, m *liveMain, dir string, ok func(*measure.Summary) bool) *measure.Summary {
	t.Helper()
	var s *measure.Summary
	eventually(t, 60*time.Second, func() string {
		return fmt.Sprintf("no such snapshot in %s (last %+v); output:\n%s", dir, s, m.output())
	},
		func() bool {
			got, err := measure.ReadSummary(filepath.Join(dir, measure.SummaryFile))
			if err == nil {
				s = got
			}
			return err == nil && ok(got)
		})
	return s
}

// streamsSeen is how many client streams the runtime at url opened (its
// streambench_runtime_client_streams_total, over every dialect).
func streamsSeen(t *testing.T, url string) int64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "streambench_runtime_client_streams_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		n += int64(v)
	}
	return n
}

// stopAtEnd fails the test on err, else stops s when the test ends.
func stopAtEnd(t *testing.T, s interface{ Stop() }, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
}

// TestLoadKilledLeavesRenderableRun: `load` killed with SIGKILL mid-run leaves a run directory
// whose last snapshot `report` renders, marked INCOMPLETE, with sessions (at most as many as
// the runtime saw), latencies and timeline rows, up to shortly before the kill; `gate` refuses
// it with exit 2, naming it.
func TestLoadKilledLeavesRenderableRun(t *testing.T) {
	t.Parallel()
	st, err := stack.StartInProcess(stack.Options{TimeScale: 0.2})
	stopAtEnd(t, st, err)
	out := t.TempDir()
	const every = 200 * time.Millisecond
	m := startMain(t, "load", "--target", st.RuntimeURL, "--mock", st.MockURL, "--clients", "10", "--duration", "5m",
		"--time-scale", "0.2", "--snapshot-every", every.String(), "--out", out, "--run-id", "killed", "--quiet")
	dir := filepath.Join(out, "killed")
	snapshotWith(t, m, dir, func(s *measure.Summary) bool { return s.Counters.Ended() >= 10 })
	killedAt := m.kill(t)
	seen := streamsSeen(t, st.RuntimeURL)

	var buf bytes.Buffer
	if err := reportMain([]string{dir}, &buf); err != nil || !strings.Contains(buf.String(), "INCOMPLETE: the run was killed") {
		t.Fatalf("report %s: %v, printed %q: want it rendered and saying incomplete", dir, err, buf.String())
	}
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	if err != nil || !strings.Contains(string(md), "> **INCOMPLETE: the run was killed") || !strings.Contains(string(md), "| ttfc |") {
		t.Errorf("report.md (%v) lacks the banner or the latencies:\n%s", err, md)
	}
	if html, err := os.ReadFile(filepath.Join(dir, report.HTMLFile)); err != nil || !strings.Contains(string(html), `<p class="verdict INCOMPLETE">INCOMPLETE: the run was killed`) {
		t.Errorf("report.html (%v) lacks the banner", err)
	}
	run, err := measure.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := run.Summary
	done := s.Counters.Ended()
	if !s.Incomplete || s.Verdict.Pass || done == 0 || done > s.Counters.SessionsStarted || done > seen {
		t.Errorf("snapshot: incomplete %v, pass %v, %d sessions done of %d started, runtime saw %d: want incomplete and failing, 0 < done <= started and <= seen",
			s.Incomplete, s.Verdict.Pass, done, s.Counters.SessionsStarted, seen)
	}
	ttfc, _ := run.Histograms.Merged(func(k measure.Key) bool { return k.Metric == measure.FirstChunk })
	if ttfc.TotalCount() == 0 || len(run.Timeline) == 0 {
		t.Errorf("snapshot: %d ttfc values, %d timeline rows: want the histograms and the timeline so far", ttfc.TotalCount(), len(run.Timeline))
	}
	// "Losing at most the last interval": generous on a shared machine, where the snapshots
	// also back off when writing them takes long.
	if lost := killedAt.Sub(s.Ended); lost < 0 || lost > every+5*time.Second {
		t.Errorf("the last snapshot is from %s before the kill, want within the interval (%s, plus slack)", lost, every)
	}
	err = gateMain([]string{"--current", dir}, io.Discard)
	if code := exitCode(err); code != exitUsage || !errors.Is(err, verdict.ErrIncomplete) || !strings.Contains(err.Error(), "current run killed") {
		t.Errorf("gate on the killed run: exit %d (%v), want %d naming it incomplete", code, err, exitUsage)
	}
}

// TestRunKilledLeavesNoChildren: `run` with child processes killed with SIGKILL takes its mock
// and runtime with it within a second or two, and leaves a readable incomplete run.
func TestRunKilledLeavesNoChildren(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	m := startMain(t, "run", "--in-process=false", "--clients", "5", "--duration", "5m", "--time-scale", "0.2",
		"--snapshot-every", "200ms", "--out", out, "--run-id", "killed-run", "--quiet")
	var mockPID, runtimePID int
	eventually(t, 60*time.Second, func() string { return "no child pids printed:\n" + m.output() }, func() bool {
		for _, line := range strings.Split(m.output(), "\n") {
			if _, err := fmt.Sscanf(line, "child pids: mock %d, runtime %d", &mockPID, &runtimePID); err == nil {
				return true
			}
		}
		return false
	})
	t.Cleanup(func() { // should they outlive the test, as they would without Pdeathsig
		for _, pid := range []int{mockPID, runtimePID} {
			if proctest.Running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if !proctest.Running(mockPID) || !proctest.Running(runtimePID) {
		t.Fatalf("children %d, %d not running before the kill", mockPID, runtimePID)
	}
	dir := filepath.Join(out, "killed-run")
	snapshotWith(t, m, dir, func(s *measure.Summary) bool { return s.Counters.SessionsStarted > 0 })
	m.kill(t)
	eventually(t, 3*time.Second, func() string {
		return fmt.Sprintf("mock %d running %v, runtime %d running %v, 3 s after the parent was killed",
			mockPID, proctest.Running(mockPID), runtimePID, proctest.Running(runtimePID))
	}, func() bool { return !proctest.Running(mockPID) && !proctest.Running(runtimePID) })
	run, err := measure.ReadRun(dir)
	if err != nil || !run.Summary.Incomplete || run.Summary.Counters.SessionsStarted == 0 {
		t.Errorf("killed run's directory: %v, want a readable incomplete run with sessions", err)
	}
}

// TestCtrlC: the first SIGINT stops new sessions and drains the in-flight ones (none cut),
// then writes the results marked interrupted (not incomplete) and exits 1 saying so; a second
// one cancels the in-flight streams at once (long ones here, with a grace far longer than the
// test waits), and still writes what was measured, the cancelled sessions counted as cut.
func TestCtrlC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		scale     string // the mock's time scale: 5 makes streams last many seconds
		signals   int
		wantCut   bool
		exitAfter time.Duration // from the last signal
	}{
		// once: drain; streams at 0.2× are short, so the drain ends soon
		{"once", "0.2", 1, false, 60 * time.Second},
		// twice: cancel at once, though the streams would take far longer than the wait
		{"twice", "5", 2, true, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			m := startMain(t, "run", "--in-process", "--clients", "8", "--duration", "5m", "--time-scale", tc.scale,
				"--grace", "5m", "--snapshot-every", "200ms", "--out", out, "--run-id", "ctrl-c", "--quiet")
			dir := filepath.Join(out, "ctrl-c")
			snapshotWith(t, m, dir, func(s *measure.Summary) bool {
				return s.Counters.SessionsStarted >= 8 && (tc.wantCut || s.Counters.Ended() > 0)
			})
			for i := range tc.signals {
				if err := m.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					eventually(t, 10*time.Second, func() string { return "the first SIGINT was not acknowledged:\n" + m.output() },
						func() bool { return strings.Contains(m.output(), "interrupted: no new sessions; draining") })
				}
			}
			if code := m.exitCode(t, tc.exitAfter); code != exitFailure {
				t.Errorf("exit %d, want %d (an interrupted run fails):\n%s", code, exitFailure, m.output())
			}
			output := m.output()
			if !strings.Contains(output, "interrupted before the planned end") || strings.Contains(output, "interrupted again") != (tc.signals == 2) {
				t.Errorf("output does not say how the run was interrupted:\n%s", output)
			}
			run, err := measure.ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := run.Summary
			c := s.Counters
			if !s.Interrupted || s.Incomplete || c.SessionsStarted == 0 || c.Ended() != c.SessionsStarted || (c.Outcome(measure.OutcomeCut) > 0) != tc.wantCut {
				t.Errorf("results: interrupted %v, incomplete %v, counters %+v: want interrupted, complete, every session ended, cut sessions %v",
					s.Interrupted, s.Incomplete, c, tc.wantCut)
			}
			if _, err := os.Stat(filepath.Join(dir, report.HTMLFile)); err != nil {
				t.Errorf("no report rendered: %v", err)
			}
		})
	}
}

// TestSnapshotEveryFlag: a snapshot interval that is not positive is bad input, named.
func TestSnapshotEveryFlag(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0s", "-1s"} {
		err := runLoad([]string{"--target", "http://127.0.0.1:1", "--snapshot-every", v, "--quiet"})
		if code := exitCode(err); code != exitUsage || !strings.Contains(err.Error(), "--snapshot-every "+v+": want a positive duration") {
			t.Errorf("--snapshot-every %s: exit %d (%v), want %d naming the flag", v, code, err, exitUsage)
		}
	}
}

// TestClosedStdoutLosesNothing: a run whose reader went away (`streambench run | head`, the
// pipe closed before the run printed its headline) finishes and writes its results whole.
// Before, the first print after the close raised SIGPIPE, which killed the run and left the
// directory marked incomplete.
func TestClosedStdoutLosesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "run", "--clients", "5", "--duration", "2s", "--grace", "20s", "--out", dir, "--run-id", "piped")
	cmd.Env = append(os.Environ(), benchChildEnv+"=1")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	pr.Close() // nobody reads: every write the run makes fails
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the run was killed by %v", ws.Signal())
	}
	run, err := measure.ReadRun(filepath.Join(dir, "piped"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Summary.Incomplete || run.Summary.Counters.SessionsStarted == 0 {
		t.Errorf("results incomplete %v with %d sessions, want the run's final write", run.Summary.Incomplete, run.Summary.Counters.SessionsStarted)
	}
}
