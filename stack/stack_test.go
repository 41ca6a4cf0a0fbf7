package stack

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/internal/proctest"
)

// childEnv makes this test binary act as a child: with "serve" it announces an address and
// answers /healthz until interrupted; with "fail" it prints a line and exits 3.
const childEnv = "STACK_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(fakeChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeChild(args []string) int {
	if len(args) > 0 && args[0] == "parent" {
		return fakeParent()
	}
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "fake child: refusing", args)
		return 3
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return 1
	}
	return 0
}

// TestStartChildAnnouncesServesAndStops starts a child that serves, checks its health and
// stops it; then one that fails at once, whose error must quote its output.
func TestStartChildAnnouncesServesAndStops(t *testing.T) {
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartChild(exe, []string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.URL(), "http://127.0.0.1:") || c.PID() <= 0 {
		t.Errorf("URL %q, PID %d: want a loopback URL and a process id", c.URL(), c.PID())
	}
	if err := WaitHealthy(c.URL()); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	c.Stop() // a second stop does nothing
	checkStopped(t, c.URL())

	_, err = StartChild(exe, []string{"fail"})
	if err == nil || !strings.Contains(err.Error(), "exited before listening") || !strings.Contains(err.Error(), "fake child: refusing") {
		t.Errorf("failing child: err %v, want one saying it exited and quoting its output", err)
	}
}

// TestStartProcessLogsAndWaits: a child that serves nothing is started at once, its output
// goes to the log, and Wait returns its exit error; Stop ends one that still runs.
func TestStartProcessLogsAndWaits(t *testing.T) {
	t.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(t.TempDir(), "child.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	c, err := StartProcess(exe, []string{"fail"}, log)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if _, err := c.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Wait: %v, want exit status 3", err)
	}
	if b, _ := os.ReadFile(log.Name()); !strings.Contains(string(b), "fake child: refusing") {
		t.Errorf("log %q: want the child's output", b)
	}
	c, err = StartProcess(exe, []string{"serve"}, log)
	if err != nil {
		t.Fatal(err)
	}
	c.Stop()
	select {
	case <-c.Done():
	default:
		t.Error("the child runs on after Stop")
	}
}

// TestStartInProcessServesBothAndStops serves the real mock and runtime in process.
func TestStartInProcessServesBothAndStops(t *testing.T) {
	t.Parallel()
	s := startInProcess(t, Options{TimeScale: 0})
	if s.Mock != nil || s.Runtime != nil {
		t.Error("in process: want no child processes")
	}
	if err := WaitHealthy(s.RuntimeURL, s.MockURL); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	checkStopped(t, s.RuntimeURL, s.MockURL)
}

