// Package stack starts the system under test that `run`, `sweep` and `bench` drive: the
// scripted mock provider and the reference runtime wired to it, either as child processes of
// this binary (`streambench mock` and `streambench runtime`, each in its own process group, so
// a terminal's Ctrl-C reaches only the parent, which drains first and then stops them; and on
// Linux killed by the kernel when the parent dies, so a parent killed with SIGKILL leaves no
// orphan) or served from the calling process (quicker to start, for small runs).
package stack

import (
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
	TimeScale   float64
	ScenarioDir string // the directory a child mock loads its scenarios from ("" = embedded).
	// ScenarioFiles are more scenario files a child mock loads (its --scenario); the
	// in-process mock finds them in Library.
	ScenarioFiles []string
	Library       *scenarios.Library // the in-process mock's scenarios (nil = embedded).
	// Faults are the runtime's fault switches, parsed once by the caller: served in process
	// they are handed over as they are; a child runtime gets them as --fault Faults.Names().
	Faults agentruntime.Faults
	// ProviderHTTP1 has the runtime reach the mock over HTTP/1.1, a connection per stream,
	// instead of h2c.
	ProviderHTTP1 bool
	// TLS has the runtime serve HTTPS (HTTP/1.1 and h2) with a self-signed certificate made
	// at start, for loopback; Stack.CACertFile is that certificate, for the client to trust.
	// The mock stays cleartext: it is the runtime's provider, not the system under test.
	TLS bool
	// ClientIdleTimeout is the runtime's slow-client drop: a client that accepts no bytes for
	// this long is dropped (0: the runtime's default).
	ClientIdleTimeout time.Duration
	// Pprof has child processes serve their profiles on a loopback port of their own
	// (--pprof 127.0.0.1:0; Child.PprofURL), for the benches that profile them. Served in
	// process, the caller profiles itself.
	Pprof bool
	// MockOnly starts the mock alone (RuntimeURL stays empty): the system under test of an
	// inference endpoint's workload, which the load generator sends to the mock directly.
	MockOnly bool
	// MockOptions and RuntimeOptions, when set, adjust the in-process servers' options before
	// they start (StartInProcess only): limits and loggers the children have no flags for.
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

// startTLS makes the run's certificate when opts ask for TLS; its files go with the stack.
func (s *Stack) startTLS(opts Options) (*selfSigned, error) {
	if !opts.TLS {
		return nil, nil
	}
	cert, err := newSelfSigned()
	if err != nil {
		return nil, err
	}
	s.CACertFile = cert.certFile
	s.stops = append(s.stops, cert.Remove)
	return cert, nil
}

// waitHealthy waits for both servers, trusting the runtime's certificate when there is one.
func (s *Stack) waitHealthy(cert *selfSigned) error {
	client := &http.Client{Timeout: time.Second}
	if cert != nil {
		client = cert.client()
	}
	if s.RuntimeURL == "" {
		return waitHealthy(client, startTimeout, s.MockURL)
	}
	return waitHealthy(client, startTimeout, s.RuntimeURL, s.MockURL)
}

// Stop stops what was started, the runtime before its provider; each drains, then exits.
func (s *Stack) Stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

// Start serves the stack from the calling process when inProcess is set, else starts it as
// child processes.
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
	s := &Stack{}
	cert, err := s.startTLS(opts)
	if err != nil {
		return nil, err
	}
	if s.Mock, err = StartChild(exe, opts.mockArgs()); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start mock: %w", err)
	}
	s.MockURL = s.Mock.URL()
	s.stops = append(s.stops, s.Mock.Stop)
	if opts.MockOnly {
		if err := s.waitHealthy(nil); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	}
	if s.Runtime, err = StartChild(exe, opts.runtimeArgs(s.MockURL, cert)); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start runtime: %w", err)
	}
	s.RuntimeURL = s.Runtime.URL()
	s.stops = append(s.stops, s.Runtime.Stop)
	if err := s.waitHealthy(cert); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// mockArgs and runtimeArgs are the one place the children's command lines are spelled: each
// Options field becomes the flag of `streambench mock` or `streambench runtime` that sets the
// same option, on a free loopback port.
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
	lib := opts.Library
	if lib == nil {
		lib = scenarios.Embedded()
	}
	s := &Stack{}
	cert, err := s.startTLS(opts)
	if err != nil {
		return nil, err
	}
	mockOpts := mockprovider.Options{Library: lib, TimeScale: opts.TimeScale}
	if opts.MockOptions != nil {
		opts.MockOptions(&mockOpts)
	}
	mock, err := mockprovider.New(mockOpts)
	if err != nil {
		return nil, fmt.Errorf("mock: %w", err)
	}
	if s.MockURL, err = serve(mock.Serve, "http"); err != nil {
		s.Stop()
		return nil, fmt.Errorf("mock: %w", err)
	}
	s.stops = append(s.stops, func() { shutdown(mock.Shutdown) })
	if opts.MockOnly {
		if err := s.waitHealthy(nil); err != nil {
			s.Stop()
			return nil, err
		}
		return s, nil
	}
	rtOpts := agentruntime.Options{ProviderURL: s.MockURL, Faults: opts.Faults,
		ToolTimeScale: opts.TimeScale, ProviderHTTP1: opts.ProviderHTTP1, ClientIdleTimeout: opts.ClientIdleTimeout}
	scheme := "http"
	if cert != nil {
		rtOpts.TLS, scheme = cert.serverConfig(), "https"
	}
	if opts.RuntimeOptions != nil {
		opts.RuntimeOptions(&rtOpts)
	}
	rt, err := agentruntime.New(rtOpts)
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("runtime: %w", err)
	}
	if s.RuntimeURL, err = serve(rt.Serve, scheme); err != nil {
		s.Stop()
		return nil, fmt.Errorf("runtime: %w", err)
	}
	s.stops = append(s.stops, func() {
		shutdown(rt.Shutdown)
		_ = rt.Close()
	})
	if err := s.waitHealthy(cert); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// serve listens on a free loopback port, serves from a goroutine and returns the base URL
// with scheme.
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
