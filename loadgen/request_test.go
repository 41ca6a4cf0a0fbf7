package loadgen

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/dialects"
)

func TestParseHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, name, value string
		err             string // substring; "" = valid
	}{
		// The usual form; the name is canonicalised, the value trimmed.
		{in: "x-runtime-internal-token: abc", name: "X-Runtime-Internal-Token", value: "abc"},
		// An empty value is allowed (some runtimes only test for presence).
		{in: "X-Flag:", name: "X-Flag", value: ""},
		// A colon inside the value belongs to the value.
		{in: "Authorization: Basic a:b", name: "Authorization", value: "Basic a:b"},
		// No colon: the error shows only the presumed name, never the value.
		{in: "Authorization Bearer s3cret", err: `"Authorization…": want "Name: value" (no colon)`},
		// A space in the name is not a token.
		{in: "X Token: v", err: "is not a token"},
		// No name at all.
		{in: ": v", err: "is not a token"},
	} {
		name, value, err := ParseHeader(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHeader(%q): error %v, want one containing %q", tc.in, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("ParseHeader(%q): the error quotes the value: %v", tc.in, err)
			}
			continue
		}
		if err != nil || name != tc.name || value != tc.value {
			t.Errorf("ParseHeader(%q) = %q, %q, %v; want %q, %q", tc.in, name, value, err, tc.name, tc.value)
		}
	}
}

func TestSensitiveHeader(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "Set-Cookie": true,
		"x-runtime-internal-token": true, "X-Api-Key": true, "X-Client-Secret": true,
		"X-Tenant": false, "Accept": false, "X-Request-Id": false,
		// By words, not letters: a gateway's routing header is no secret, its key header is.
		"x-portkey-provider": false, "x-portkey-custom-host": false, "x-portkey-api-key": true, "x-goog-api-key": true, "apikey": true,
	} {
		if got := SensitiveHeader(name); got != want {
			t.Errorf("SensitiveHeader(%q) = %v, want %v", name, got, want)
		}
	}
	got := strings.Join(RedactedHeaders(http.Header{"X-Tenant": {"acme"}, "X-Api-Key": {"k1"}}), "; ")
	if got != "X-Api-Key: <redacted>; X-Tenant: acme" {
		t.Errorf("RedactedHeaders = %q", got)
	}
}

// TestPathOptions: each dialect checks its path options when a mix target is configured, and
// an error names the placeholder and the known ones.
func TestPathOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect, path, stop string
		err                 string // substring; "" = valid
	}{
		// Defaults.
		{dialect: "compose"},
		{dialect: "sim-chat"},
		{dialect: "sim-canvas"},
		// A prefixed compose route: the stop path derives from it.
		{dialect: "compose", path: "/internal/workflow/agent/{agent}/stream"},
		// Each dialect's own placeholder.
		{dialect: "sim-chat", path: "/v2/chat/{slug}"},
		{dialect: "sim-canvas", path: "/run/{workflow}"},
		// Another dialect's placeholder is unknown, and the error lists the known ones.
		{dialect: "sim-chat", path: "/chat/{agent}", err: "unknown placeholder {agent} (known: {slug})"},
		{dialect: "compose", path: "/a/{agnt}/stream", err: "unknown placeholder {agnt} (known: {agent})"},
		// An unclosed brace.
		{dialect: "sim-canvas", path: "/run/{workflow", err: "unclosed {"},
		// A custom compose stream path that does not end in /stream needs a stop path...
		{dialect: "compose", path: "/agents/{agent}", err: "cannot be derived"},
		// ...and then works.
		{dialect: "compose", path: "/agents/{agent}", stop: "/agents/{agent}/stop/{run}"},
		// The stop path's placeholders are checked too.
		{dialect: "compose", stop: "/stop/{id}", err: "unknown placeholder {id} (known: {agent}, {run})"},
		// sim-chat has no stop request, so no stopPath option.
		{dialect: "sim-chat", stop: "/stop", err: "unknown option stopPath"},
	} {
		opts := protocol.Options{}
		if tc.path != "" {
			opts["path"] = tc.path
		}
		if tc.stop != "" {
			opts["stopPath"] = tc.stop
		}
		d, err := dialects.Default().Lookup(tc.dialect)
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Configure("a", opts)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s path %q stop %q: %v, want %q", tc.dialect, tc.path, tc.stop, err, tc.err)
		}
	}
}

