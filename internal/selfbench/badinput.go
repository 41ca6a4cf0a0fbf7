package selfbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/streambench/streambench/agentruntime"
	"github.com/streambench/streambench/loadgen"
	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/protocol/compose"
	"github.com/streambench/streambench/stack"
)

// BadInputServer names the server a malformed request goes to.
type BadInputServer string

// The two servers of the system under test.
const (
	BadInputRuntime BadInputServer = "runtime"
	BadInputMock    BadInputServer = "mock"
)

// BadInputLimits are the server settings the table's requests are built against.
type BadInputLimits struct {
	RuntimeMaxBody, MockMaxBody int64  // the servers' body caps in bytes
	FinishedRun                 string // a compose run of agent openai-none that has ended
}

// BadInputProbe is one malformed request.
type BadInputProbe struct {
	Server       BadInputServer
	Method, Path string
	Header       http.Header
	Body         string
	Raw          string // written as is on a new TCP connection: framing an http.Client will not produce
	Says         string // what the message of the JSON error that answers it must contain
}

// BadInputClass is one kind of malformed request and the status each server must answer it with.
type BadInputClass struct {
	Name string
	// Runtime and Mock are the expected statuses, 0 without a probe for that server (the runtime
	// forwards the user's text and X-Streambench-* headers unread; the mock has no runs).
	Runtime, Mock int
	Probes        []BadInputProbe // sent in turn, each to its server
}

// Expected is the status server must answer the class with (0: no probe for it).
func (c *BadInputClass) Expected(server BadInputServer) int {
	if server == BadInputRuntime {
		return c.Runtime
	}
	return c.Mock
}

// badInputDirective selects a real scenario, so a probe is wrong only in its class's way.
const badInputDirective = "[[streambench scenario=plain-answer seed=1 session=bad-input]] hi"

func class(name string, runtime, mock int, probes ...BadInputProbe) BadInputClass {
	return BadInputClass{Name: name, Runtime: runtime, Mock: mock, Probes: probes}
}

const (
	biChat    = "/api/chat/openai-none"
	biCanvas  = "/api/workflows/openai-none/execute"
	biAgent   = "/agent/openai-none/stream"
	biOpenAI  = mockprovider.PathOpenAI
	biAnthrop = mockprovider.PathAnthropic
)

func rtProbe(method, path, body, says string) BadInputProbe {
	return BadInputProbe{Server: BadInputRuntime, Method: method, Path: path, Body: body, Says: says}
}

func mockProbe(method, path, body, says string) BadInputProbe {
	return BadInputProbe{Server: BadInputMock, Method: method, Path: path, Body: body, Says: says}
}

func withHeader(p BadInputProbe, kv ...string) BadInputProbe {
	p.Header = http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Header.Set(kv[i], kv[i+1])
	}
	return p
}

func rawProbe(server BadInputServer, path, rest, says string) BadInputProbe {
	return BadInputProbe{Server: server, Raw: "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + rest, Says: says}
}

// openaiMsg and anthropicMsg are valid bodies around one user message text.
func openaiMsg(text string) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "messages": []map[string]any{{"role": "user", "content": text}}})
	return string(b)
}

func anthropicMsg(text string) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 64, "stream": true, "messages": []map[string]any{{"role": "user", "content": text}}})
	return string(b)
}

