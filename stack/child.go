package stack

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// startTimeout bounds how long a child may take to print its address, a stack to become
// healthy, and a child to stop.
const startTimeout = 15 * time.Second

// Child is a subprocess that serves HTTP on the address it announced on standard error
// ("listening on http://ADDR"), as every serving subcommand does.
type Child struct {
	name string
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	err  error // the exit's, once done is closed

	mu    sync.Mutex
	tail  []string // its last childTailLines lines of output, for error messages
	pprof string   // the profiles' base URL it announced (ServePprof), if any
}

const childTailLines = 20

// StartChild runs exe with args (ProcAttr) and waits for its "listening on" line; a child that
// exits first, or is silent for 15 s, is an error quoting its output.
func StartChild(exe string, args []string) (*Child, error) { return StartChildLogged(exe, args, nil) }

// StartChildLogged is StartChild that also copies the child's standard error to log (nil: none).
func StartChildLogged(exe string, args []string, log io.Writer) (*Child, error) {
	c := newChild(exe, args)
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		announced := false
		for sc.Scan() {
			line := sc.Text()
			if log != nil {
				fmt.Fprintln(log, line)
			}
			if rest, ok := strings.CutPrefix(line, "listening on "); ok && !announced {
				announced = true
				urlCh <- strings.TrimSpace(rest)
			}
			c.mu.Lock()
			if rest, ok := strings.CutPrefix(line, PprofAnnounce); ok && !announced {
				c.pprof = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(rest), "/"), "/debug/pprof")
			}
			c.tail = append(c.tail, line)
			if len(c.tail) > childTailLines {
				c.tail = c.tail[1:]
			}
			c.mu.Unlock()
		}
	}()
	select {
	case u := <-urlCh:
		c.url = u
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before listening: %s", c.name, c.Output())
	case <-time.After(startTimeout):
		c.Stop()
		return nil, fmt.Errorf("%s did not print its listening address within %s: %s", c.name, startTimeout, c.Output())
	}
}

// StartProcess starts exe with args as StartChild does, for a child that serves nothing: it
// returns at once, the child's standard output and error going to log.
func StartProcess(exe string, args []string, log io.Writer) (*Child, error) {
	c := newChild(exe, args)
	c.cmd.Stdout, c.cmd.Stderr = log, log
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

func newChild(exe string, args []string) *Child {
	name := exe
	if len(args) > 0 {
		name = args[0]
	}
	c := &Child{name: name, cmd: exec.Command(exe, args...), done: make(chan struct{})}
	c.cmd.SysProcAttr = ProcAttr()
	return c
}

// start starts the child and closes c.done when it has exited.
func (c *Child) start() error {
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child exits (golang/go#27505), and Go
		// retires a thread whose goroutine exits locked to it: this goroutine holds its thread
		// until the child has exited, so no other goroutine's exit takes the child with it.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := c.cmd.Start()
		started <- err
		if err == nil {
			c.err = c.cmd.Wait()
			close(c.done)
		}
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return nil
}

// Done is closed once the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait waits for the child to exit and returns its CPU time (user + system) and exit error.
func (c *Child) Wait() (cpu time.Duration, err error) {
	<-c.done
	if st := c.cmd.ProcessState; st != nil {
		cpu = st.UserTime() + st.SystemTime()
	}
	return cpu, c.err
}

// URL is the base URL the child announced.
func (c *Child) URL() string { return c.url }

// PprofURL is the base URL of the profiles the child serves (its --pprof), "" when none.
func (c *Child) PprofURL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pprof
}

// PID is the child's process id (its memory and CPU are in /proc/PID).
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Output returns the child's last lines of output.
func (c *Child) Output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.tail, "\n")
}

// Stop interrupts the child and kills it if it has not exited after 15 s, and returns once it
// has exited; stopping a stopped child does nothing.
func (c *Child) Stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(startTimeout):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// WaitHealthy polls each base URL's /healthz until it answers 200, for at most 15 s in all.
func WaitHealthy(urls ...string) error {
	return waitHealthy(&http.Client{Timeout: time.Second}, startTimeout, urls...)
}

// waitHealthy is WaitHealthy with client (for a TLS stack, one trusting its certificate).
func waitHealthy(client *http.Client, timeout time.Duration, urls ...string) error {
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(timeout)
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
				return fmt.Errorf("%s/healthz not healthy after %s: %w", u, timeout, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}
