package mockprovider

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/streambench/streambench/hrtimer"
	"github.com/streambench/streambench/mockrecords"
	"github.com/streambench/streambench/scenarios"
)

// flushRecorder is an http.ResponseWriter that timestamps every Flush with the (bubble's)
// clock, so a synctest test sees exactly when each frame left the mock.
type flushRecorder struct {
	mu      sync.Mutex
	header  http.Header
	status  int
	pending bytes.Buffer
	frames  []flushedFrame
}

// flushedFrame is what was written between two flushes, and when it was flushed.
type flushedFrame struct {
	at   time.Time
	data string
}

func newFlushRecorder() *flushRecorder { return &flushRecorder{header: http.Header{}} }

func (f *flushRecorder) Header() http.Header { return f.header }
func (f *flushRecorder) WriteHeader(status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == 0 {
		f.status = status
	}
}
func (f *flushRecorder) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == 0 {
		f.status = http.StatusOK
	}
	return f.pending.Write(p)
}
func (f *flushRecorder) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending.Len() > 0 {
		f.frames = append(f.frames, flushedFrame{at: time.Now(), data: f.pending.String()})
		f.pending.Reset()
	}
}

// testLibrary writes YAML scenarios to a temporary directory and loads them.
func testLibrary(t *testing.T, yamls ...string) *scenarios.Library {
	t.Helper()
	dir := t.TempDir()
	for i, y := range yamls {
		if err := os.WriteFile(filepath.Join(dir, "s"+string(rune('a'+i))+".yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := scenarios.LoadDir(dir)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	return lib
}

// serveInBubble plays one request through srv.ServeHTTP and returns what was flushed.
func serveInBubble(srv *Server, ctx context.Context, path, body string) *flushRecorder {
	rec := newFlushRecorder()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
	srv.ServeHTTP(rec, req)
	return rec
}

func TestPacingFollowsTheScheduleExactly(t *testing.T) {
	t.Parallel()
	lib := scenarios.Embedded()
	tests := []struct {
		name      string
		scenario  string
		timeScale float64
		slowdown  float64
		// stretch is how much longer than scripted the schedule must be.
		stretch float64
	}{
		// as scripted: every step at arrival + Step.At
		{"as scripted", "plain-answer", 1, 0, 1},
		// the stall is already in Step.At, so it shows as one long gap
		{"stall", "stall-mid-answer", 1, 0, 1},
		// time scale halves every delay
		{"half time", "thinking-answer", 0.5, 0, 0.5},
		// slowdown 0.5 with one active stream (this one) stretches delays by 1.5
		{"slowdown", "preamble-tool", 1, 0.5, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv, err := New(Options{Library: lib, TimeScale: tt.timeScale, Capacity: Capacity{SlowdownPerStream: tt.slowdown}, Clock: hrtimer.NewPortable()})
				if err != nil {
					t.Fatal(err)
				}
				sc, _ := lib.Get(tt.scenario)
				turn := sc.Render(5).Turns[0]
				start := time.Now()
				rec := serveInBubble(srv, context.Background(), PathOpenAI, openaiBody(directive(tt.scenario, 5, "p"), true))
				// frames: Start, one per step, Finish
				if got, want := len(rec.frames), len(turn.Steps)+2; got != want {
					t.Fatalf("got %d flushed frames, want %d", got, want)
				}
				if !rec.frames[0].at.Equal(start) {
					t.Errorf("opening frame flushed at +%s, want at once", rec.frames[0].at.Sub(start))
				}
				for i, step := range turn.Steps {
					want := time.Duration(float64(step.At) * tt.stretch)
					if got := rec.frames[i+1].at.Sub(start); got != want {
						t.Fatalf("step %d (%s %q) flushed at +%s, want +%s", i, step.Kind, step.Text, got, want)
					}
				}
				if h := srv.PacingError(); h.TotalCount() != int64(len(turn.Steps)) || h.Max() != 0 {
					t.Errorf("pacing error histogram: %d values, max %d µs; want %d values, all 0", h.TotalCount(), h.Max(), len(turn.Steps))
				}
				rec2 := onlySession(t, srv, "p")
				if rec2.Outcome != mockrecords.OutcomeCompleted || rec2.Frames != len(turn.Steps) || rec2.Tokens != turn.OutputTokens {
					t.Errorf("record %+v: want completed, %d frames, %d tokens", rec2, len(turn.Steps), turn.OutputTokens)
				}
			})
		})
	}
}

