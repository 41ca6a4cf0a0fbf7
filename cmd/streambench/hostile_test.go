package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/measure"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/anthropicmessages"
	"github.com/streambench/streambench/protocol/openaichat"
	"github.com/streambench/streambench/stack"
	"github.com/streambench/streambench/verdict"
)

// runMainMeasured is runMain that also returns how long the process took and its peak
// resident memory (the kernel's maxrss of the child: this test process's other tests do not
// count).
func runMainMeasured(t *testing.T, args ...string) (code int, output string, wall time.Duration, peakRSS int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), benchChildEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	// The child's own peak, read from its /proc status (VmHWM, the high-water mark of the
	// memory it exec'd into) until it exits. Not the rusage's Maxrss: the child was cloned
	// sharing this test process's memory until exec, and the kernel keeps that mm's peak in
	// Maxrss, so a busy test process (parallel tests) made a 73 MiB child read 400 MiB.
	var hwm int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			hwm = max(hwm, vmHWM(cmd.Process.Pid))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err = cmd.Wait()
	wall = time.Since(start)
	close(stop)
	<-done
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("%v: %v", args, err)
	}
	peakRSS = hwm << 10
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && peakRSS == 0 {
		peakRSS = ru.Maxrss << 10 // no /proc: the rusage's figure, an upper bound
	}
	return code, out.String(), wall, peakRSS
}

// bigFrameTarget is a sim-chat target (opted in) that answers every request with frames
// valid answer chunks of about size bytes each and no terminal, then ends the response. A
// line may hold 64 KiB (sse.DefaultMaxLine) and an event 1 MiB, so each frame is a chunk of
// 60,000 bytes of text on its first data line and JSON whitespace on the next ones.
func bigFrameTarget(t *testing.T, frames, size int) *httptest.Server {
	t.Helper()
	const line = 60_000
	var b strings.Builder
	b.WriteString(`data: {"blockId":"b1","chunk":"` + strings.Repeat("x", line) + `"` + "\n")
	for n := line; n < size; n += line {
		b.WriteString("data: " + strings.Repeat(" ", line) + "\n")
	}
	b.WriteString("data: }\n\n")
	frame := []byte(b.String())
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		simChatStream(w)
		for range frames {
			if _, err := w.Write(frame); err != nil {
				return
			}
		}
	})
	return srv
}