// TestMixProfileHeadersAndPath: a profile's headers and path option are read from the mix; a
// path with another dialect's placeholder is an error naming the profile and the target when
// the run configures it.
func TestMixProfileHeadersAndPath(t *testing.T) {
	t.Parallel()
	bad, err := ParseMix("m.yaml", []byte("name: m\nseed: 1\nscenarios: {plain-answer: 1}\nprofiles:\n"+
		"  - {name: c, dialect: compose, weight: 1, options: {path: '/x/{slug}/stream'}, targets: [{slug: a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Target: "http://127.0.0.1:1", Mix: bad, MixName: "m.yaml", Clients: 1, Sessions: 1, NoLeakCheck: true}
	if _, err := Run(context.Background(), withDialects(cfg)); err == nil || !strings.Contains(err.Error(), "profiles[0] (c).targets[0] (a)") || !strings.Contains(err.Error(), "{slug}") {
		t.Errorf("compose path with {slug}: error %v, want one naming profiles[0] (c).targets[0] and the placeholder", err)
	}
	m, err := ParseMix("m.yaml", []byte("name: m\nseed: 1\nscenarios: {plain-answer: 1}\nprofiles:\n"+
		"  - {dialect: compose, weight: 1, options: {path: '/x/agent/{agent}/stream'}, headers: {X-Api-Key: k}, targets: [{slug: a}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Profiles[0].Headers["X-Api-Key"] != "k" || m.Profiles[0].Options["path"] != "/x/agent/{agent}/stream" {
		t.Errorf("profile = %+v", m.Profiles[0])
	}
}

// gatedRuntime serves the reference runtime under /internal/workflow, and only to requests
// carrying the token header; it counts the stream and stop requests that did.
type gatedRuntime struct {
	streams, stops, refused atomic.Int64
}

const secretToken = "s3cret-t0ken-value"

func (g *gatedRuntime) wrap(rt http.Handler) http.Handler {
	inner := http.StripPrefix("/internal/workflow", rt)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Runtime-Internal-Token") != secretToken || r.Header.Get("X-Tenant") != "acme" {
			g.refused.Add(1)
			// Echo the token the way a careless server might: the generator must not record it.
			http.Error(w, "forbidden: token "+r.Header.Get("X-Runtime-Internal-Token"), http.StatusForbidden)
			return
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/stream"):
			g.streams.Add(1)
		case strings.HasSuffix(r.URL.Path, "/stop"):
			g.stops.Add(1)
		}
		inner.ServeHTTP(w, r)
	})
}