func TestPacingPingsOnlyAnthropicDuringLongSilence(t *testing.T) {
	t.Parallel()
	lib := testLibrary(t, `name: very-slow
timing: {ttft: 12s, itl: 10ms}
turns:
  - text: "Hello there."
`)
	tests := []struct {
		path, body, ping, last string
		want                   []time.Duration
	}{
		// Anthropic sends a ping event every 5 s of silence, as the API does
		{PathAnthropic, anthropicBody(directive("very-slow", 1, "a"), true), "event: ping", "message_stop", []time.Duration{5 * time.Second, 10 * time.Second}},
		// the chat completions wire has no keep-alive: nothing until the first token
		{PathOpenAI, openaiBody(directive("very-slow", 1, "a"), true), "ping", "[DONE]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv, err := New(Options{Library: lib, TimeScale: 1, Clock: hrtimer.NewPortable()})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				rec := serveInBubble(srv, context.Background(), tt.path, tt.body)
				var pings []time.Duration
				for _, f := range rec.frames[1:] { // Anthropic's opening frame carries its own ping
					if strings.Contains(f.data, tt.ping) {
						pings = append(pings, f.at.Sub(start))
					}
				}
				if !slices.Equal(pings, tt.want) {
					t.Fatalf("pings at %v, want %v", pings, tt.want)
				}
				if last := rec.frames[len(rec.frames)-1]; !strings.Contains(last.data, tt.last) {
					t.Fatalf("stream did not finish: last frame %q", last.data)
				}
				// "Hello there." is two tokens: two step frames, then the finish.
				if first := rec.frames[len(rec.frames)-3]; first.at.Sub(start) != 12*time.Second {
					t.Fatalf("first text %q at +%s, want at the 12 s TTFT", first.data, first.at.Sub(start))
				}
			})
		})
	}
}

func TestCancelIsNoticedAtOnceWhileWaiting(t *testing.T) {
	t.Parallel()
	lib := scenarios.Embedded()
	for _, path := range []string{PathOpenAI, PathAnthropic} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv, err := New(Options{Library: lib, TimeScale: 1, Clock: hrtimer.NewPortable()})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				start := time.Now()
				cancelAfter := 1234 * time.Millisecond // mid-answer: long-answer takes >16 s
				time.AfterFunc(cancelAfter, cancel)
				body := openaiBody(directive("long-answer", 3, "c"), true)
				if path == PathAnthropic {
					body = anthropicBody(directive("long-answer", 3, "c"), true)
				}
				serveInBubble(srv, ctx, path, body)
				rec := onlySession(t, srv, "c")
				if rec.Outcome != mockrecords.OutcomeClientCancelled {
					t.Fatalf("outcome %q, want client-cancelled", rec.Outcome)
				}
				if got := rec.ClientGone.Sub(start); got != cancelAfter {
					t.Errorf("ClientGone at +%s, want exactly the cancel time +%s", got, cancelAfter)
				}
				if rec.Tokens == 0 || rec.Tokens >= 2000 {
					t.Errorf("tokens sent before the cancel: %d, want some but not all", rec.Tokens)
				}
				if n := srv.ActiveStreams(); n != 0 {
					t.Errorf("active streams after the cancel: %d", n)
				}
			})
		})
	}
}

func TestScheduleScalesGapsNotAbsoluteTimes(t *testing.T) {
	t.Parallel()
	m := newMetrics()
	adm := newAdmission(Capacity{SlowdownPerStream: 1}, m)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sched := newSchedule(base, 1, adm)
	ms := time.Millisecond
	// Slowdown 1 with no active stream is ×1; with one active ×2; back to none ×1. Each
	// gap is stretched by the factor at the moment it is scheduled, never retroactively.
	steps := []struct {
		at     time.Duration
		active int64
		want   time.Duration
	}{
		{100 * ms, 0, 100 * ms}, // first gap ×1
		{150 * ms, 1, 200 * ms}, // 50 ms gap ×2
		{150 * ms, 1, 200 * ms}, // a zero gap stays zero
		{200 * ms, 0, 250 * ms}, // 50 ms gap ×1
	}
	for i, s := range steps {
		adm.active.Store(s.active)
		if got := sched.due(s.at).Sub(base); got != s.want {
			t.Errorf("step %d: due at +%s, want +%s", i, got, s.want)
		}
	}
	if got := newSchedule(base, 0, adm).due(time.Hour); !got.Equal(base) {
		t.Errorf("time scale 0: due %s, want base", got)
	}
}

// constantLibrary is one scenario of 10 tokens, 100 ms apart from a 100 ms TTFT: exactly
// 1 s per request at TimeScale 1.
func constantLibrary(t *testing.T) *scenarios.Library {
	return testLibrary(t, `name: one-second
timing: {ttft: 100ms, itl: 100ms}
turns:
  - text: {tokens: 10}
`)
}