// TestBigFramesStayBounded is the hostile case of issue #21's unbounded samples: a target
// sending 60 valid 900 KB frames and no terminal, 20 clients for 4 s. Every session fails
// (truncated, R-converge), and each rule's samples replay sessions of 54 MB: the generator
// kept their frames whole (1.25 GiB RSS, a 162 MB violations.jsonl and report.html, 57 s).
// Then a kept frame was clipped at 64 KiB, a sample at 256 KiB, the run's samples at 4 MiB,
// the replays shared the replay budget, and the report clipped frames again; now a sample is
// the session's own first and last frames, ~1 KiB (frames cut by the bound left out). Measured on 2 vCPUs
// (AMD EPYC) shared with other work (load average 6–9): peak RSS 73–74 MiB (before: 1,238
// MiB), violations.jsonl 770 KiB, report.html 305 KiB (before: 164 and 165 MiB), 12.6–29 s
// (before: 17 s at the same load, for 21 sessions); the bounds below leave room for a slower
// machine.
func TestBigFramesStayBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("moves gigabytes through loopback")
	}
	t.Parallel()
	srv := bigFrameTarget(t, 60, 900<<10)
	dir := t.TempDir()
	mix := writeOptedInMix(t, dir, "big", "big")
	out := filepath.Join(dir, "out")
	code, output, wall, rss := runMainMeasured(t, "load", "--target", srv.URL, "--mix", mix, "--clients", "20", "--duration", "4s",
		"--grace", "20s", "--no-leak-check", "--quiet", "--out", out, "--run-id", "big")
	t.Logf("load: %s, peak RSS %d MiB", wall.Round(time.Millisecond), rss>>20)
	if code != exitFailure {
		t.Fatalf("load exit %d, want %d:\n%s", code, exitFailure, output)
	}
	err := filepath.WalkDir(filepath.Join(out, "big"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		t.Logf("%s: %d KiB", d.Name(), info.Size()>>10)
		if info.Size() > 8<<20 {
			t.Errorf("%s is %d MiB: over 8 MiB", path, info.Size()>>20)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rss > 256<<20 {
		t.Errorf("peak RSS %d MiB, over 256 MiB", rss>>20)
	}
	run := readRun(t, filepath.Join(out, "big"))
	if len(run.Samples) == 0 {
		t.Fatal("no violation sample kept")
	}
	for _, sm := range run.Samples {
		if n := sm.SampleBytes(); n > measure.MaxSampleBytes+2*measure.MaxSampleFrameBytes {
			t.Errorf("sample %s %s keeps %d KiB of frames", sm.Rule, sm.Session, n>>10)
		}
		for _, f := range sm.Frames {
			if len(f) > measure.MaxSampleFrameBytes+100 {
				t.Errorf("sample %s keeps a frame of %d KiB", sm.Session, len(f)>>10)
			}
		}
	}
	// 4 s of load, the in-flight sessions' drain (a 54 MB session each) within the grace
	// period, the report; generous for a loaded machine.
	if wall > 45*time.Second {
		t.Errorf("load took %s, want under 45 s", wall)
	}
}

// usageStream is a valid one-turn stream of the provider dialect whose usage report says
// tokens output tokens (as written on the wire).
func usageStream(dialect, tokens string) string {
	switch dialect {
	case "openai-chat":
		chunk := func(choices string) string {
			return `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":` + choices + "}\n\n"
		}
		return chunk(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`) +
			chunk(`[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]`) +
			chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`) +
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":` + tokens + `,"total_tokens":5}}` + "\n\n" +
			"data: [DONE]\n\n"
	case "anthropic-messages":
		ev := func(typ, fields string) string {
			return fmt.Sprintf("event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, fields)
		}
		return ev("message_start", `,"message":{"id":"m","type":"message","role":"assistant","content":[],"usage":{"input_tokens":1,"output_tokens":1}}`) +
			ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`) +
			ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":"Hi"}`) +
			ev("content_block_stop", `,"index":0`) +
			ev("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":`+tokens+`}`) +
			ev("message_stop", "")
	}
	panic("no usage stream for " + dialect)
}

// TestUsageOutOfRangeIsAViolation: a usage report outside 0…2^40 (the largest int64, which
// summed made the run's token totals negative and the run pass; or −5, which anthropic-messages
// accepted) is a violation of the wire's usage rule and never reaches the totals: the run fails
// and its token figures stay the frames' count.
func TestUsageOutOfRangeIsAViolation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect, tokens string
		rule            protocol.Rule
	}{
		// 2^63−1: summed over sessions, it wrapped the totals negative
		{"openai-chat", "9223372036854775807", openaichat.RUsage},
		{"anthropic-messages", "9223372036854775807", anthropicmessages.RMessage},
		// a negative count
		{"anthropic-messages", "-5", anthropicmessages.RMessage},
	} {
		t.Run(tc.dialect+"/"+tc.tokens, func(t *testing.T) {
			t.Parallel()
			body := usageStream(tc.dialect, tc.tokens)
			srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(body))
			})
			dir := t.TempDir()
			err := runLoad([]string{"--target", srv.URL, "--dialect", tc.dialect, "--mix", writePlainMix(t, dir, tc.dialect),
				"--no-ground-truth", "--rate", "50", "--sessions", "3", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "usage"})
			if code := exitCode(err); code != exitFailure {
				t.Fatalf("load: exit %d (%v), want %d", code, err, exitFailure)
			}
			run := readRun(t, filepath.Join(dir, "usage"))
			s := run.Summary
			if s.Violations[tc.rule] != 3 {
				t.Errorf("violations %v, want 3 of %s", s.Violations, tc.rule)
			}
			// One text frame per session: the usage report's count is not taken.
			if s.Counters.OutputTokens != 3 || s.Tokens == nil || s.Tokens.OutputTokens != 3 || s.Tokens.OutputTokensPerSecond < 0 {
				t.Errorf("output tokens %d, token summary %+v: want 3 (a token per text frame), none from the report", s.Counters.OutputTokens, s.Tokens)
			}
		})
	}
}

// hangingTarget answers every request 200 with one frame that breaks two sim-chat rules (no
// protocol echo for an opted-in client: R-headers; not JSON: R-framing), then holds the
// stream open, silent, until the client leaves.
func hangingTarget(t *testing.T) *httptest.Server {
	t.Helper()
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {oops\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	return srv
}

// TestHungTargetEndsOnTime: against a target whose every stream hangs, a run ends within
// --duration + --grace + 10 s for the rest (results, report; generous on a loaded machine),
// and each rule's sample holds the hung session's own frames. When samples were replays of the
// hung sessions, one at a time, each up to the stream timeout, this run lasted 37 s.
func TestHungTargetEndsOnTime(t *testing.T) {
	t.Parallel()
	srv := hangingTarget(t)
	dir := t.TempDir()
	mix := writeOptedInMix(t, dir, "hang", "hang")
	const duration, grace, streamTimeout = 2 * time.Second, 6 * time.Second, 5 * time.Second
	start := time.Now()
	err := runLoad([]string{"--target", srv.URL, "--mix", mix, "--clients", "4", "--duration", duration.String(),
		"--grace", grace.String(), "--stream-timeout", streamTimeout.String(), "--no-leak-check", "--quiet", "--out", dir, "--run-id", "hang"})
	took := time.Since(start)
	if code := exitCode(err); code != exitFailure {
		t.Fatalf("load: exit %d (%v), want %d", code, err, exitFailure)
	}
	if limit := duration + grace + 10*time.Second; took > limit {
		t.Errorf("the run took %s, over --duration + --grace + 10 s = %s", took.Round(time.Millisecond), limit)
	}
	run := readRun(t, filepath.Join(dir, "hang"))
	if len(run.Samples) == 0 {
		t.Fatal("no sample of the hung sessions")
	}
	for _, sm := range run.Samples {
		if !strings.Contains(strings.Join(sm.Frames, "\n"), "data: {oops") {
			t.Errorf("sample %s frames %q: want the hung stream's own frame", sm.Rule, sm.Frames)
		}
	}
}

// getStatus GETs url and returns the status and body.
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPprofOffByDefault: the mock and the runtime serve no /debug/pprof/ on their ports (the
// runtime served its --provider-header credential at /debug/pprof/cmdline); --pprof ADDR
// serves profiles on a listener of its own, on loopback for an ADDR without a host, and never
// the command line.
func TestPprofOffByDefault(t *testing.T) {
	t.Parallel()
	const secret = "sk-provider-pprof-0123456789"
	exe := os.Args[0]
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"runtime", []string{"runtime", "--addr", "127.0.0.1:0", "--provider", "http://127.0.0.1:1", "--provider-header", "Authorization: Bearer " + secret}},
		{"mock", []string{"mock", "--addr", "127.0.0.1:0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			child, err := stack.StartChild(exe, tc.args)
			stopAtEnd(t, child, err)
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline"} {
				if code, body := getStatus(t, child.URL()+path); code != http.StatusNotFound || strings.Contains(body, secret) {
					t.Errorf("GET %s on the %s's port: %d %q, want 404 without the secret", path, tc.name, code, body)
				}
			}
			if child.PprofURL() != "" {
				t.Errorf("profiles served at %s without --pprof", child.PprofURL())
			}
			prof, err := stack.StartChild(exe, append(slices.Clone(tc.args), "--pprof", ":0"))
			stopAtEnd(t, prof, err)
			base := prof.PprofURL()
			if !strings.HasPrefix(base, "http://127.0.0.1:") || base == prof.URL() {
				t.Fatalf("--pprof :0 serves at %q (the %s's port %s): want a loopback listener of its own", base, tc.name, prof.URL())
			}
			if code, _ := getStatus(t, base+"/debug/pprof/goroutine?debug=1"); code != http.StatusOK {
				t.Errorf("GET goroutine profile: %d", code)
			}
			if code, body := getStatus(t, base+"/debug/pprof/cmdline"); code != http.StatusNotFound || strings.Contains(body, secret) {
				t.Errorf("GET /debug/pprof/cmdline on the pprof listener: %d %q, want 404 without the secret", code, body)
			}
		})
	}
}

// secretTarget is a sim-chat target (opted in) that quotes every secret it was sent, one way
// per slug: "echo" answers 401 with OpenAI's message quoting the bare token, "redirect" 307 to
// a Location carrying it, "frames" a stream whose chunk quotes it (R-converge: the replay
// keeps its frames in a sample). Each also quotes the target URL's password and the extra
// secret. hits counts requests per slug.
func secretTarget(t *testing.T, quoted string, hits *sync.Map) *httptest.Server {
	t.Helper()
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		slug := r.PathValue("slug")
		if slug == "" {
			slug = strings.TrimPrefix(r.URL.Path, "/api/chat/")
		}
		n, _ := hits.LoadOrStore(slug, new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
		switch slug {
		case "echo":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s","type":"invalid_request_error"}}`, quoted)
		case "redirect":
			w.Header().Set("Location", "https://login.example/callback?access_token="+url.QueryEscape(quoted))
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "frames":
			simChatStream(w)
			chunk, _ := json.Marshal("the keys: " + quoted)
			fmt.Fprintf(w, "data: {\"blockId\":\"b1\",\"chunk\":%s}\n\ndata: {\"event\":\"final\",\"data\":{\"success\":true,\"output\":{\"content\":%s}}}\n\ndata: \"[DONE]\"\n\n", chunk, chunk)
		default:
			http.NotFound(w, r)
		}
	})
	return srv
}

