package selfbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestBadInputClassesTable: the table holds 20 distinct classes, each with probes for exactly
// the servers it expects a status from, and every expected status is a 4xx.
func TestBadInputClassesTable(t *testing.T) {
	t.Parallel()
	classes := BadInputClasses(BadInputLimits{RuntimeMaxBody: 1024, MockMaxBody: 2048, FinishedRun: "run_ABCDEFGHIJKLMNOPQRST"})
	if len(classes) != 20 {
		t.Errorf("%d classes, want 20", len(classes))
	}
	seen := map[string]bool{}
	for _, c := range classes {
		if seen[c.Name] {
			t.Errorf("class %s twice", c.Name)
		}
		seen[c.Name] = true
		servers := map[BadInputServer]bool{}
		for _, p := range c.Probes {
			servers[p.Server] = true
			if p.Says == "" {
				t.Errorf("%s: a probe says nothing to look for", c.Name)
			}
		}
		for _, s := range []BadInputServer{BadInputRuntime, BadInputMock} {
			want := c.Expected(s)
			switch {
			case want != 0 && (want < 400 || want > 499):
				t.Errorf("%s: %s expects %d, not a 4xx", c.Name, s, want)
			case (want != 0) != servers[s]:
				t.Errorf("%s: %s expects %d but has probes: %v", c.Name, s, want, servers[s])
			}
		}
	}
}

// TestBadInput runs the bench briefly: every class is answered with its 4xx and a JSON error
// naming the problem, by both servers, with no panic, no dropped start and no leak. Not
// parallel: the leak check counts the whole process's goroutines and file descriptors, which
// other tests starting and stopping servers meanwhile would move. The body read timeout is one
// a whole body meets on a busy machine (at 300 ms a deep-nesting body was cut to a 408 under
// load); the stalled-body class, which never sends the rest, waits it out.
func TestBadInput(t *testing.T) {
	figs, err := BadInput(context.Background(), BadInputOptions{Rate: 100, Duration: time.Second, BodyReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := figs.Check(); err != nil {
		t.Errorf("%v\n%s", err, figs.Table())
	}
	if figs.Sent < 75 {
		t.Errorf("sent %d requests in 1 s at 100/s", figs.Sent)
	}
	for _, c := range figs.Classes {
		for _, s := range []BadInputServer{BadInputRuntime, BadInputMock} {
			if want := map[BadInputServer]int{BadInputRuntime: c.Runtime, BadInputMock: c.Mock}[s]; want != 0 && c.Statuses[s][want] == 0 {
				t.Errorf("%s: no %d from the %s (%v)", c.Name, want, s, c.Statuses)
			}
		}
	}
}

// TestBadInputCountsWrongAnswers: against a server that accepts everything with 200, every
// answer is counted wrong and Check fails; against one that refuses with the right status but
// a plain-text body, every answer is a bad error.
func TestBadInputCountsWrongAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		// wrongStatus is whether answers count as wrong status (else as bad errors).
		wrongStatus bool
	}{
		// Accepts everything: a 2xx for invalid input.
		{"accepts all", func(w http.ResponseWriter, r *http.Request) {}, true},
		// Refuses with the status each class mostly expects, but as text/plain.
		{"plain-text errors", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", statusFor(r))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var setUp atomic.Bool
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if setUp.CompareAndSwap(false, true) {
					// The first request is the set-up's compose run: let it finish.
					w.Header().Set("X-Compose-Run-Id", "run_ABCDEFGHIJKLMNOPQRST")
					return
				}
				tc.handler(w, r)
			}))
			defer ts.Close()
			figs, err := badInputRun(context.Background(), BadInputOptions{Rate: 200, Duration: 200 * time.Millisecond, Settle: 10 * time.Millisecond, RequestTimeout: 2 * time.Second},
				map[BadInputServer]string{BadInputRuntime: ts.URL, BadInputMock: ts.URL}, &badInputPanicCounter{})
			if err != nil {
				t.Fatal(err)
			}
			if err := figs.Check(); !errors.Is(err, ErrBadInputWrong) {
				t.Fatalf("Check = %v, want ErrBadInputWrong", err)
			}
			if tc.wrongStatus && figs.WrongStatus == 0 || !tc.wrongStatus && figs.BadError == 0 {
				t.Errorf("wrong status %d, bad error %d:\n%s", figs.WrongStatus, figs.BadError, figs.Table())
			}
		})
	}
}

// statusFor guesses the status a class expects from the request alone, well enough for the
// plain-text server above to answer most probes with the right code.
func statusFor(r *http.Request) int {
	switch {
	case r.Method != http.MethodPost:
		return http.StatusMethodNotAllowed
	case strings.Contains(r.URL.Path, "/stop"):
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// TestBadInputPanicCounter: a handler panic recovered by net/http is counted through the
// server's ErrorLog.
func TestBadInputPanicCounter(t *testing.T) {
	t.Parallel()
	counter := &badInputPanicCounter{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	ts.Config.ErrorLog = slog.NewLogLogger(counter, slog.LevelWarn)
	ts.Start()
	defer ts.Close()
	resp, err := http.Get(ts.URL)
	if err == nil {
		resp.Body.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for counter.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the log line is written after the connection drops
	}
	if counter.count() != 1 {
		t.Errorf("panics = %d, want 1", counter.count())
	}
}

// TestBadInputTable prints the figures of a short run with -v, for eyeballing the table.
func TestBadInputTable(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("prints only with -v")
	}
	figs, err := BadInput(context.Background(), BadInputOptions{Rate: 100, Duration: time.Second, BodyReadTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + figs.Table())
}

// TestBadInputFlagsLeaks: a server that leaves a goroutine behind per request is caught by
// the goroutine count after the settle. Not parallel, as TestBadInput.
func TestBadInputFlagsLeaks(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		go func() { <-release }()
		w.Header().Set("X-Compose-Run-Id", "run_ABCDEFGHIJKLMNOPQRST")
	}))
	defer ts.Close()
	figs, err := badInputRun(context.Background(), BadInputOptions{Rate: 200, Duration: 100 * time.Millisecond, Settle: 200 * time.Millisecond, RequestTimeout: 2 * time.Second},
		map[BadInputServer]string{BadInputRuntime: ts.URL, BadInputMock: ts.URL}, &badInputPanicCounter{})
	if err != nil {
		t.Fatal(err)
	}
	if !figs.Leaked() || !strings.Contains(fmt.Sprint(figs.Check()), "leak: goroutines") {
		t.Errorf("no leak reported: goroutines %d→%d, check %v", figs.GoroutinesBefore, figs.GoroutinesAfter, figs.Check())
	}
}