// playConcurrently serves n requests at once in the bubble and returns each one's record.
func playConcurrently(t *testing.T, srv *Server, n int) []mockrecords.Record {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			serveInBubble(srv, context.Background(), PathOpenAI, openaiBody(directive("one-second", 1, "k"+string(rune('a'+i))), true))
		})
	}
	wg.Wait()
	return srv.Sessions("")
}

func TestCapacityModelPutsTheKneeAtMaxConcurrent(t *testing.T) {
	t.Parallel()
	lib := constantLibrary(t)
	synctest.Test(t, func(t *testing.T) {
		// 4 slots, each request holds one for 1 s: 8 requests at once finish in two waves,
		// the second wave queued for exactly the first wave's second.
		srv, err := New(Options{Library: lib, TimeScale: 1, Capacity: Capacity{MaxConcurrent: 4, QueueSize: 4}, Clock: hrtimer.NewPortable()})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var waves [3]int
		for _, rec := range playConcurrently(t, srv, 8) {
			took := rec.End.Sub(start)
			switch {
			case rec.Outcome == mockrecords.OutcomeCompleted && rec.Queued == 0 && took == time.Second:
				waves[0]++
			case rec.Outcome == mockrecords.OutcomeCompleted && rec.Queued == time.Second && took == 2*time.Second:
				waves[1]++
			default:
				waves[2]++
				t.Errorf("record %+v: took %s, want 1 s unqueued or 2 s after 1 s queued", rec, took)
			}
		}
		if waves[0] != 4 || waves[1] != 4 {
			t.Errorf("waves %v, want 4 requests in 1 s and 4 in 2 s", waves)
		}
		// A ninth and tenth beyond slots + queue are refused at once.
		recs := playConcurrently(t, srv, 10)
		var refused int
		for _, rec := range recs[8:] {
			if rec.Status == http.StatusTooManyRequests {
				refused++
			}
		}
		if refused != 2 {
			t.Errorf("10 requests on 4 slots + 4 queue places: %d refused with 429, want 2", refused)
		}
	})
}

func TestCapacitySlowdownStretchesUnderLoad(t *testing.T) {
	t.Parallel()
	lib := constantLibrary(t)
	synctest.Test(t, func(t *testing.T) {
		// 5 streams at once with 0.1 per stream: once all five play, every gap is ×1.5. The
		// first gap (TTFT) is scheduled as the streams are admitted one by one, so it is
		// stretched by between ×1.1 and ×1.5.
		srv, err := New(Options{Library: lib, TimeScale: 1, Capacity: Capacity{SlowdownPerStream: 0.1}, Clock: hrtimer.NewPortable()})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for _, rec := range playConcurrently(t, srv, 5) {
			took := rec.End.Sub(start)
			if took < 1460*time.Millisecond || took > 1500*time.Millisecond {
				t.Errorf("stream %s took %s, want 0.1 s × (1.1…1.5) + 0.9 s × 1.5", rec.Session, took)
			}
		}
		// Alone, a stream plays ×1.1.
		start = time.Now()
		serveInBubble(srv, context.Background(), PathOpenAI, openaiBody(directive("one-second", 1, "alone"), true))
		if took := time.Since(start); took != 1100*time.Millisecond {
			t.Errorf("a lone stream took %s, want 1.1 s", took)
		}
	})
}

// A request's schedule starts when its bytes reached the host, not when its handler ran: the
// second of two pipelined requests (one write) waits in the server's buffer for the first to
// finish, yet arrived with it, and its record says so. Timed from its handler's start, it
// would have arrived after the first one ended.
func TestArrivalIsWhenTheRequestReachedTheHost(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("receive stamps (rxstamp) are Linux's")
	}
	srv, err := New(Options{Library: constantLibrary(t), TimeScale: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	request := func(session, connection string) string {
		body := openaiBody(directive("one-second", 1, session), true)
		return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: mock\r\nContent-Type: application/json\r\nConnection: %s\r\nContent-Length: %d\r\n\r\n%s",
			PathOpenAI, connection, len(body), body)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, request("first", "keep-alive")+request("second", "close")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, c); err != nil { // both streams, then the server's close
		t.Fatal(err)
	}
	first, second := onlySession(t, srv, "first"), onlySession(t, srv, "second")
	if first.Outcome != mockrecords.OutcomeCompleted || second.Outcome != mockrecords.OutcomeCompleted {
		t.Fatalf("outcomes %s and %s, want both completed", first.Outcome, second.Outcome)
	}
	if !second.Start.Before(first.End) {
		t.Errorf("the pipelined request arrived at +%s, after the first one ended (+%s): timed when its handler ran",
			second.Start.Sub(first.Start), first.End.Sub(first.Start))
	}
}