// TestNoSecretWrittenOrPrinted: a run with a secret in every place a hostile or careless
// target puts one, the target URL's user:password, an Authorization header whose bare token
// a 401 body echoes ("Incorrect API key provided: T"), a redirect's Location, frames kept in
// a violation sample, and a --redact value: no file under the run directory and no line the
// process printed holds any of them. Before, the URL's password was in summary.json
// (config.target, environment.target) and both reports, and the bare token wherever the
// target quoted it.
func TestNoSecretWrittenOrPrinted(t *testing.T) {
	t.Parallel()
	const (
		token    = "sk-bare-token-0123456789"
		password = "url-pass-word-98765"
		extra    = "zq-42" // --redact: any length
	)
	var hits sync.Map
	srv := secretTarget(t, token+" "+password+" user:"+password+" "+extra, &hits)
	dir := t.TempDir()
	mix := writeOptedInMix(t, dir, "secrets", "echo", "redirect", "frames")
	target := strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1)
	out := filepath.Join(dir, "out")
	code, output := runMain(t, "load", "--target", target, "--mix", mix, "--rate", "50", "--sessions", "30",
		"--header", "Authorization: Bearer "+token, "--redact", extra, "--leak-grace", "1s", "--out", out, "--run-id", "secrets")
	if code != exitFailure {
		t.Fatalf("load exit %d, want %d:\n%s", code, exitFailure, output)
	}
	for _, slug := range []string{"echo", "redirect", "frames"} {
		if n, ok := hits.Load(slug); !ok || n.(*atomic.Int64).Load() == 0 {
			t.Errorf("no request reached %s: the run did not meet every case", slug)
		}
	}
	for _, secret := range []string{token, password, extra} {
		assertSecretNowhere(t, secret, output, out)
	}
	run := readRun(t, filepath.Join(out, "secrets"))
	s := run.Summary
	if want := "http://" + loadgen.Redacted + "@" + strings.TrimPrefix(srv.URL, "http://"); s.Config.Target != want || s.Environment.Target != want {
		t.Errorf("recorded targets %q, %q, want %q", s.Config.Target, s.Environment.Target, want)
	}
	first := strings.Join(s.Judging.FirstErrors, "\n")
	for _, want := range []string{"Incorrect API key provided: " + loadgen.Redacted, "access_token=" + loadgen.Redacted} {
		if !strings.Contains(first, want) {
			t.Errorf("first errors lack %q (the echo, redacted):\n%s", want, first)
		}
	}
	framed := false
	for _, sm := range run.Samples {
		framed = framed || strings.Contains(strings.Join(sm.Frames, "\n"), "the keys: "+loadgen.Redacted)
	}
	if !framed {
		t.Errorf("no sample kept the frames quoting the secrets, redacted: %+v", run.Samples)
	}
}