// newMockAndRuntime starts a mock and returns a runtime handler wired to it.
func newMockAndRuntime(t *testing.T) (mockURL string, rt http.Handler) {
	t.Helper()
	mockURL = startMock(t, "")
	srv, err := agentruntime.New(agentruntime.Options{ProviderURL: mockURL, ToolTimeScale: testScale, Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return mockURL, srv.Handler()
}

// TestHeadersAndPathReachTarget: --header values and the path template reach the runtime on
// stream and stop requests, and the secret value is in nothing the run writes.
func TestHeadersAndPathReachTarget(t *testing.T) {
	t.Parallel()
	mockURL, rt := newMockAndRuntime(t)
	g := &gatedRuntime{}
	ts := httptest.NewServer(g.wrap(rt))
	t.Cleanup(ts.Close)
	mix := mixOf(t, []string{"plain-answer", "stop-mid-answer"},
		Profile{Dialect: "compose", Weight: 1, Headers: map[string]string{"X-Tenant": "acme"}, Targets: []Target{{Slug: "openai-all"}}})
	cfg := Config{
		Target: ts.URL, MockURL: mockURL, Mix: mix, MixName: mix.Name, RunID: "headers",
		Clients: 2, Sessions: 8, ScriptTimeScale: testScale, NoLeakCheck: true,
		Headers:       http.Header{"X-Runtime-Internal-Token": {secretToken}},
		Options:       protocol.Options{"path": "/internal/workflow/agent/{agent}/stream"},
		Grace:         10e9,
		StreamTimeout: 20e9,
	}
	run := runLoad(t, cfg)
	if run.Summary.Counters.SessionsStarted != 8 || g.refused.Load() != 0 || len(run.Summary.Violations) > 0 {
		t.Fatalf("refused %d\n%s", g.refused.Load(), describe(run))
	}
	if g.streams.Load() != 8 || g.stops.Load() == 0 {
		t.Errorf("streams %d stops %d: want 8 streams and some stops, all carrying the header under the template's path", g.streams.Load(), g.stops.Load())
	}
	if got := run.Summary.Config.Extra["header"]; got != "X-Runtime-Internal-Token: <redacted>" {
		t.Errorf("recorded header %q, want the name with the value redacted", got)
	}
	assertNoSecret(t, run, secretToken)
}

// TestSecretEchoedInErrorIsRedacted: a server that quotes the token in its error body leaves
// no trace of it in the errors or samples.
func TestSecretEchoedInErrorIsRedacted(t *testing.T) {
	t.Parallel()
	g := &gatedRuntime{}
	ts := httptest.NewServer(g.wrap(http.NotFoundHandler()))
	t.Cleanup(ts.Close)
	mix := mixOf(t, []string{"plain-answer"}, Profile{Dialect: "sim-chat", Weight: 1, Targets: []Target{{Slug: "openai-all"}}})
	run := runLoad(t, Config{
		Target: ts.URL, Mix: mix, MixName: mix.Name, RunID: "echo", Clients: 1, Sessions: 2, NoLeakCheck: true,
		Headers: http.Header{"X-Runtime-Internal-Token": {secretToken}}, // X-Tenant missing: refused
	})
	if g.refused.Load() != 2 || run.Summary.Counters.SessionsFailed != 2 {
		t.Fatalf("refused %d\n%s", g.refused.Load(), describe(run))
	}
	if !strings.Contains(strings.Join(run.Summary.Verdict.Reasons, " "), "forbidden: token <redacted>") {
		t.Errorf("verdict %q: want the echoed token redacted", run.Summary.Verdict.Reasons)
	}
	assertNoSecret(t, run, secretToken)
}

// assertNoSecret writes the run and checks that no file holds the secret.
func assertNoSecret(t *testing.T, run *measure.Run, secret string) {
	t.Helper()
	dir := t.TempDir()
	if err := measure.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret header value", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// trusting is a TLS configuration whose one root is ts's certificate.
func trusting(ts *httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return &tls.Config{RootCAs: pool}
}

// TestHTTPSTargets: the runtime over TLS, HTTP/1.1 (the stream transport) and h2 (ALPN),
// with the server's certificate as CA, without it, and with verification off.
func TestHTTPSTargets(t *testing.T) {
	t.Parallel()
	mockURL, rt := newMockAndRuntime(t)
	var protos [3]atomic.Int64 // requests seen per HTTP major version
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos[min(r.ProtoMajor, 2)].Add(1)
		rt.ServeHTTP(w, r)
	})
	h1 := httptest.NewTLSServer(handler)
	t.Cleanup(h1.Close)
	h2 := httptest.NewUnstartedServer(handler)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	mix := mixOf(t, []string{"plain-answer", "preamble-tool"}, optedInAll(), composeAll())
	for _, tc := range []struct {
		name   string
		ts     *httptest.Server
		http2  bool
		ca     bool
		insec  bool
		host   string // replaces 127.0.0.1 in the URL
		err    string // substring of every session's error; "" = all ok
		wantH2 bool
	}{
		// HTTP/1.1 over TLS on the stream transport, trusting the server's certificate.
		{name: "h1 ca", ts: h1, ca: true},
		// h2 by ALPN on net/http's transport.
		{name: "h2 ca", ts: h2, http2: true, ca: true, wantH2: true},
		// The stream transport offers http/1.1 only, so an h2-capable server speaks 1.1.
		{name: "h1 to h2 server", ts: h2, ca: true},
		// Verification off.
		{name: "h1 insecure", ts: h1, insec: true},
		{name: "h2 insecure", ts: h2, http2: true, insec: true, wantH2: true},
		// No CA: the system roots do not know httptest's certificate.
		{name: "h1 no ca", ts: h1, err: "certificate signed by unknown authority"},
		{name: "h2 no ca", ts: h2, http2: true, err: "certificate signed by unknown authority"},
		// The certificate is for 127.0.0.1 and example.com, not localhost.
		{name: "h1 name mismatch", ts: h1, ca: true, host: "localhost", err: "not localhost"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := protos[2].Load()
			target := tc.ts.URL
			if tc.host != "" {
				target = strings.Replace(target, "127.0.0.1", tc.host, 1)
			}
			cfg := Config{
				Target: target, MockURL: mockURL, Mix: mix, MixName: mix.Name, RunID: "tls-" + strings.ReplaceAll(tc.name, " ", "-"),
				Clients: 2, Sessions: 6, ScriptTimeScale: testScale, NoLeakCheck: true, HTTP2: tc.http2,
				Grace: 10e9, StreamTimeout: 20e9,
			}
			if tc.insec {
				cfg.TLS = &tls.Config{InsecureSkipVerify: true}
			}
			if tc.ca {
				cfg.TLS = trusting(tc.ts)
			}
			run := runLoad(t, cfg)
			c := run.Summary.Counters
			if tc.err == "" {
				if c.SessionsOK != 6 || len(run.Summary.Violations) > 0 {
					t.Fatalf("want 6 ok sessions\n%s", describe(run))
				}
				if got := protos[2].Load() > before; got != tc.wantH2 {
					t.Errorf("h2 requests seen: %v, want %v", got, tc.wantH2)
				}
				return
			}
			if c.SessionsFailed != 6 || c.Outcome(measure.OutcomeTransportError) != 6 {
				t.Fatalf("want 6 failed sessions with transport errors\n%s", describe(run))
			}
			host := strings.TrimPrefix(target, "https://")
			quoted := 0
			for _, reason := range run.Summary.Verdict.Reasons {
				if strings.Contains(reason, "session") {
					quoted++
					if !strings.Contains(reason, tc.err) || !strings.Contains(reason, host) {
						t.Errorf("reason %q: want the host %s and %q", reason, host, tc.err)
					}
				}
			}
			if quoted == 0 {
				t.Errorf("no session error quoted in the verdict %q", run.Summary.Verdict.Reasons)
			}
		})
	}
}

