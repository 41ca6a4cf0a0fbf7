package main

import (
	"bytes"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/scenarios"
)

// runMain runs this test binary as streambench with args (TestMain's child mode) and returns
// its exit code and everything it printed.
func runMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return runMainIn(t, "", nil, args...)
}

// runMainIn is runMain in the working directory dir ("": this one) with more environment variables (NAME=value).
func runMainIn(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), benchChildEnv+"=1"), env...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	t.Fatalf("%v: %v", args, err)
	return 0, ""
}

// assertSecretNowhere checks that secret is in no output line and no file under dir.
func assertSecretNowhere(t *testing.T, secret, output, dir string) {
	t.Helper()
	if strings.Contains(output, secret) {
		t.Errorf("the output holds the secret:\n%s", output)
	}
	files := 0
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 4 {
		t.Errorf("only %d files under %s: the run wrote less than expected", files, dir)
	}
}

// TestLoadHeadersOverHTTPS: `load` against an https runtime behind a token check and a
// prefixed route: every stream and stop request carries the header on the template's path,
// and the token is in no output line and no results file.
func TestLoadHeadersOverHTTPS(t *testing.T) {
	t.Parallel()
	const token = "tok-9f8e7d6c5b4a"
	mock, err := mockprovider.New(mockprovider.Options{Library: scenarios.Embedded(), TimeScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	mts := httptest.NewUnstartedServer(mock)
	mts.Config.Protocols = mockprovider.Protocols()
	mts.Start()
	t.Cleanup(mts.Close)
	rt, err := agentruntime.New(agentruntime.Options{ProviderURL: mts.URL, ToolTimeScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	var streams, stops, refused, preflights atomic.Int64
	inner := http.StripPrefix("/internal/workflow", rt.Handler())
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			rt.Handler().ServeHTTP(w, r)
			return
		}
		if r.Header.Get("X-Runtime-Internal-Token") != token {
			refused.Add(1)
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		switch {
		case r.Header.Get(loadgen.PreflightHeader) == "1":
			preflights.Add(1) // the route checked before the load, with the header
		case strings.HasSuffix(r.URL.Path, "/stop"):
			stops.Add(1)
		case strings.HasSuffix(r.URL.Path, "/approval"):
			// a plan decision: a request of the run, like a stop (not a stream)
		default:
			streams.Add(1)
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pemCert(ts), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, output := runMain(t, "load", "--target", ts.URL, "--mock", mts.URL, "--ca-cert", ca,
		"--dialect", "compose", "--slug", "openai-all", "--path", "/internal/workflow/agent/{agent}/stream",
		"--header", "x-runtime-internal-token: "+token, "--header", "X-Tenant: acme",
		"--clients", "3", "--sessions", "24", "--time-scale", "0.05", "--no-leak-check", "--quiet",
		"--seed", "7", "--run-id", "hdr", "--out", out)
	if code != 0 {
		t.Fatalf("load exit %d:\n%s", code, output)
	}
	if streams.Load() != 24 || stops.Load() == 0 || refused.Load() != 0 || preflights.Load() != 1 {
		t.Errorf("streams %d stops %d refused %d preflights %d: want 24 streams, some stops, none refused, one preflight",
			streams.Load(), stops.Load(), refused.Load(), preflights.Load())
	}
	if !strings.Contains(output, "verdict: PASS") {
		t.Errorf("output:\n%s", output)
	}
	assertSecretNowhere(t, token, output, out)
	if b, _ := os.ReadFile(filepath.Join(out, "hdr", "summary.json")); !bytes.Contains(b, []byte(`X-Runtime-Internal-Token: \u003credacted\u003e; X-Tenant: acme`)) {
		t.Errorf("summary.json does not record the headers, redacted:\n%s", b)
	}
}

// TestRunTLS: `run --tls` serves the stack's runtime over HTTPS and the generator trusts its
// certificate, over HTTP/1.1 (in process) and h2 (child processes: the runtime's --tls-cert
// and --tls-key); a --header secret stays out of output and files.
func TestRunTLS(t *testing.T) {
	t.Parallel()
	const secret = "sk-run-tls-0123456789"
	for _, tc := range []struct{ proto, where string }{{"--http2=false", "--in-process"}, {"--http2", "--in-process=false"}} {
		proto := tc.proto
		out := t.TempDir()
		code, output := runMain(t, "run", "--tls", proto, tc.where, "--clients", "3", "--sessions", "20",
			"--time-scale", "0.05", "--quiet", "--header", "X-Api-Key: "+secret, "--run-id", "tls", "--out", out)
		if code != 0 || !strings.Contains(output, "runtime https://127.0.0.1:") || !strings.Contains(output, "verdict: PASS") ||
			(tc.where == "--in-process=false") != strings.Contains(output, "(child processes)") {
			t.Fatalf("run --tls %s: exit %d:\n%s", proto, code, output)
		}
		assertSecretNowhere(t, secret, output, out)
	}
}

func TestRequestFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		// No colon: the flag is named, the value is not quoted past its name.
		{[]string{"--header", "Authorization Bearer hunter2"}, `--header "Authorization…": want "Name: value"`},
		// An unknown placeholder names the option, the profile and the known placeholders, once
		// for all the targets it applies to.
		{[]string{"--dialect", "sim-chat", "--path", "/chat/{agent}"}, "profiles[0] (chat-opted-in).targets[0] (openai-all) and 6 more: option path: path template \"/chat/{agent}\": unknown placeholder {agent} (known: {slug})"},
		// A path for several dialects at once.
		{[]string{"--path", "/x/{agent}/stream"}, "choose one with --dialect"},
		// A stop path with an unknown placeholder.
		{[]string{"--dialect", "compose", "--stop-path", "/stop/{id}"}, "option stopPath: path template \"/stop/{id}\": unknown placeholder {id}"},
		// An option no dialect of the mix takes.
		{[]string{"--dialect", "compose", "--option", "optedIn=true"}, "option optedIn: no dialect of mix default takes it (compose)"},
		// An unknown dialect lists the known ones.
		{[]string{"--dialect", "sim-talk"}, `--dialect: dialect "sim-talk" unknown (known: sim-chat, sim-canvas, compose`},
		// CA file and no verification contradict each other.
		{[]string{"--ca-cert", "x.pem", "--insecure"}, "--ca-cert and --insecure"},
		// A load shape or length given as zero, negative or not finite is refused and named, not
		// read as "not given" (which runs the default: 1,000 clients for 30 s) nor lost after the
		// load (--rate Inf once ran, then could not write its results).
		{[]string{"--clients", "0"}, "--clients 0: want a positive value"},
		{[]string{"--rate", "0"}, "--rate 0: want a positive value"},
		{[]string{"--clients", "2", "--duration", "0s"}, "--duration 0s: want a positive value"},
		{[]string{"--clients", "2", "--sessions", "0"}, "--sessions 0: want a positive value"},
		{[]string{"--clients", "2", "--grace", "0s"}, "--grace 0s: want a positive value"},
		{[]string{"--clients", "2", "--stream-timeout", "0"}, "--stream-timeout 0s: want a positive value"},
		{[]string{"--clients", "-5"}, "--clients -5: want a positive number of virtual users"},
		{[]string{"--rate", "-3"}, "--rate -3: want a positive, finite number"},
		{[]string{"--rate", "NaN"}, "--rate NaN: want a positive, finite number"},
		{[]string{"--rate", "Inf"}, "--rate +Inf: want a positive, finite number"},
		{[]string{"--clients", "2", "--duration", "-1s"}, "--duration -1s: want a positive duration"},
		{[]string{"--clients", "2", "--shard", "0/0", "--run-id", "x"}, `shard "0/0": the count must be at least 1`},
		// Results that could not be written are refused before the load, not after it.
		{[]string{"--clients", "2", "--out", "load.go/results"}, "--out load.go/results: load.go is not a directory"},
	} {
		code, output := runMain(t, append([]string{"load", "--target", "https://127.0.0.1:1"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(output, tc.want) || strings.Contains(output, "hunter2") {
			t.Errorf("load %v: exit %d, output %q; want %d and %q", tc.args, code, output, exitUsage, tc.want)
		}
	}
}

// pemCert is ts's certificate in PEM.
func pemCert(ts *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
}

func TestRuntimeTLSFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		// A certificate without its key.
		{[]string{"--tls-cert", "cert.pem"}, "--tls-cert and --tls-key go together"},
		// Files that do not exist: both are named.
		{[]string{"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"}, "--tls-cert /nonexistent/c.pem / --tls-key /nonexistent/k.pem"},
	} {
		code, output := runMain(t, append([]string{"runtime", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(output, tc.want) {
			t.Errorf("runtime %v: exit %d, output %q; want %d and %q", tc.args, code, output, exitUsage, tc.want)
		}
	}
}