// countingServer answers every request with status (and a short body) and counts them.
func countingServer(t *testing.T, status int, tls bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, fmt.Sprintf(`{"error":"status %d"}`, status), status)
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &n
}

// refusedURL is a loopback URL nothing listens on (a port just released).
func refusedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

// TestDeadTargetFailsFast: a target that cannot work, whatever the load's size, stops `load`
// before the load with one line naming the route and why, exit 1, within 5 s, having sent
// one request in all (the preflight's first route: fewer than one per client). Before, each
// fired thousands of requests for the whole --duration (6,611 in 5 s from 5 clients).
func TestDeadTargetFailsFast(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) (string, *atomic.Int64)
		want string
	}{
		// nothing listens
		{"refused", func(t *testing.T) (string, *atomic.Int64) { return refusedURL(t), nil }, "connection refused"},
		// the name does not resolve
		{"dns", func(*testing.T) (string, *atomic.Int64) { return "http://streambench-no-such-host.invalid:8080", nil }, "no such host"},
		// a certificate the generator does not trust
		{"tls", func(t *testing.T) (string, *atomic.Int64) {
			srv, n := countingServer(t, http.StatusOK, true)
			return srv.URL, n
		}, "certificate"},
		// a wrong route
		{"404", func(t *testing.T) (string, *atomic.Int64) {
			srv, n := countingServer(t, http.StatusNotFound, false)
			return srv.URL, n
		}, "HTTP 404"},
		// a route that does not take POST
		{"405", func(t *testing.T) (string, *atomic.Int64) {
			srv, n := countingServer(t, http.StatusMethodNotAllowed, false)
			return srv.URL, n
		}, "HTTP 405"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			target, hits := tc.url(t)
			dir := t.TempDir()
			start := time.Now()
			// The default mix: 13 routes (dialects × targets), more than the clients.
			code, output := runMain(t, "load", "--target", target, "--clients", "5", "--duration", "30s", "--no-leak-check", "--quiet", "--out", dir)
			took := time.Since(start)
			if code != exitFailure || !strings.Contains(output, "preflight: POST ") || !strings.Contains(output, tc.want) {
				t.Errorf("load: exit %d, want %d naming the route and %q:\n%s", code, exitFailure, tc.want, output)
			}
			if lines := strings.Split(strings.TrimSpace(output), "\n"); len(lines) != 1 || len(output) > 600 {
				t.Errorf("want one line of at most 600 bytes, got %d lines, %d bytes:\n%s", len(lines), len(output), output)
			}
			if took > 5*time.Second {
				t.Errorf("load took %s, want under 5 s", took.Round(time.Millisecond))
			}
			if hits != nil && hits.Load() > 1 {
				t.Errorf("%d requests reached the target, want the preflight's one at most", hits.Load())
			}
		})
	}
}

