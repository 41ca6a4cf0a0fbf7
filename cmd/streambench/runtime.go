package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
)

// runRuntime serves the reference agent runtime until interrupted.
func runRuntime(args []string) error {
	fs := newFlagSet("runtime", "runtime [--addr HOST:PORT] [--provider URL] [--deployments FILE] [--fault NAME]...")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (HTTP/1.1, and h2c for clients that use it)")
	provider := fs.String("provider", "http://127.0.0.1:8081", "default model provider base URL (the mock), for deployments that name none")
	deployments := fs.String("deployments", "", "deployments YAML file (default: the embedded "+strings.Join(agentruntime.DefaultDeployments().Slugs(), ", ")+")")
	h2c := fs.Bool("provider-h2c", true, "talk cleartext HTTP/2 to the provider (streams share a few connections); false for HTTP/1.1")
	maxConns := fs.Int("provider-max-conns", 0, fmt.Sprintf("cap connections per provider host (0 = %d with h2c, no cap with HTTP/1.1; negative = no cap)", agentruntime.DefaultProviderH2CConns))
	providerHeaders := fs.StringArray("provider-header", nil, "'Name: value' set on every provider request (repeatable); for gateways that route by header,\n"+
		"e.g. --provider-header 'x-portkey-provider: openai' --provider-header 'x-portkey-custom-host: http://127.0.0.1:8081/v1'")
	faults := fs.StringArray("fault", nil, "break a protocol rule on purpose (repeatable):\n"+agentruntime.FaultHelp())
	idle := fs.Duration("client-idle-timeout", agentruntime.DefaultClientIdleTimeout, "drop a client that accepts no bytes for this long (negative = never)")
	heartbeat := fs.Duration("heartbeat", agentruntime.DefaultHeartbeat, "compose ': ping' interval while a stream is idle (at most 15s)")
	maxBody := fs.Int64("max-body", agentruntime.DefaultMaxBody, "largest request body in bytes")
	maxTurns := fs.Int("max-turns", agentruntime.DefaultMaxTurns, "most model turns per run")
	reconnectWindow := fs.Duration("reconnect-window", agentruntime.DefaultReconnectWindow, "how long a resumable canvas execution is kept for a reconnect after its client dropped")
	toolScale := fs.Float64("tool-time-scale", 1, "multiply simulated tool durations (1 = as scripted, 0 = instant)")
	grace := fs.Duration("grace", 10*time.Second, "on Ctrl-C, how long open streams may finish before they are cut")
	verbose := fs.Bool("verbose", false, "log every failed run")
	pprofAddr := addPprofFlag(fs)
	tlsCert := fs.String("tls-cert", "", "serve HTTPS (HTTP/1.1 and h2) with this PEM certificate (chain); needs --tls-key")
	tlsKey := fs.String("tls-key", "", "the PEM private key of --tls-cert")
	// No spare Ps (hrtimer.SpareProcs): the runtime keeps no time, and they cost it CPU
	// (docs/BENCHMARKS.md).
	if err := parseFlagsNoArgs(fs, args); err != nil {
		return err
	}
	if *heartbeat > 15*time.Second {
		return usageError("--heartbeat %s: the compose protocol needs a ping at least every 15s", *heartbeat)
	}
	f, err := agentruntime.ParseFaults(*faults)
	if err != nil {
		return usageError("--fault: %v", err)
	}
	providerHeader, err := loadgen.ParseHeaders(*providerHeaders)
	if err != nil {
		return usageError("--provider-header %v", err)
	}
	deps := agentruntime.DefaultDeployments()
	if *deployments != "" {
		if deps, err = agentruntime.LoadDeployments(*deployments); err != nil {
			return usageError("--deployments: %v", err)
		}
	}
	var tlsConf *tls.Config
	if (*tlsCert == "") != (*tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together (got only one)")
	}
	if *tlsCert != "" {
		if tlsConf, err = agentruntime.LoadTLS(*tlsCert, *tlsKey); err != nil {
			return usageError("--tls-cert %s / --tls-key %s: %v", *tlsCert, *tlsKey, err)
		}
	}
	logger := newLogger(*verbose, slog.LevelWarn, slog.LevelInfo)
	srv, err := agentruntime.New(agentruntime.Options{
		Deployments: deps, ProviderURL: *provider, ProviderHTTP1: !*h2c, ProviderMaxConns: *maxConns, ProviderHeader: providerHeader,
		Faults: f, ClientIdleTimeout: *idle, Heartbeat: *heartbeat, MaxBody: *maxBody,
		MaxTurns: *maxTurns, ToolTimeScale: *toolScale, Logger: logger, TLS: tlsConf, ReconnectWindow: *reconnectWindow,
	})
	if err != nil {
		return usageError("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
	}
	return serve(ctx, stop, srv, *addr, scheme, *pprofAddr, *grace, func() {
		fmt.Fprintf(os.Stderr, "provider %s; deployments %s\n", *provider, strings.Join(deps.Slugs(), ", "))
		if len(providerHeader) > 0 {
			// Names only: values may be credentials.
			fmt.Fprintf(os.Stderr, "provider headers: %s\n", strings.Join(slices.Sorted(maps.Keys(providerHeader)), ", "))
		}
		if names := f.Names(); len(names) > 0 {
			fmt.Fprintf(os.Stderr, "FAULTS ON: %s\n", strings.Join(names, ", "))
		}
	})
}