// TestHTTPSExpiredCertificate: a trusted certificate past its NotAfter fails every session
// with a transport error naming the host and "expired"; the run itself goes on.
func TestHTTPSExpiredCertificate(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "expired"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.NotFoundHandler())
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	ts.StartTLS()
	t.Cleanup(ts.Close)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	mix := mixOf(t, []string{"plain-answer"}, optedInNone())
	run := runLoad(t, Config{
		Target: ts.URL, Mix: mix, MixName: mix.Name, RunID: "expired", Clients: 1, Sessions: 3,
		NoLeakCheck: true, TLS: &tls.Config{RootCAs: pool},
	})
	c := run.Summary.Counters
	reasons := strings.Join(run.Summary.Verdict.Reasons, "; ")
	if c.Outcome(measure.OutcomeTransportError) != 3 || !strings.Contains(reasons, "TLS handshake with "+ts.Listener.Addr().String()) ||
		!strings.Contains(reasons, "certificate has expired") {
		t.Errorf("want 3 transport errors naming the host and the expiry\n%s", describe(run))
	}
}

// TestPathOptionErrors: a path option whose placeholder is not the dialect's is refused before
// anything is sent, naming the placeholder and the known ones.
func TestPathOptionErrors(t *testing.T) {
	t.Parallel()
	mix := mixOf(t, []string{"plain-answer"}, optedInNone())
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		// A path option for a mix of several dialects: the one whose placeholder differs says so.
		{Config{Options: protocol.Options{"path": "/x/{slug}"}, Mix: mixOf(t, []string{"plain-answer"}, optedInNone(), canvas())}, "unknown placeholder {slug} (known: {workflow})"},
		// A path whose placeholder is not the dialect's.
		{Config{Options: protocol.Options{"path": "/x/{agent}"}}, "unknown placeholder {agent} (known: {slug})"},
	} {
		cfg := tc.cfg
		cfg.Target, cfg.Clients, cfg.Sessions, cfg.NoLeakCheck = "https://127.0.0.1:1", 1, 1, true
		if cfg.Mix == nil {
			cfg.Mix = mix
		}
		if _, err := Run(context.Background(), withDialects(cfg)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// TestRedactor: free text is searched for every secret and each part of one: a sensitive
// header's whole value, the bare credential after its auth scheme (a server echoing "Incorrect
// API key provided: T"), a Basic credential decoded, a cookie's value, the URLs' userinfo and
// --redact values; a short value of a header whose name only looks sensitive (Portkey's
// x-portkey-provider: openai) is left in error messages.
func TestRedactor(t *testing.T) {
	t.Parallel()
	basic := base64.StdEncoding.EncodeToString([]byte("alice:open-sesame-42"))
	r := NewRedactor([]http.Header{{
		"X-Portkey-Provider":       {"openai"},
		"X-Runtime-Internal-Token": {secretToken},
		"Authorization":            {"Bearer sk-bare-0123456789"},
		"Proxy-Authorization":      {"Basic " + basic},
		"Cookie":                   {"theme=dark; session=cookie-secret-77"},
	}}, []string{"http://bob:url-password-99@127.0.0.1:1", "http://127.0.0.1:2"}, []string{"hunter"})
	for _, tc := range []struct{ in, want string }{
		// the header's whole value, as sent
		{"token " + secretToken + " refused", "token <redacted> refused"},
		// a short value of a header that only looks sensitive stays
		{"openai error", "openai error"},
		// the whole Authorization value, and the bare token a server echoes
		{"got Bearer sk-bare-0123456789", "got <redacted>"},
		{"Incorrect API key provided: sk-bare-0123456789.", "Incorrect API key provided: <redacted>."},
		// URL- and JSON-escaped (a redirect's query, an error body)
		{"Location: https://x/?k=" + url.QueryEscape("sk-bare-0123456789"), "Location: https://x/?k=<redacted>"},
		// Basic: encoded, decoded, the password alone
		{basic + " alice:open-sesame-42 open-sesame-42", "<redacted> <redacted> <redacted>"},
		// a cookie's value, not the short one
		{"session=cookie-secret-77 theme=dark", "session=<redacted> theme=dark"},
		// the URL's userinfo, and its password alone
		{"http://bob:url-password-99@127.0.0.1:1/x; url-password-99", "http://<redacted>@127.0.0.1:1/x; <redacted>"},
		// --redact, whatever its length
		{"hunter2", "<redacted>2"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := RedactURL("https://u:p@h:8443/a?b=1"); got != "https://<redacted>@h:8443/a?b=1" {
		t.Errorf("RedactURL = %q", got)
	}
	base := errors.New("Incorrect API key provided: sk-bare-0123456789")
	if err := r.Error(fmt.Errorf("session s-1: %w", base)); err.Error() != "session s-1: Incorrect API key provided: <redacted>" || !errors.Is(err, base) {
		t.Errorf("Error: %v (Is base: %v)", err, errors.Is(err, base))
	}
	var none *Redactor
	if none.String("x") != "x" || NewRedactor(nil, []string{"http://h"}, nil).String(secretToken) != secretToken {
		t.Error("a redactor without secrets changed text")
	}
}