// BadInputClasses is the table of the 20 classes of malformed requests, built for limits.
func BadInputClasses(l BadInputLimits) []BadInputClass {
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	stallHead := "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mo"
	brokenChunk := "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
	return []BadInputClass{
		// Bodies that are not the JSON document the endpoint reads. Prose, and a JSON value followed by more bytes, are not one JSON document.
		class("not-json", 400, 400,
			rtProbe("POST", biChat, "hello there", "not valid JSON"),
			rtProbe("POST", biAgent, `{"message":"hi"} {"message":"again"}`, "after top-level value"),
			mockProbe("POST", biOpenAI, "model=m&messages=hi", "invalid JSON at byte"),
			mockProbe("POST", biAnthrop, anthropicMsg(badInputDirective)+" trailing", "after top-level value")),
		// A body cut off mid-document.
		class("truncated-json", 400, 400,
			rtProbe("POST", biCanvas, `{"input":"hi","stream":tr`, "not valid JSON"),
			mockProbe("POST", biOpenAI, openaiMsg(badInputDirective)[:30], "unexpected end of JSON input"),
			mockProbe("POST", biAnthrop, anthropicMsg(badInputDirective)[:40], "unexpected end of JSON input")),
		// A field, or the whole body, of the wrong JSON type.
		class("wrong-type", 400, 400,
			rtProbe("POST", biChat, `{"input":42}`, `field "input" must be a JSON string`),
			rtProbe("POST", biAgent, `["hi"]`, "must be a JSON object, got array"),
			mockProbe("POST", biOpenAI, `{"model":"m","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream: expected bool"),
			mockProbe("POST", biAnthrop, `{"model":"m","max_tokens":"ten","messages":[{"role":"user","content":"hi"}]}`, "max_tokens: expected int")),
		// The field the endpoint cannot do without.
		class("missing-field", 400, 400,
			rtProbe("POST", biChat, `{"conversationId":"c1"}`, `missing "input"`),
			rtProbe("POST", biAgent, `{"threadId":"t1"}`, `missing "message"`),
			rtProbe("POST", "/agent/openai-none/runs/"+l.FinishedRun+"/approval", `{"version":1,"decision":"approved"}`, `missing "proposalId"`),
			mockProbe("POST", biOpenAI, `{"messages":[{"role":"user","content":"hi"}]}`, "model: required"),
			mockProbe("POST", biAnthrop, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens: required")),
		// No body at all.
		class("empty-body", 400, 400,
			rtProbe("POST", biCanvas, "", "request body: empty"),
			mockProbe("POST", biAnthrop, "  \n", "request body: empty")),
		// One byte over the server's cap.
		class("body-too-large", 413, 413,
			rtProbe("POST", biChat, `{"input":"`+strings.Repeat("x", int(l.RuntimeMaxBody))+`"}`, fmt.Sprintf("over %d bytes", l.RuntimeMaxBody)),
			mockProbe("POST", biOpenAI, openaiMsg(strings.Repeat("x", int(l.MockMaxBody))), fmt.Sprintf("limit of %d bytes", l.MockMaxBody))),
		// Requests wrong in method, target or the bytes of a value. A method the endpoint does not serve.
		class("wrong-method", 405, 405,
			rtProbe("GET", biChat, "", "method GET not allowed"),
			rtProbe("PUT", "/agent/openai-none/runs/"+l.FinishedRun+"/stop", "", "use POST"),
			mockProbe("GET", biAnthrop, "", "use POST"),
			mockProbe("POST", mockprovider.PathSessions, "{}", "use GET")),
		// A deployment, workflow or agent that does not exist, or no endpoint at all.
		class("unknown-target", 404, 404,
			rtProbe("POST", "/api/chat/no-such-slug", `{"input":"hi"}`, `chat slug "no-such-slug"`),
			rtProbe("POST", "/api/workflows/no-such-flow/execute", `{"input":"hi","stream":true}`, `workflow "no-such-flow"`),
			rtProbe("POST", "/v2/chat", `{"input":"hi"}`, "no route for POST /v2/chat"),
			mockProbe("POST", "/v1/completions", openaiMsg(badInputDirective), "no route for POST /v1/completions")),
		// Bytes that are not UTF-8 inside a string.
		class("bad-utf8", 400, 400,
			rtProbe("POST", biChat, "{\"input\":\"caf\xe9\"}", "not valid UTF-8 at byte 13"),
			mockProbe("POST", biOpenAI, strings.Replace(openaiMsg(badInputDirective), " hi", " h\xffi", 1), "not valid UTF-8")),
		// A raw NUL byte: a control character JSON strings may not hold unescaped.
		class("nul-byte", 400, 400,
			rtProbe("POST", biAgent, "{\"message\":\"a\x00b\"}", "not valid JSON"),
			mockProbe("POST", biAnthrop, strings.Replace(anthropicMsg(badInputDirective), " hi", " h\x00i", 1), "invalid JSON")),
		// Nesting deeper than encoding/json's limit of 10,000.
		class("deep-nesting", 400, 400,
			rtProbe("POST", biChat, `{"input":"hi","x":`+deep+`}`, "exceeded max depth"),
			mockProbe("POST", biOpenAI, `{"model":"m","messages":[{"role":"user","content":"hi"}],"x":`+deep+`}`, "exceeded max depth")),
		// Well-formed, well-typed, but a value the endpoint refuses.
		class("invalid-value", 400, 400,
			rtProbe("POST", biCanvas, `{"input":"hi","stream":false}`, `send "stream": true`),
			rtProbe("POST", biAgent, `{"message":""}`, `missing "message"`),
			rtProbe("POST", "/agent/openai-none/runs/"+l.FinishedRun+"/approval", `{"proposalId":"p","version":1,"decision":"maybe"}`, `"decision" "maybe"`),
			mockProbe("POST", biAnthrop, strings.Replace(anthropicMsg(badInputDirective), `"max_tokens":64`, `"max_tokens":0`, 1), "max_tokens: must be at least 1"),
			mockProbe("POST", biOpenAI, strings.Replace(openaiMsg(badInputDirective), `"role":"user"`, `"role":"robot"`, 1), `unknown role "robot"`)),
		// The mock's scenario selection, which the runtime forwards unread. A directive that is there but malformed.
		class("bad-directive", 0, 400,
			mockProbe("POST", biOpenAI, openaiMsg("[[streambench scenario=plain-answer]] hi"), "missing seed=N"),
			mockProbe("POST", biAnthrop, anthropicMsg("[[streambench scenario=plain-answer seed=1 hi"), "missing closing"),
			mockProbe("POST", biOpenAI, openaiMsg("[[streambench scenario=plain-answer seed=1 colour=red]]"), `unknown key "colour"`)),
		// A scenario the library does not have, in the directive or the header.
		class("unknown-scenario", 0, 400,
			mockProbe("POST", biAnthrop, anthropicMsg("[[streambench scenario=no-such-scenario seed=1]]"), `unknown scenario "no-such-scenario"`),
			withHeader(mockProbe("POST", biOpenAI, openaiMsg(badInputDirective), `unknown scenario "nope"`), mockprovider.HeaderScenario, "nope")),
		// A seed that is not an unsigned 64-bit integer: negative, or too big.
		class("bad-seed", 0, 400,
			withHeader(mockProbe("POST", biOpenAI, openaiMsg(badInputDirective), "X-Streambench-Seed \"-1\""), mockprovider.HeaderSeed, "-1"),
			withHeader(mockProbe("POST", biAnthrop, anthropicMsg(badInputDirective), "unsigned 64-bit"), mockprovider.HeaderSeed, "18446744073709551616"),
			mockProbe("POST", biOpenAI, openaiMsg("[[streambench scenario=plain-answer seed=-5]]"), `seed "-5"`)),
		// A session id longer than the mock's log keeps.
		class("oversized-session", 0, 400,
			withHeader(mockProbe("POST", biAnthrop, anthropicMsg(badInputDirective), "session id is 8192 bytes"), mockprovider.HeaderSession, strings.Repeat("s", 8192)),
			mockProbe("POST", biOpenAI, openaiMsg("[[streambench scenario=plain-answer seed=1 session="+strings.Repeat("s", 1000)+"]]"), "session id is 1000 bytes")),
		// Stops and approvals of runs that cannot be stopped. A stop (or an approval) for something that cannot be a run id of this runtime.
		class("bad-stop-run-id", 400, 0,
			rtProbe("POST", "/agent/openai-none/runs/run_short/stop", "", `run id "run_short" is not a run id`),
			rtProbe("POST", "/agent/openai-none/runs/"+strings.ToLower(l.FinishedRun)+"/stop", "", "is not a run id"),
			rtProbe("POST", "/agent/openai-none/runs/run_short/approval", `{"proposalId":"p","version":1,"decision":"approved"}`, `run id "run_short" is not a run id`)),
		// A stop (or an approval) for a run that has ended (or that another agent owns).
		class("stop-finished-run", 404, 0,
			rtProbe("POST", "/agent/openai-none/runs/"+l.FinishedRun+"/stop", "", "no open run"),
			rtProbe("POST", "/agent/anthropic-none/runs/"+l.FinishedRun+"/stop", "", "no open run"),
			rtProbe("POST", "/agent/openai-none/runs/"+l.FinishedRun+"/approval", `{"proposalId":"p","version":1,"decision":"approved"}`, "no open run")),
		// A body that stops coming: headers promise 100 bytes, 4 arrive.
		class("stalled-body", 408, 408,
			rawProbe(BadInputRuntime, biAgent, stallHead, "request body not received within"),
			rawProbe(BadInputMock, biAnthrop, stallHead, "request body not received within")),
		// A chunked body whose chunk size is not hex.
		class("broken-chunked", 400, 400,
			rawProbe(BadInputRuntime, biChat, brokenChunk, "reading request body"),
			rawProbe(BadInputMock, biOpenAI, brokenChunk, "reading request body")),
	}
}

// BadInputOptions configure BadInput; zero values are the defaults.
type BadInputOptions struct {
	Rate     float64       // requests per second (0: 500)
	Duration time.Duration // how long requests are started (0: 30 s)
	// MaxBody is both servers' body cap (0: 64 KiB, so body-too-large is no bandwidth test).
	MaxBody         int64
	BodyReadTimeout time.Duration // both servers', which the stalled-body class waits out (0: 1 s)
	RequestTimeout  time.Duration // bounds each request (0: 10 s)
	MaxInFlight     int           // a start beyond it is dropped and counted, never queued (0: 4096)
	Settle          time.Duration // how long goroutines and fds get to return to their level (0: 5 s)
}

func (o *BadInputOptions) defaults() {
	positiveOr(&o.Rate, 500)
	positiveOr(&o.Duration, 30*time.Second)
	positiveOr(&o.MaxBody, 64<<10)
	positiveOr(&o.BodyReadTimeout, time.Second)
	positiveOr(&o.RequestTimeout, 10*time.Second)
	positiveOr(&o.MaxInFlight, 4096)
	positiveOr(&o.Settle, 5*time.Second)
}

func positiveOr[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// BadInputClassFigures is what one class got.
type BadInputClassFigures struct {
	BadInputClass
	Sent                  int
	Statuses              map[BadInputServer]map[int]int // per server; 0: no answer (transport error, timeout)
	WrongStatus, BadError int                            // wrong status; right status, no JSON error naming the problem
	Example               string                         // one wrong answer ("" when none)
}

// BadInputFigures is the result of BadInput.
type BadInputFigures struct {
	Rate                        float64
	Duration                    time.Duration
	Classes                     []BadInputClassFigures
	Sent, WrongStatus, BadError int // the classes summed
	Dropped, Late               int // starts skipped at MaxInFlight; starts over 10 ms late
	Elapsed                     time.Duration
	Panics                      int // handler panics the servers recovered
	// This process's counts before the load and after it settled; FDs are -1 without /proc/self/fd.
	GoroutinesBefore, GoroutinesAfter int
	FDsBefore, FDsAfter               int
}

// Leaked reports whether goroutines or file descriptors stayed above their level before the load.
func (f *BadInputFigures) Leaked() bool {
	return f.GoroutinesAfter > f.GoroutinesBefore || f.FDsAfter > f.FDsBefore
}

// BadInput serves the runtime and the mock in this process and sends them BadInputClasses
// round-robin, open loop at opts.Rate for opts.Duration.
func BadInput(ctx context.Context, opts BadInputOptions) (BadInputFigures, error) {
	opts.defaults()
	panics := &badInputPanicCounter{}
	logger := slog.New(panics)
	st, err := stack.StartInProcess(stack.Options{
		MockOptions: func(o *mockprovider.Options) {
			o.Logger, o.MaxBody, o.BodyReadTimeout, o.SessionHistory = logger, opts.MaxBody, opts.BodyReadTimeout, 10_000
		},
		RuntimeOptions: func(o *agentruntime.Options) {
			o.Logger, o.MaxBody, o.BodyReadTimeout, o.Heartbeat = logger, opts.MaxBody, opts.BodyReadTimeout, -1
		},
	})
	if err != nil {
		return BadInputFigures{}, fmt.Errorf("bad input: %w", err)
	}
	defer st.Stop()
	return badInputRun(ctx, opts, map[BadInputServer]string{BadInputRuntime: st.RuntimeURL, BadInputMock: st.MockURL}, panics)
}

func badInputRun(ctx context.Context, opts BadInputOptions, urls map[BadInputServer]string, panics *badInputPanicCounter) (BadInputFigures, error) {
	opts.defaults()
	transport := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true, Proxy: nil}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	finished, err := badInputFinishedRun(ctx, client, urls[BadInputRuntime])
	if err != nil {
		return BadInputFigures{}, err
	}
	classes := BadInputClasses(BadInputLimits{RuntimeMaxBody: opts.MaxBody, MockMaxBody: opts.MaxBody, FinishedRun: finished})
	figs := BadInputFigures{Rate: opts.Rate, Duration: opts.Duration, Classes: make([]BadInputClassFigures, len(classes))}
	for i, c := range classes {
		figs.Classes[i] = BadInputClassFigures{BadInputClass: c,
			Statuses: map[BadInputServer]map[int]int{BadInputRuntime: {}, BadInputMock: {}}}
	}
	transport.CloseIdleConnections()
	figs.GoroutinesBefore, figs.FDsBefore = badInputQuiet(ctx)
	panicsBefore := panics.count()

	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		inFlight atomic.Int64
		next     = make([]int, len(classes)) // next probe per class
	)
	record := func(ci int, server BadInputServer, status int, problem string) {
		mu.Lock()
		defer mu.Unlock()
		cf := &figs.Classes[ci]
		cf.Statuses[server][status]++
		want := cf.Expected(server)
		switch {
		case status != want:
			cf.WrongStatus++
		case problem != "":
			cf.BadError++
		default:
			return
		}
		if cf.Example == "" {
			cf.Example = fmt.Sprintf("%s: status %d, want %d: %s", server, status, want, problem)
		}
	}
	pacer := loadgen.ConstantRate{PerSecond: opts.Rate}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	start := time.Now()
loop:
	for n := uint64(0); ; n++ {
		wait, stop := pacer.Pace(time.Since(start), n)
		if stop || time.Since(start)+max(wait, 0) >= opts.Duration {
			break
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				break loop
			}
		} else if wait < -10*time.Millisecond {
			figs.Late++
		}
		ci := int(n % uint64(len(classes)))
		probe := classes[ci].Probes[next[ci]%len(classes[ci].Probes)]
		next[ci]++
		if inFlight.Load() >= int64(opts.MaxInFlight) {
			figs.Dropped++
			continue
		}
		figs.Classes[ci].Sent++
		inFlight.Add(1)
		wg.Go(func() {
			defer inFlight.Add(-1)
			rctx, cancel := context.WithTimeout(ctx, opts.RequestTimeout)
			defer cancel()
			status, body, ctype, err := badInputSend(rctx, client, urls[probe.Server], probe)
			if err != nil {
				record(ci, probe.Server, status, err.Error())
				return
			}
			record(ci, probe.Server, status, badInputCheckError(body, ctype, probe.Says))
		})
	}
	wg.Wait()
	figs.Elapsed = time.Since(start)
	transport.CloseIdleConnections()
	figs.GoroutinesAfter, figs.FDsAfter = badInputSettle(ctx, figs.GoroutinesBefore, figs.FDsBefore, opts.Settle)
	figs.Panics = panics.count() - panicsBefore
	for _, c := range figs.Classes {
		figs.Sent += c.Sent
		figs.WrongStatus += c.WrongStatus
		figs.BadError += c.BadError
	}
	return figs, ctx.Err()
}

// badInputFinishedRun plays one compose run to its end and returns its run id.
func badInputFinishedRun(ctx context.Context, client *http.Client, runtimeURL string) (string, error) {
	body := `{"message":"[[streambench scenario=plain-answer seed=1 session=bad-input-finished]] hi"}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, runtimeURL+"/agent/openai-none/stream", strings.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("bad input: finished run: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("bad input: finished run: %w", err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return "", fmt.Errorf("bad input: finished run: reading the stream: %w", err)
	}
	id := resp.Header.Get(compose.RunIDHeader)
	if resp.StatusCode != http.StatusOK || id == "" {
		return "", fmt.Errorf("bad input: finished run: status %d, run id %q", resp.StatusCode, id)
	}
	return id, nil
}

// badInputMaxAnswer bounds the answer read: a server that streams instead of refusing must not hold the client.
const badInputMaxAnswer = 64 << 10

// badInputSend sends probe to baseURL and returns the status, the body's start and its type.
func badInputSend(ctx context.Context, client *http.Client, baseURL string, p BadInputProbe) (status int, body []byte, ctype string, err error) {
	if p.Raw != "" {
		return badInputSendRaw(ctx, baseURL, p.Raw)
	}
	req, err := http.NewRequestWithContext(ctx, p.Method, baseURL+p.Path, strings.NewReader(p.Body))
	if err != nil {
		return 0, nil, "", fmt.Errorf("building the request: %w", err)
	}
	if p.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range p.Header {
		req.Header[k] = v
	}
	return badInputAnswer(client.Do(req))
}

func badInputAnswer(resp *http.Response, err error) (int, []byte, string, error) {
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, badInputMaxAnswer))
	return resp.StatusCode, body, resp.Header.Get("Content-Type"), err
}

func badInputSendRaw(ctx context.Context, baseURL, raw string) (int, []byte, string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(baseURL, "http://"))
	if err != nil {
		return 0, nil, "", err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(conn, raw); err != nil {
		return 0, nil, "", err
	}
	return badInputAnswer(http.ReadResponse(bufio.NewReader(conn), nil))
}

// badInputCheckError says what is wrong with an error answer, or "" when it is a JSON error
// ({"error": "..."} or {"error": {"message": "..."}}) whose message contains says.
func badInputCheckError(body []byte, ctype, says string) string {
	if !strings.HasPrefix(ctype, "application/json") {
		return fmt.Sprintf("content type %q, want application/json: %.200q", ctype, body)
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Error) == 0 {
		return fmt.Sprintf("not a JSON error: %.200q", body)
	}
	var msg string
	if json.Unmarshal(e.Error, &msg) != nil {
		var inner struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(e.Error, &inner)
		msg = inner.Message
	}
	if !strings.Contains(msg, says) {
		return fmt.Sprintf("error %.300q does not say %q", msg, says)
	}
	return ""
}

// badInputQuiet returns the goroutine and fd counts once the set-up's connections stop closing (≤ 1 s).
func badInputQuiet(ctx context.Context) (int, int) {
	g, f := runtime.NumGoroutine(), badInputFDs()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond) // polling a count: nothing signals "all gone"
		g2, f2 := runtime.NumGoroutine(), badInputFDs()
		if g2 >= g && f2 >= f {
			return g2, f2
		}
		g, f = min(g, g2), min(f, f2)
	}
	return g, f
}

