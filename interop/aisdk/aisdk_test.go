// Package aisdkinterop drives a real Vercel AI SDK chat route (route.mjs: ai 7, @ai-sdk/openai
// 4, streamText → UI message stream) whose model is the streambench mock, with the ai-sdk
// dialect's request and checker: every embedded scenario must pass every content rule, and the
// scripted aborts measure how long the route takes to cancel its provider stream. run.sh
// installs the packages and runs it; without node or the packages the test skips.
package aisdkinterop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/streambench/streambench/mockprovider"
	"github.com/streambench/streambench/mockprovider/mocktest"
	"github.com/streambench/streambench/protocol"
	"github.com/streambench/streambench/protocol/aisdk"
	"github.com/streambench/streambench/scenarios"
	"github.com/streambench/streambench/sse"
)

// timeScale plays the scripts four times faster than scripted (tool durations, run by the
// route from _sim, are not scaled).
const timeScale = 0.25

// cancelTolerance is how long after the client left the provider stream may still be open
// (loadgen.Config.AbortTolerance's default).
const cancelTolerance = 5 * time.Second

// startRoute runs route.mjs with node against mockURL and returns its base URL. It skips the
// test when node or the route's packages are missing.
func startRoute(t *testing.T, mockURL string, tools []string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the AI SDK interop plays real-time streams through node: not in -short mode")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the AI SDK interop needs node and npm (run interop/aisdk/run.sh)")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "ai", "package.json")); err != nil {
		t.Skip("interop/aisdk/node_modules has no ai package: run interop/aisdk/run.sh, which installs ai@7 and @ai-sdk/openai@4 with npm")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, "route.mjs")
	cmd.Env = append(os.Environ(), "MOCK_URL="+mockURL, "PORT=0", "TOOLS="+strings.Join(tools, ","))
	stderr := &logWriter{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start node route.mjs: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("route.mjs stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("route.mjs did not say where it listens: %v", err)
	}
	go io.Copy(io.Discard, out)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("route.mjs: expected %q, got %q", "listening URL", line)
	}
	return url
}

// logWriter keeps the route's stderr (the SDK logs every provider error there, the scripted
// ones included) for the log of a failed test.
type logWriter struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *logWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// toolNames lists every tool name the library's scenarios call: the tools the route defines.
func toolNames(lib *scenarios.Library) []string {
	var names []string
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		for _, turn := range sc.Turns {
			for _, tc := range turn.ToolCalls {
				if !slices.Contains(names, tc.Name) {
					names = append(names, tc.Name)
				}
			}
		}
	}
	return names
}

// result is one scenario's stream through the route.
type result struct {
	violations []protocol.Violation
	parts      int
	aborted    bool
	cancel     time.Duration // abort → the mock saw the provider stream's client go
	cancelNote string        // why no cancel latency, or an R-abort finding
	took       time.Duration
	frames     []string // as recordFrame writes them
}

// recordFrame writes an event as one recording line (protocol/aisdk/testdata/interop/README.md).
func recordFrame(ev *sse.Event) string {
	line := "data: " + strings.ReplaceAll(string(ev.Data), "\n", `\n`)
	if ev.Type != "" {
		line = "event: " + ev.Type + `\n` + line
	}
	return line
}

// record writes r's frames to dir/NAME.frames when AISDK_RECORD_DIR names a directory: how the
// recordings protocol/aisdk replays were made.
func record(t *testing.T, name string, seed uint64, r result) {
	dir := os.Getenv("AISDK_RECORD_DIR")
	if dir == "" || len(r.frames) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# interop/aisdk/route.mjs (ai 7.0.173, @ai-sdk/openai 4.0.118) in front of the streambench mock;\n")
	fmt.Fprintf(&b, "# scenario %s seed %d; each line is one SSE frame as the client received it\n", name, seed)
	for _, f := range r.frames {
		b.WriteString(f)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, name+".frames"), []byte(b.String()), 0o644); err != nil {
		t.Errorf("record %s: %v", name, err)
	}
}

// startMockAndRoute serves a mock of lib and the route in front of it.
func startMockAndRoute(t *testing.T, lib *scenarios.Library) (*mockprovider.Server, string) {
	mock, mockSrv := mocktest.Serve(t, mockprovider.Options{Library: lib, TimeScale: timeScale})
	return mock, startRoute(t, mockSrv.URL, toolNames(lib))
}