// startInProcess is StartInProcess, failing t on error.
func startInProcess(t *testing.T, opts Options) *Stack {
	t.Helper()
	s, err := StartInProcess(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkStopped fails t for each base URL that still answers /healthz.
func checkStopped(t *testing.T, urls ...string) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	for _, u := range urls {
		if _, err := client.Get(u + "/healthz"); err == nil {
			t.Errorf("%s still answers after Stop", u)
		}
	}
}

// TestStartMockOnly: MockOnly serves the mock alone (an endpoint workload's system under
// test), and Stop stops it. (Its child-process path is StartChildren's, returning after the
// mock: the children here are fakes, so cmd/streambench's endpoint sweep covers it.)
func TestStartMockOnly(t *testing.T) {
	t.Parallel()
	s := startInProcess(t, Options{TimeScale: 0, MockOnly: true})
	if s.RuntimeURL != "" || s.Runtime != nil || s.Mock != nil {
		t.Errorf("runtime %q %v, mock child %v: want the mock alone, in process", s.RuntimeURL, s.Runtime, s.Mock)
	}
	if err := WaitHealthy(s.MockURL); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	checkStopped(t, s.MockURL)
}

// TestChildArgsCarryEveryOption: the runtime child's --fault values parse back to the same
// switches, and each option reaches the flag that sets it.
func TestChildArgsCarryEveryOption(t *testing.T) {
	t.Parallel()
	faults, err := agentruntime.ParseFaults([]string{"no-reset", "slow-first-chunk=2s"})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{TimeScale: 0.5, ScenarioDir: "/tmp/sc", ScenarioFiles: []string{"/tmp/a.yaml", "/tmp/b.yaml"}, Faults: faults, ProviderHTTP1: true, ClientIdleTimeout: 7 * time.Second}
	if got, want := strings.Join(opts.mockArgs(), " "), "mock --addr 127.0.0.1:0 --time-scale 0.5 --scenarios /tmp/sc --scenario /tmp/a.yaml --scenario /tmp/b.yaml"; got != want {
		t.Errorf("mock args %q, want %q", got, want)
	}
	rt := opts.runtimeArgs("http://127.0.0.1:9", nil)
	var names []string
	for i, a := range rt {
		if a == "--fault" && i+1 < len(rt) {
			names = append(names, rt[i+1])
		}
	}
	if back, err := agentruntime.ParseFaults(names); err != nil || back != faults {
		t.Errorf("runtime args %q: faults parse back to %+v (%v), want %+v", rt, back, err, faults)
	}
	for _, want := range []string{"--provider http://127.0.0.1:9", "--tool-time-scale 0.5", "--provider-h2c=false", "--client-idle-timeout 7s"} {
		if !strings.Contains(strings.Join(rt, " "), want) {
			t.Errorf("runtime args %q lack %q", rt, want)
		}
	}
	if rt := (Options{}).runtimeArgs("u", nil); slices.Contains(rt, "--fault") || slices.Contains(rt, "--client-idle-timeout") || !slices.Contains(rt, "--provider-h2c=true") {
		t.Errorf("no faults, h2c: runtime args %q", rt)
	}
}

// TestWaitHealthyNamesTheUnhealthyURL waits on a server that keeps answering 503.
func TestWaitHealthyNamesTheUnhealthyURL(t *testing.T) {
	t.Parallel()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Close()
	err = waitHealthy(&http.Client{Timeout: time.Second}, 300*time.Millisecond, "http://"+ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("err %v, want one naming the URL and its status", err)
	}
}

// TestStartInProcessTLS: with TLS the runtime answers only HTTPS, over HTTP/1.1 and h2, with
// a certificate a client trusts through CACertFile alone; Stop removes the certificate.
func TestStartInProcessTLS(t *testing.T) {
	t.Parallel()
	s := startInProcess(t, Options{TimeScale: 0, TLS: true})
	defer s.Stop()
	if !strings.HasPrefix(s.RuntimeURL, "https://127.0.0.1:") || !strings.HasPrefix(s.MockURL, "http://") {
		t.Fatalf("runtime %s mock %s: want the runtime on https, the mock on http", s.RuntimeURL, s.MockURL)
	}
	pemBytes, err := os.ReadFile(s.CACertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("%s: no certificate", s.CACertFile)
	}
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(s.RuntimeURL + "/healthz")
		if err != nil {
			t.Fatalf("h2=%v: %v", h2, err)
		}
		resp.Body.Close()
		if want := map[bool]int{false: 1, true: 2}[h2]; resp.StatusCode != http.StatusOK || resp.ProtoMajor != want {
			t.Errorf("h2=%v: %s %s, want 200 over HTTP/%d", h2, resp.Proto, resp.Status, want)
		}
		tr.CloseIdleConnections()
	}
	// The system roots do not know the certificate; plain http is not served.
	if _, err := (&http.Client{Timeout: 5 * time.Second}).Get(s.RuntimeURL + "/healthz"); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("without the CA: err %v, want unknown authority", err)
	}
	plain := strings.Replace(s.RuntimeURL, "https://", "http://", 1)
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(plain + "/healthz"); err == nil && resp.StatusCode == http.StatusOK {
		t.Errorf("plain http answered 200")
	}
	s.Stop()
	if _, err := os.Stat(s.CACertFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Stop, %s: %v, want it removed", s.CACertFile, err)
	}
}

// fakeParent starts a serving child, prints "child PID URL", then retires threads (goroutines
// that exit locked to theirs) as a program using LockOSThread might, prints "retired" and
// waits to be killed.
func fakeParent() int {
	// Keep this goroutine on the main thread, which Go never retires, so that the child is
	// started, and threads retire, elsewhere.
	runtime.LockOSThread()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	type started struct {
		c   *Child
		err error
	}
	ch := make(chan started)
	go func() {
		c, err := StartChild(exe, []string{"serve"})
		ch <- started{c, err}
	}()
	st := <-ch
	if st.err != nil {
		fmt.Fprintln(os.Stderr, st.err)
		return 1
	}
	fmt.Printf("child %d %s\n", st.c.PID(), st.c.URL())
	for range 64 {
		done := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
			close(done)
		}()
		<-done
	}
	fmt.Println("retired")
	time.Sleep(time.Hour)
	return 0
}

// TestChildDiesWithItsParent: a child outlives its parent's threads coming and going, and
// dies within a second or two of the parent being killed with SIGKILL, which leaves the
// parent no chance to stop it.
func TestChildDiesWithItsParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Pdeathsig is Linux's")
	}
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe, "parent")
	parent.Env = append(os.Environ(), childEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	sc := bufio.NewScanner(out)
	var pid int
	var url string
	if !sc.Scan() {
		t.Fatalf("parent printed nothing: %v", sc.Err())
	}
	if _, err := fmt.Sscanf(sc.Text(), "child %d %s", &pid, &url); err != nil {
		t.Fatalf("parent's first line %q: %v", sc.Text(), err)
	}
	if !sc.Scan() || sc.Text() != "retired" {
		t.Fatalf("parent's second line %q, want retired", sc.Text())
	}
	if err := WaitHealthy(url); err != nil || !proctest.Running(pid) {
		t.Fatalf("the child did not survive its parent's threads retiring: %v", err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for proctest.Running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d still running 3 s after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