// badInputSettle returns the goroutine and fd counts once at the given levels (negative: any), or after settle.
func badInputSettle(ctx context.Context, goroutines, fds int, settle time.Duration) (int, int) {
	deadline := time.Now().Add(settle)
	for {
		g, f := runtime.NumGoroutine(), badInputFDs()
		if (goroutines < 0 || g <= goroutines) && (fds < 0 || f <= fds) || !time.Now().Before(deadline) || ctx.Err() != nil {
			return g, f
		}
		time.Sleep(50 * time.Millisecond) // polling a count: nothing signals "all gone"
	}
}

// badInputFDs is this process's open file descriptors, -1 without /proc/self/fd.
func badInputFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// badInputPanicCounter is a slog.Handler counting the "http: panic serving" lines net/http
// logs when it recovers a handler's panic. Safe for concurrent use.
type badInputPanicCounter struct {
	panics atomic.Int64
}

func (c *badInputPanicCounter) count() int { return int(c.panics.Load()) }

// Enabled is true at every level: the mock logs its server errors at Debug.
func (c *badInputPanicCounter) Enabled(context.Context, slog.Level) bool { return true }

// Handle, WithAttrs and WithGroup implement slog.Handler.
func (c *badInputPanicCounter) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "http: panic serving") {
		c.panics.Add(1)
	}
	return nil
}