// TestAISDKRoute plays every embedded scenario once through the route and judges it with the
// ai-sdk dialect against the script; scripted aborts and stops close the connection and their
// cancel latency is read from the mock's session records.
func TestAISDKRoute(t *testing.T) {
	lib := scenarios.Embedded()
	mock, routeURL := startMockAndRoute(t, lib)
	// The route's OpenAI chat model drops the mock's reasoning_content: no reasoning expected.
	d := aisdk.New(aisdk.Options{NoReasoning: true})

	var names []string
	for _, name := range lib.Names() {
		if sc, _ := lib.Get(name); routePlays(sc) {
			names = append(names, name)
		}
	}
	results := make([]result, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		sc, _ := lib.Get(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = playOne(t, d, routeURL, mock, sc, 1)
		}()
	}
	wg.Wait()

	cancels := hdrhistogram.New(1, 60_000_000, 3)
	t.Logf("%-26s %6s %8s %10s  %s", "scenario", "parts", "took", "cancel", "violations")
	for i, name := range names {
		r := results[i]
		record(t, name, 1, r)
		cancel := "-"
		if r.aborted {
			cancel = r.cancelNote
			if r.cancelNote == "" {
				cancel = r.cancel.Round(10 * time.Microsecond).String()
				if err := cancels.RecordValue(max(r.cancel.Microseconds(), 1)); err != nil {
					t.Errorf("record cancel latency: %v", err)
				}
			}
		}
		t.Logf("%-26s %6d %8s %10s  %v", name, r.parts, r.took.Round(time.Millisecond), cancel, r.violations)
		if len(r.violations) > 0 {
			t.Errorf("%s: %v", name, r.violations)
		}
		if strings.HasPrefix(r.cancelNote, "R-abort") {
			t.Errorf("%s: %s", name, r.cancelNote)
		}
	}
	if cancels.TotalCount() > 0 {
		fmt.Printf("ai-sdk route cancel latency (client abort → mock saw the provider stream's client go), %d aborts: p50 %v, max %v\n",
			cancels.TotalCount(), time.Duration(cancels.ValueAtQuantile(50))*time.Microsecond, time.Duration(cancels.Max())*time.Microsecond)
	}
}

// TestAISDKRouteCancel plays the scenarios with a scripted abort or stop, one at a time for
// several seeds so they do not compete for the CPU, and prints the route's cancel latency.
func TestAISDKRouteCancel(t *testing.T) {
	lib := scenarios.Embedded()
	mock, routeURL := startMockAndRoute(t, lib)
	d := aisdk.New(aisdk.Options{NoReasoning: true})
	cancels := hdrhistogram.New(1, 60_000_000, 3)
	for _, name := range lib.Names() {
		sc, _ := lib.Get(name)
		if (sc.Client.Abort == nil && sc.Client.Stop == nil) || !routePlays(sc) {
			continue
		}
		for seed := uint64(1); seed <= 6; seed++ {
			r := playOne(t, d, routeURL, mock, sc, seed)
			if len(r.violations) > 0 || strings.HasPrefix(r.cancelNote, "R-abort") {
				t.Errorf("%s seed %d: %v %s", name, seed, r.violations, r.cancelNote)
			}
			if r.aborted && r.cancelNote == "" {
				if err := cancels.RecordValue(max(r.cancel.Microseconds(), 1)); err != nil {
					t.Errorf("record cancel latency: %v", err)
				}
			}
			t.Logf("%-22s seed %d: cancel %v %s", name, seed, r.cancel.Round(10*time.Microsecond), r.cancelNote)
		}
	}
	q := func(p float64) time.Duration { return time.Duration(cancels.ValueAtQuantile(p)) * time.Microsecond }
	fmt.Printf("ai-sdk route cancel latency, one stream at a time, %d aborts: p50 %v, p90 %v, max %v\n",
		cancels.TotalCount(), q(50), q(90), time.Duration(cancels.Max())*time.Microsecond)
}