// TestMalformedTargetIsBadInput: a URL that is not an http(s) base URL is bad input (exit
// 104) named before anything is sent. Before, a scheme-less 127.0.0.1:8080 failed every
// session at load.
func TestMalformedTargetIsBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		// no scheme: not even a URL
		{[]string{"--target", "127.0.0.1:8080"}, `--target "127.0.0.1:8080": not a URL: want http://HOST:PORT or https://HOST:PORT (the scheme is missing)`},
		// no scheme: a host read as a scheme
		{[]string{"--target", "localhost:8080"}, "(the scheme is missing)"},
		// a scheme streambench does not speak
		{[]string{"--target", "ftp://127.0.0.1:21"}, `scheme "ftp": want http or https`},
		// no host
		{[]string{"--target", "http://"}, "no host"},
		// the mock's URL too, without quoting its password
		{[]string{"--target", "http://127.0.0.1:1", "--mock", "ftp://u:mock-password-1@127.0.0.1:2"}, `--mock "ftp://<redacted>@127.0.0.1:2"`},
	} {
		code, output := runMain(t, append([]string{"load", "--quiet", "--clients", "1", "--duration", "1s"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(output, tc.want) || strings.Contains(output, "mock-password-1") {
			t.Errorf("load %q: exit %d, output %q; want %d and %q", tc.args, code, output, exitUsage, tc.want)
		}
	}
}

// TestCircuitBreakerStopsTheRun: a target that refuses every session the same way, past the
// preflight (a 401: the run counts it), is stopped by the circuit breaker once the first 50
// sessions all failed alike, saying why; not after the whole --duration.
func TestCircuitBreakerStopsTheRun(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t, http.StatusUnauthorized, false)
	dir := t.TempDir()
	start := time.Now()
	err := runLoad([]string{"--target", srv.URL, "--dialect", "sim-chat", "--mix", writePlainMix(t, dir, "sim-chat"),
		"--clients", "5", "--duration", "60s", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "breaker"})
	took := time.Since(start)
	if code := exitCode(err); code != exitFailure || !strings.Contains(err.Error(), "circuit breaker: the first 50 sessions all ended http_error the same way") {
		t.Fatalf("load: exit %d (%v), want %d naming the circuit breaker", code, err, exitFailure)
	}
	if took > 30*time.Second {
		t.Errorf("load took %s of its 60 s, want it stopped early", took.Round(time.Millisecond))
	}
	run := readRun(t, filepath.Join(dir, "breaker"))
	// 50 sessions, and those the 5 users started while the stop reached them (a few each: a
	// refused session takes microseconds); and the preflight's request.
	if n := run.Summary.Counters.SessionsStarted; n < 50 || n > 75 || hits.Load() > n+1 {
		t.Errorf("%d sessions started, %d requests: want 50 to 75 sessions, one request each and the preflight's", n, hits.Load())
	}
	if !strings.Contains(run.Summary.Judging.Stopped, "circuit breaker") {
		t.Errorf("summary.json judging.stopped %q", run.Summary.Judging.Stopped)
	}
}

// TestLoadWritesResultsByDefault: `load` without --out writes results/RUN-ID as `run` does
// (before, it wrote nothing and said nothing), and says where; --out - keeps nothing.
func TestLoadWritesResultsByDefault(t *testing.T) {
	t.Parallel()
	srv, _ := countingServer(t, http.StatusUnauthorized, false)
	for _, tc := range []struct {
		name  string
		extra []string
		kept  bool
	}{
		// the default: results/RUN-ID
		{"default", nil, true},
		// --out -: nothing
		{"dash", []string{"--out", "-"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wd := t.TempDir()
			code, output := runMainIn(t, wd, nil, append([]string{"load", "--target", srv.URL, "--dialect", "sim-chat", "--mix", writePlainMix(t, t.TempDir(), "sim-chat"),
				"--clients", "1", "--sessions", "2", "--no-leak-check", "--run-id", "byDefault"}, tc.extra...)...)
			if code != exitFailure {
				t.Fatalf("load: exit %d, want %d (every session a 401):\n%s", code, exitFailure, output)
			}
			dir := filepath.Join(wd, "results", "byDefault")
			_, err := os.Stat(filepath.Join(dir, measure.SummaryFile))
			if kept := err == nil; kept != tc.kept {
				t.Errorf("%s kept %v, want %v:\n%s", dir, kept, tc.kept, output)
			}
			if said := strings.Contains(output, "results: "+filepath.Join("results", "byDefault")); said != tc.kept {
				t.Errorf("output says where the results are: %v, want %v:\n%s", said, tc.kept, output)
			}
			if entries, _ := os.ReadDir(wd); !tc.kept && len(entries) != 0 {
				t.Errorf("--out - left %d entries in the working directory", len(entries))
			}
		})
	}
}

// TestCompareRefusesIncompleteRuns: `compare` refuses a run that did not finish (a snapshot:
// killed, or still running) as gate does, exit 104 naming it; --allow-incomplete compares it
// marked INCOMPLETE. Before, it compared a killed run's partial figures without a word.
func TestCompareRefusesIncompleteRuns(t *testing.T) {
	t.Parallel()
	finished := savedRun(t, "finished", 0, nil)
	run, err := measure.ReadRun(savedRun(t, "killed", 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(t.TempDir(), "killed")
	if err := measure.WriteSnapshot(killed, run); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{finished, killed}, {killed, finished}} {
		var out bytes.Buffer
		err := compareMain(args, &out)
		if code := exitCode(err); code != exitUsage || !errors.Is(err, verdict.ErrIncomplete) || !strings.Contains(err.Error(), "run killed ("+killed+")") {
			t.Errorf("compare %q: exit %d (%v), want %d naming the incomplete run", args, code, err, exitUsage)
		}
	}
	var out bytes.Buffer
	if err := compareMain([]string{finished, killed, "--allow-incomplete"}, &out); err != nil ||
		!strings.Contains(out.String(), "B: killed (INCOMPLETE)") || !strings.Contains(out.String(), "B: INCOMPLETE: the run was killed") {
		t.Errorf("compare --allow-incomplete: %v:\n%s", err, out.String())
	}
}

// TestHonorRetryAfter: closed-loop users answered 429 with Retry-After: 1 start their next
// session at once (by design, and --help says so), hundreds in a few seconds; with
// --honor-retry-after each waits the second first: a few sessions per user.
func TestHonorRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		honor    bool
		min, max int64 // sessions started by 2 users in 3 s
	}{
		// ignored: back to back
		{"ignored", false, 50, 1 << 40},
		// honoured: one a second per user, and the ones under way when the run ends
		{"honoured", true, 2, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
			})
			dir := t.TempDir()
			args := []string{"--target", srv.URL, "--dialect", "sim-chat", "--mix", writePlainMix(t, dir, "sim-chat"), "--clients", "2",
				"--duration", "3s", "--breaker-sessions", "0", "--no-leak-check", "--quiet", "--out", dir, "--run-id", "retry"}
			if tc.honor {
				args = append(args, "--honor-retry-after")
			}
			if code := exitCode(runLoad(args)); code != exitFailure {
				t.Fatalf("load: exit %d, want %d (every session a 429)", code, exitFailure)
			}
			run := readRun(t, filepath.Join(dir, "retry"))
			if n := run.Summary.Counters.SessionsStarted; n < tc.min || n > tc.max {
				t.Errorf("%d sessions started, want %d to %d", n, tc.min, tc.max)
			}
		})
	}
}

// vmHWM is process pid's peak resident set (VmHWM in /proc/PID/status) in KiB, 0 when it cannot
// be read (no /proc, or the process is gone).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

// readRun reads a saved run directory, failing the test when it cannot.
func readRun(t *testing.T, dir string) *measure.Run {
	t.Helper()
	run, err := readRunArg(dir)
	if err != nil {
		t.Fatal(err)
	}
	return run
}