func (c *badInputPanicCounter) WithAttrs([]slog.Attr) slog.Handler { return c }

func (c *badInputPanicCounter) WithGroup(string) slog.Handler { return c }

// Table renders the figures as a plain-text table, a row per class, then the totals.
func (f *BadInputFigures) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-20s %8s %8s %6s %7s %7s  %s\n", "class", "runtime", "mock", "sent", "wrong", "bad-err", "statuses seen")
	for _, c := range f.Classes {
		want := func(s int) string {
			if s == 0 {
				return "-"
			}
			return fmt.Sprint(s)
		}
		fmt.Fprintf(&b, "%-20s %8s %8s %6d %7d %7d  %s\n", c.Name, want(c.Runtime), want(c.Mock), c.Sent, c.WrongStatus, c.BadError, badInputStatuses(c.Statuses))
		if c.Example != "" {
			fmt.Fprintf(&b, "%-20s   e.g. %s\n", "", c.Example)
		}
	}
	fmt.Fprintf(&b, "sent %d in %v (%.0f/s target), wrong status %d, bad error %d, dropped %d, late %d, panics %d, goroutines %d→%d, fds %d→%d\n",
		f.Sent, f.Elapsed.Round(time.Millisecond), f.Rate, f.WrongStatus, f.BadError, f.Dropped, f.Late, f.Panics,
		f.GoroutinesBefore, f.GoroutinesAfter, f.FDsBefore, f.FDsAfter)
	return b.String()
}