// playOne opens sc's stream on the route as the load generator would, acts on the scripted
// client trigger, and judges the stream and (for an abort) the provider's cancellation.
func playOne(t *testing.T, d *aisdk.Dialect, routeURL string, mock *mockprovider.Server, sc *scenarios.Scenario, seed uint64) result {
	script := sc.Render(seed)
	id := "aisdk-" + sc.Name
	s := &protocol.Session{
		ID: id, Input: scenarios.Directive{Scenario: sc.Name, Seed: seed, Session: id}.String() + " " + sc.Prompt,
		Expected: script.Expected(),
	}
	trig := script.Client.Abort
	if trig == nil {
		trig = script.Client.Stop // the AI SDK has no stop request: useChat's stop() aborts the fetch
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The trigger may fire on a timer's goroutine while this one reads the stream.
	var (
		abortMu sync.Mutex
		abortAt time.Time
	)
	abort := func() {
		abortMu.Lock()
		defer abortMu.Unlock()
		if abortAt.IsZero() {
			abortAt = time.Now()
			cancel()
		}
	}
	abortedAt := func() time.Time {
		abortMu.Lock()
		defer abortMu.Unlock()
		return abortAt
	}
	began := time.Now()
	req, err := d.NewRequest(ctx, routeURL, s)
	if err != nil {
		return result{violations: []protocol.Violation{{Rule: "setup", Detail: err.Error()}}}
	}
	if trig != nil {
		if at, ok := timedTrigger(script, trig); ok {
			timer := time.AfterFunc(at, abort)
			defer timer.Stop()
		}
	}
	resp, err := http.DefaultClient.Do(req)
	switch {
	case err != nil && !abortedAt().IsZero():
		// The trigger fired before the route answered (it sends its head with the first part).
		res := result{aborted: true, took: time.Since(began)}
		res.cancel, res.cancelNote = cancelLatency(mock, id, abortedAt())
		return res
	case err != nil:
		return result{violations: []protocol.Violation{{Rule: "transport", Detail: err.Error()}}}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return result{violations: []protocol.Violation{{Rule: "http", Detail: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body)}}}
	}
	v := d.CheckHeaders(resp.Header, s)
	c := d.NewChecker(s)
	dec := sse.NewDecoder(resp.Body)
	var ev sse.Event
	var streamErr error
	res := result{}
	chunks := 0
	for {
		if err := dec.Next(&ev); err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				streamErr = err
			}
			break
		}
		res.parts++
		res.frames = append(res.frames, recordFrame(&ev))
		obs := c.Observe(&ev)
		if trig != nil {
			switch {
			case obs.Kind == protocol.FrameAnswer && trig.AfterChunks > 0:
				if chunks++; chunks >= trig.AfterChunks {
					abort()
				}
			case obs.Kind == protocol.FrameToolStart && trig.DuringTool:
				abort()
			}
		}
		if !abortedAt().IsZero() {
			break // the client left: whatever is still buffered was never seen
		}
	}
	resp.Body.Close()
	res.took = time.Since(began)
	res.aborted = !abortedAt().IsZero()
	s.Aborted = res.aborted
	res.violations = append(v, c.Finish(streamErr)...)
	if res.aborted {
		res.cancel, res.cancelNote = cancelLatency(mock, id, abortedAt())
	}
	return res
}

// timedTrigger is when a trigger the stream cannot show fires, from the request: an After, or
// the middle of the first turn's thinking (the route forwards no reasoning), as the load
// generator times it.
func timedTrigger(script *scenarios.Script, trig *scenarios.Trigger) (time.Duration, bool) {
	switch {
	case trig.After > 0:
		return trig.After, true
	case trig.DuringThinking:
		first, last := time.Duration(-1), time.Duration(0)
		for _, st := range script.Turns[0].Steps {
			if st.Kind == scenarios.StepThinking {
				if first < 0 {
					first = st.At
				}
				last = st.At
			}
		}
		if first >= 0 {
			return time.Duration(float64(first+last) / 2 * timeScale), true
		}
	}
	return 0, false
}

// cancelLatency waits (up to cancelTolerance) until every provider request of the session
// open at the abort has ended, and returns how long after the abort the mock saw the last of
// them lose its client. A note says why there is no latency: nothing was open (the abort came
// between provider calls), or the provider stream was not cancelled (R-abort).
func cancelLatency(mock *mockprovider.Server, session string, abortAt time.Time) (time.Duration, string) {
	deadline := abortAt.Add(cancelTolerance)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		recs := mock.Sessions(session)
		open, latency, note := false, time.Duration(0), "no provider stream was open at the abort"
		for _, r := range recs {
			switch {
			case r.Start.After(deadline):
				return 0, fmt.Sprintf("R-abort: provider request for turn %d started %v after the client left", r.Turn, r.Start.Sub(abortAt).Round(time.Millisecond))
			case !r.End.IsZero() && !r.End.After(abortAt):
				continue // ended before the abort
			case r.End.IsZero():
				open = true
			case !r.ClientGone.IsZero():
				latency, note = max(latency, r.ClientGone.Sub(abortAt)), ""
			case r.End.Sub(abortAt) > cancelTolerance:
				return 0, fmt.Sprintf("R-abort: provider stream for turn %d ran on %v after the client left (%s)", r.Turn, r.End.Sub(abortAt).Round(time.Millisecond), r.Outcome)
			default:
				note = "the provider stream finished on its own as the client left" // raced the abort
			}
		}
		if !open {
			return latency, note
		}
		if time.Now().After(deadline) {
			return 0, fmt.Sprintf("R-abort: provider stream still open %v after the client left", cancelTolerance)
		}
		<-tick.C
	}
}

// routePlays tells whether an AI SDK route can play sc: a Sim pause or execution timeout is a
// Sim runtime's ending, swarms and plan approvals are compose's (the mix plays them on compose
// alone), and the route has none of them.
func routePlays(sc *scenarios.Scenario) bool {
	exp := sc.Render(1).Expected()
	return !exp.EndsByTool() && !sc.HasSwarm() && exp.Plan == nil
}
