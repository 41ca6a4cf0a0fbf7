package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/report"
	"github.com/streambench/streambench/scenarios"
)

// runRun is the main job: start a mock provider and the reference runtime, run the load
// against them, print the summary, write the results and stop everything it started.
func runRun(args []string) error {
	fs := newFlagSet("run", "run [--clients N | --rate R | --stages SPEC] [--duration D | --sessions N] [--mix FILE] [--fault NAME]... [--in-process] [--out DIR] ...")
	out := fs.String("out", "results", "write results to OUT/RUN-ID")
	faults := fs.StringArray("fault", nil, "pass a fault switch to the runtime (repeatable):\n"+agentruntime.FaultHelp())
	inProcess := fs.Bool("in-process", false, "run the mock and the runtime inside this process (default: only for small runs, else child processes)")
	w := addWorkloadFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	defer spareProcs()()
	if fs.NArg() > 0 {
		return usageError("unexpected arguments %q", fs.Args())
	}
	if _, err := agentruntime.ParseFaults(*faults); err != nil {
		return usageError("--fault: %v", err)
	}
	cfg, err := w.config()
	if err != nil {
		return err
	}
	cfg.Faults = *faults
	local := *inProcess
	if !fs.Changed("in-process") {
		local = smallRun(&cfg)
	}
	var st *stackProcs
	if local {
		st, err = startInProcess(cfg.Library, w.timeScale, *faults)
	} else {
		st, err = startChildren(w.timeScale, w.scenarioDir, *faults)
	}
	if err != nil {
		return err
	}
	defer st.stop()
	where := "child processes"
	if local {
		where = "in process"
	}
	fmt.Fprintf(os.Stderr, "mock %s, runtime %s (%s)\n", st.mockURL, st.runtimeURL, where)
	cfg.Target, cfg.MockURL = st.runtimeURL, st.mockURL
	cfg.Extra = map[string]string{"stack": where, "time-scale": fmt.Sprint(w.timeScale)}
	run, table, err := executeLoad(cfg, w.quiet)
	if err != nil {
		return err
	}
	return finishRun(run, table, *out, report.Render)
}

// smallRun: runs this small play the mock and runtime in process (quicker start, and the
// figures are not what anyone would quote).
func smallRun(cfg *loadgen.Config) bool {
	switch {
	case cfg.Sessions > 0 && cfg.Sessions <= 200:
		return true
	case cfg.Rate > 0:
		return cfg.Rate <= 20
	case len(cfg.Stages) > 0:
		return false
	}
	return cfg.Clients <= 50
}

// stackProcs is the started mock and runtime and how to stop them.
type stackProcs struct {
	mockURL, runtimeURL string
	stops               []func()
}

// stop stops what was started, last first (the runtime before its provider).
func (s *stackProcs) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// startInProcess serves a mock and a runtime from this process on free loopback ports.
func startInProcess(lib *scenarios.Library, timeScale float64, faults []string) (*stackProcs, error) {
	if lib == nil {
		lib = scenarios.Embedded()
	}
	st := &stackProcs{}
	mock, err := mockprovider.New(mockprovider.Options{Library: lib, TimeScale: timeScale})
	if err != nil {
		return nil, fmt.Errorf("mock: %w", err)
	}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock: listen: %w", err)
	}
	go func() { _ = mock.Serve(mln) }()
	st.mockURL = "http://" + mln.Addr().String()
	st.stops = append(st.stops, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = mock.Shutdown(ctx)
	})
	f, err := agentruntime.ParseFaults(faults)
	if err != nil {
		st.stop()
		return nil, usageError("--fault: %v", err)
	}
	rt, err := agentruntime.New(agentruntime.Options{ProviderURL: st.mockURL, Faults: f, ToolTimeScale: timeScale})
	if err != nil {
		st.stop()
		return nil, fmt.Errorf("runtime: %w", err)
	}
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.stop()
		return nil, fmt.Errorf("runtime: listen: %w", err)
	}
	go func() { _ = rt.Serve(rln) }()
	st.runtimeURL = "http://" + rln.Addr().String()
	st.stops = append(st.stops, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
		_ = rt.Close()
	})
	if err := waitHealthy(st.runtimeURL, st.mockURL); err != nil {
		st.stop()
		return nil, err
	}
	return st, nil
}

// startChildren starts `streambench mock` and `streambench runtime` as child processes of this
// binary on free ports, each in its own process group so the terminal's Ctrl-C reaches only
// us (we drain first, then stop them).
func startChildren(timeScale float64, scenarioDir string, faults []string) (*stackProcs, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	st := &stackProcs{}
	mockArgs := []string{"mock", "--addr", "127.0.0.1:0", "--time-scale", fmt.Sprint(timeScale)}
	if scenarioDir != "" {
		mockArgs = append(mockArgs, "--scenarios", scenarioDir)
	}
	mock, err := startChild(exe, mockArgs)
	if err != nil {
		return nil, fmt.Errorf("start mock: %w", err)
	}
	st.mockURL = mock.url
	st.stops = append(st.stops, mock.stop)
	rtArgs := []string{"runtime", "--addr", "127.0.0.1:0", "--provider", st.mockURL, "--tool-time-scale", fmt.Sprint(timeScale)}
	for _, f := range faults {
		rtArgs = append(rtArgs, "--fault", f)
	}
	rt, err := startChild(exe, rtArgs)
	if err != nil {
		st.stop()
		return nil, fmt.Errorf("start runtime: %w", err)
	}
	st.runtimeURL = rt.url
	st.stops = append(st.stops, rt.stop)
	if err := waitHealthy(st.runtimeURL, st.mockURL); err != nil {
		st.stop()
		return nil, err
	}
	return st, nil
}

// child is one started subprocess.
type child struct {
	name string
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	tail []string // its last lines of output, for error messages
	done chan struct{}
}

const childTailLines = 20

// startChild runs exe args and waits for its "listening on http://ADDR" line.
func startChild(exe string, args []string) (*child, error) {
	c := &child{name: args[0], cmd: exec.Command(exe, args...), done: make(chan struct{})}
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	c.cmd.Stdout = nil
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "listening on "); ok && c.url == "" {
				urlCh <- strings.TrimSpace(rest)
			}
			c.mu.Lock()
			c.tail = append(c.tail, line)
			if len(c.tail) > childTailLines {
				c.tail = c.tail[1:]
			}
			c.mu.Unlock()
		}
	}()
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	select {
	case u := <-urlCh:
		c.url = u
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before listening: %s", c.name, c.output())
	case <-time.After(15 * time.Second):
		c.stop()
		return nil, fmt.Errorf("%s did not print its listening address within 15s: %s", c.name, c.output())
	}
}

func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// stop interrupts the child (a graceful shutdown) and kills it if it does not exit.
func (c *child) stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// waitHealthy polls each base URL's /healthz until it answers 200.
func waitHealthy(urls ...string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for _, u := range urls {
		for {
			resp, err := client.Get(u + "/healthz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				err = fmt.Errorf("HTTP %d", resp.StatusCode)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s/healthz not healthy after 15s: %w", u, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	client.CloseIdleConnections()
	return nil
}