func badInputStatuses(m map[BadInputServer]map[int]int) string {
	var parts []string
	for _, server := range []BadInputServer{BadInputRuntime, BadInputMock} {
		for _, code := range slices.Sorted(maps.Keys(m[server])) {
			parts = append(parts, fmt.Sprintf("%s %d×%d", server, code, m[server][code]))
		}
	}
	return strings.Join(parts, ", ")
}

// ErrBadInputWrong is what BadInputFigures.Check wraps.
var ErrBadInputWrong = errors.New("bad input not held")

// Check returns an error naming every property the figures break: a wrong answer, a panic, a
// leak, a class never sent, a start dropped.
func (f *BadInputFigures) Check() error {
	var problems []string
	for _, c := range f.Classes {
		switch {
		case c.Sent == 0:
			problems = append(problems, c.Name+": never sent")
		case c.WrongStatus > 0 || c.BadError > 0:
			problems = append(problems, fmt.Sprintf("%s: %d wrong status, %d bad error (%s)", c.Name, c.WrongStatus, c.BadError, c.Example))
		}
	}
	if f.Panics > 0 {
		problems = append(problems, fmt.Sprintf("%d panics", f.Panics))
	}
	if f.Dropped > 0 {
		problems = append(problems, fmt.Sprintf("%d starts dropped", f.Dropped))
	}
	if f.Leaked() {
		problems = append(problems, fmt.Sprintf("leak: goroutines %d→%d, fds %d→%d", f.GoroutinesBefore, f.GoroutinesAfter, f.FDsBefore, f.FDsAfter))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrBadInputWrong, strings.Join(problems, "; "))
	}
	return nil
}
