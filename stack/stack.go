// Package stack starts the system under test that `run`, `sweep` and `bench` drive, the mock
// provider and the reference runtime wired to it: as child processes of this binary (see
// ProcAttr) or served from the calling process (quicker to start, for small runs).
package stack

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// Options describe the mock and the runtime to start.
type Options struct {
	// TimeScale multiplies the mock's scripted delays and the runtime's simulated tool
	// durations (1 = as scripted, 0 = none).
	TimeScale     float64
	ScenarioDir   string              // the directory a child mock loads ("" = embedded)
	ScenarioFiles []string            // more files a child mock loads (in process: in Library)
	Library       *scenarios.Library  // the in-process mock's scenarios (nil = embedded)
	Faults        agentruntime.Faults // the runtime's fault switches (a child's --fault)
	ProviderHTTP1 bool                // the runtime reaches the mock over HTTP/1.1 instead of h2c
	// TLS has the runtime serve HTTPS with a self-signed certificate for loopback
	// (Stack.CACertFile); the mock, its provider, stays cleartext.
	TLS               bool
	ClientIdleTimeout time.Duration // the runtime's slow-client drop (0: its default)
	Pprof             bool          // children serve profiles on a loopback port (Child.PprofURL)
	MockOnly          bool          // the mock alone (RuntimeURL stays empty)
	// MockOptions and RuntimeOptions adjust the in-process servers' options before they start
	// (StartInProcess only): limits and loggers the children have no flags for.
	MockOptions    func(*mockprovider.Options)
	RuntimeOptions func(*agentruntime.Options)
}

// Stack is a started mock and runtime.
type Stack struct {
	MockURL, RuntimeURL string
	Mock, Runtime       *Child // the child processes (nil when served in process).
	CACertFile          string // the PEM certificate the runtime serves with Options.TLS ("" without).
	stops               []func()
}

// start makes the run's certificate when opts ask for TLS, starts the mock and (unless
// MockOnly) the runtime, and waits until they are healthy; on error it stops what started.
func start(opts Options, startMock func(*Stack) error, startRuntime func(*Stack, *selfSigned) error) (*Stack, error) {
	s := &Stack{}
	var cert *selfSigned
	err := func() (err error) {
		if opts.TLS {
			if cert, err = newSelfSigned(); err != nil {
				return err
			}
			s.CACertFile = cert.certFile
			s.stops = append(s.stops, cert.Remove)
		}
		if err := startMock(s); err != nil {
			return err
		}
		client, urls := &http.Client{Timeout: time.Second}, []string{s.MockURL}
		if cert != nil {
			client = cert.client()
		}
		if !opts.MockOnly {
			if err := startRuntime(s, cert); err != nil {
				return err
			}
			urls = []string{s.RuntimeURL, s.MockURL}
		}
		return waitHealthy(client, startTimeout, urls...)
	}()
	if err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops what was started, the runtime before its provider; each drains, then exits.
func (s *Stack) Stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

// Start is StartInProcess when inProcess is set, else StartChildren.
func Start(opts Options, inProcess bool) (*Stack, error) {
	if inProcess {
		return StartInProcess(opts)
	}
	return StartChildren(opts)
}

// StartChildren starts `streambench mock` and `streambench runtime` as child processes of
// the running executable on free loopback ports and waits until both are healthy.
func StartChildren(opts Options) (*Stack, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return start(opts, func(s *Stack) (err error) {
		if s.Mock, err = StartChild(exe, opts.mockArgs()); err != nil {
			return fmt.Errorf("start mock: %w", err)
		}
		s.MockURL = s.Mock.URL()
		s.stops = append(s.stops, s.Mock.Stop)
		return nil
	}, func(s *Stack, cert *selfSigned) (err error) {
		if s.Runtime, err = StartChild(exe, opts.runtimeArgs(s.MockURL, cert)); err != nil {
			return fmt.Errorf("start runtime: %w", err)
		}
		s.RuntimeURL = s.Runtime.URL()
		s.stops = append(s.stops, s.Runtime.Stop)
		return nil
	})
}

// mockArgs and runtimeArgs spell the children's command lines: each Options field as the flag
// that sets it, on a free loopback port.
func (o Options) mockArgs() []string {
	args := []string{"mock", "--addr", "127.0.0.1:0", "--time-scale", fmt.Sprint(o.TimeScale)}
	if o.ScenarioDir != "" {
		args = append(args, "--scenarios", o.ScenarioDir)
	}
	for _, f := range o.ScenarioFiles {
		args = append(args, "--scenario", f)
	}
	if o.Pprof {
		args = append(args, "--pprof", "127.0.0.1:0")
	}
	return args
}

func (o Options) runtimeArgs(mockURL string, cert *selfSigned) []string {
	args := []string{"runtime", "--addr", "127.0.0.1:0", "--provider", mockURL,
		"--tool-time-scale", fmt.Sprint(o.TimeScale), fmt.Sprintf("--provider-h2c=%t", !o.ProviderHTTP1)}
	for _, f := range o.Faults.Names() {
		args = append(args, "--fault", f)
	}
	if o.ClientIdleTimeout != 0 {
		args = append(args, "--client-idle-timeout", o.ClientIdleTimeout.String())
	}
	if cert != nil {
		args = append(args, "--tls-cert", cert.certFile, "--tls-key", cert.keyFile)
	}
	if o.Pprof {
		args = append(args, "--pprof", "127.0.0.1:0")
	}
	return args
}

// StartInProcess serves a mock and a runtime from the calling process on free loopback ports
// and waits until both are healthy.
func StartInProcess(opts Options) (*Stack, error) {
	return start(opts, func(s *Stack) error {
		mockOpts := mockprovider.Options{Library: cmp.Or(opts.Library, scenarios.Embedded()), TimeScale: opts.TimeScale}
		if opts.MockOptions != nil {
			opts.MockOptions(&mockOpts)
		}
		mock, err := mockprovider.New(mockOpts)
		if err == nil {
			s.MockURL, err = serve(mock.Serve, "http")
		}
		if err != nil {
			return fmt.Errorf("mock: %w", err)
		}
		s.stops = append(s.stops, func() { shutdown(mock.Shutdown) })
		return nil
	}, func(s *Stack, cert *selfSigned) error {
		rtOpts := agentruntime.Options{ProviderURL: s.MockURL, Faults: opts.Faults,
			ToolTimeScale: opts.TimeScale, ProviderHTTP1: opts.ProviderHTTP1, ClientIdleTimeout: opts.ClientIdleTimeout}
		scheme := "http"
		if cert != nil {
			tlsConf, err := agentruntime.LoadTLS(cert.certFile, cert.keyFile)
			if err != nil {
				return fmt.Errorf("runtime: %w", err)
			}
			rtOpts.TLS, scheme = tlsConf, "https"
		}
		if opts.RuntimeOptions != nil {
			opts.RuntimeOptions(&rtOpts)
		}
		rt, err := agentruntime.New(rtOpts)
		if err == nil {
			s.RuntimeURL, err = serve(rt.Serve, scheme)
		}
		if err != nil {
			return fmt.Errorf("runtime: %w", err)
		}
		s.stops = append(s.stops, func() {
			shutdown(rt.Shutdown)
			_ = rt.Close()
		})
		return nil
	})
}

// serve serves on a free loopback port and returns the base URL with scheme.
func serve(serveFn func(net.Listener) error, scheme string) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen: %w", err)
	}
	go func() { _ = serveFn(ln) }()
	return scheme + "://" + ln.Addr().String(), nil
}

// shutdown drains a server for at most 5 s.
func shutdown(fn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = fn(ctx)
}
